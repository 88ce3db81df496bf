// SPDX-License-Identifier: Apache-2.0
#include "test_clusters.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

namespace hetsim::sim::testing {
namespace {

models::NodeType node_type(const NodeSpec& spec) {
  models::NodeType t;
  t.name = "box";
  t.gpu.name = "test-gpu";
  t.gpus_per_node = spec.gpus;
  t.intra = {models::IntraFabricKind::kNvswitch, spec.intra_Bps, spec.intra_latency_s};
  t.nics.count = spec.nics;
  t.nics.bandwidth_Bps = spec.nic_Bps;
  t.nics.latency_s = spec.nic_latency_s;
  t.host_link_Bps = spec.host_Bps;
  return t;
}

}  // namespace

void derive(models::Cluster& c) {
  c.nodes.clear();
  c.gpus.clear();
  for (int z = 0; z < static_cast<int>(c.zones.size()); ++z)
    for (const auto& g : c.zones[z].groups)
      for (int i = 0; i < g.count; ++i) {
        const int n = static_cast<int>(c.nodes.size());
        c.nodes.push_back({z, g.node_type, i, static_cast<int>(c.gpus.size())});
        for (int l = 0; l < c.node_types[g.node_type].gpus_per_node; ++l) c.gpus.push_back({n, l});
      }
}

models::Cluster one_zone(int nodes, const NodeSpec& spec, double fabric_latency_s, double oversubscription) {
  models::Cluster c;
  c.name = "test";
  c.node_types.push_back(node_type(spec));
  models::Zone z;
  z.name = "z0";
  z.fabric = {models::ZoneFabricKind::kFatTree, oversubscription, fabric_latency_s, 0};
  z.groups.push_back({0, nodes});
  c.zones.push_back(z);
  derive(c);
  return c;
}

models::Cluster two_zones(int nodes_per_zone, const NodeSpec& spec, double wan_Bps, double wan_latency_s) {
  models::Cluster c = one_zone(nodes_per_zone, spec);
  models::Zone z = c.zones[0];
  z.name = "z1";
  c.zones.push_back(z);
  c.links.push_back({0, 1, wan_Bps, wan_latency_s, 0});
  derive(c);
  return c;
}

void make_uniform(const UniformWork& u, models::Plan& plan, models::PlanWork& work) {
  plan = {};
  work = {};
  plan.schedule = u.schedule;
  plan.interleave = u.interleave;
  plan.overlap_grad_sync = u.overlap;
  plan.zero = u.zero;
  plan.replicas.resize(u.dp);
  work.replicas.resize(u.dp);
  auto gpu = [&](int t, int d, int s) { return t + u.tp * (d + u.dp * s); };
  for (int d = 0; d < u.dp; ++d) {
    plan.replicas[d].micro_batches = u.micro_batches;
    for (int s = 0; s < u.pp; ++s) {
      models::Stage st;
      for (int t = 0; t < u.tp; ++t) st.gpus.push_back(gpu(t, d, s));
      plan.replicas[d].stages.push_back(st);
      models::StageWork sw;
      sw.replica = d;
      sw.stage = s;
      sw.gpus = st.gpus;
      auto chunks = std::make_shared<std::vector<models::ChunkWork>>();
      for (int c = 0; c < u.interleave; ++c) {
        models::ChunkWork cw;
        cw.forward.push_back({models::OpKind::kCompute, "fwd", u.t_f / u.interleave, 0});
        cw.backward.push_back({models::OpKind::kCompute, "bwd", u.t_b / u.interleave, 0});
        if (u.tp_ar_bytes > 0) {
          cw.forward.push_back({models::OpKind::kTpAllReduce, "tp_ar", 0, u.tp_ar_bytes});
          cw.backward.push_back({models::OpKind::kTpAllReduce, "tp_ar", 0, u.tp_ar_bytes});
        }
        chunks->push_back(cw);
      }
      sw.chunk_ops = std::move(chunks);
      sw.activation_send_bytes = u.act_bytes;
      sw.grad_sync_bytes = u.grad_bytes;
      sw.optimizer_s = u.optimizer_s;
      work.replicas[d].push_back(sw);
    }
  }
  if (u.dp > 1 && u.grad_bytes > 0)
    for (int s = 0; s < u.pp; ++s)
      for (int t = 0; t < u.tp; ++t) {
        models::DpGroup g;
        for (int d = 0; d < u.dp; ++d) g.gpus.push_back(gpu(t, d, s));
        g.size_bytes = u.grad_bytes;
        g.stage = s;
        g.gather_bytes = u.zero >= 1 ? u.grad_bytes : 0;
        g.buckets = u.overlap ? u.grad_buckets : 1;
        work.dp_groups.push_back(g);
      }
}

double in_child(const std::function<double()>& fn) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    double v = -1;
    try {
      v = fn();
    } catch (...) {
    }
    if (write(fds[1], &v, sizeof v) != static_cast<ssize_t>(sizeof v)) _exit(1);
    _exit(0);
  }
  close(fds[1]);
  double v = -1;
  if (read(fds[0], &v, sizeof v) != static_cast<ssize_t>(sizeof v)) v = -1;
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return v;
}

}  // namespace hetsim::sim::testing
