// SPDX-License-Identifier: Apache-2.0
// Data-parallel segments of a plan (dp_segments.hpp).
#include "dp_segments.hpp"

#include <algorithm>

#include "stage_cost.hpp"
#include "topology.hpp"

namespace hetsim::models {

std::vector<PartPlace> place_model_parts(const Replica& replica, int interleave, int layers) {
  const int pp = static_cast<int>(replica.stages.size());
  const int v = std::max(1, interleave);
  std::vector<PartPlace> out(static_cast<std::size_t>(layers) + 2, PartPlace{pp - 1, v - 1});
  out[0] = {0, 0};
  int next = 1;
  for (int c = 0; c < v; ++c)
    for (int s = 0; s < pp; ++s) {
      const int l = replica.stages[s].layers;
      const int chunk_layers = l / v + (c < l % v ? 1 : 0);
      for (int i = 0; i < chunk_layers && next <= layers; ++i) out[next++] = {s, c};
    }
  return out;
}

DpSegments::DpSegments(const Plan& plan, const ModelSpec& model, const int* copy_of) : plan_(&plan) {
  replicas_ = plan.dp();
  int max_pp = 0;
  for (const Replica& r : plan.replicas) max_pp = std::max(max_pp, static_cast<int>(r.stages.size()));
  const Replica* first = replicas_ > 0 ? &plan.replicas[0] : nullptr;
  for (int r = 1; r < replicas_ && aligned_; ++r) {
    if (copy_of && copy_of[r] >= 0) continue;
    const Replica& rep = plan.replicas[r];
    aligned_ = rep.stages.size() == first->stages.size();
    for (std::size_t s = 0; s < rep.stages.size() && aligned_; ++s)
      aligned_ = rep.stages[s].layers == first->stages[s].layers;
  }
  if (aligned_) {
    count_ = max_pp;
    return;
  }
  // Parts with the same stage on every replica form one segment (with interleaving a stage's
  // chunks are not contiguous, so equal tuples are merged, not only neighbours).
  const int parts = model.layers + 2;
  std::vector<std::vector<PartPlace>> place_of_part;
  place_of_part.reserve(replicas_);
  for (const Replica& r : plan.replicas) place_of_part.push_back(place_model_parts(r, plan.interleave, model.layers));
  std::vector<int> tuple(replicas_);
  for (int p = 0; p < parts; ++p) {
    for (int r = 0; r < replicas_; ++r) tuple[r] = place_of_part[r][p].stage;
    int k = 0;
    for (; k < count_; ++k)
      if (std::equal(tuple.begin(), tuple.end(), stage_.begin() + static_cast<std::ptrdiff_t>(k) * replicas_)) break;
    if (k == count_) {
      stage_.insert(stage_.end(), tuple.begin(), tuple.end());
      parts_.emplace_back();
      ++count_;
    }
    Parts& seg = parts_[k];
    if (p == 0) seg.embedding = true;
    else if (p == parts - 1) seg.head = true;
    else ++seg.layers;
  }
}

double DpSegments::params(int k, int replica, const ModelSpec& model, bool whole_vocab) const {
  const Parts& seg = parts_[k];
  const Replica& rep = plan_->replicas[replica];
  const Stage& st = rep.stages[stage_of(k, replica)];
  return stage_params(model, seg.layers, st.tp(), seg.embedding, seg.head, static_cast<int>(rep.stages.size()),
                      whole_vocab);
}

DpSegments::Window DpSegments::backward_window(int k, int replica, const ModelSpec& model) const {
  if (aligned_ || plan_->interleave > 1) return {};
  // Segments are numbered in the order of their parts (embedding, blocks, head), so the stage's
  // segments above k are those of a higher index; its backward produces them before k's: k's
  // window starts where theirs end (as fractions of the pass elapsed).
  const int s = stage_of(k, replica);
  double later = 0, earlier = 0, total = 0;  // exact 0 and 1 at the pass's ends (the simulator's at_end)
  for (int j = 0; j < count_; ++j) {
    if (stage_of(j, replica) != s) continue;
    const double p = params(j, replica, model);
    total += p;
    if (j > k) later += p;
    if (j < k) earlier += p;
  }
  if (total <= 0) return {};
  return {later / total, 1 - earlier / total};
}

void dp_nic_channels(const Plan& plan, const Cluster& cluster, const DpSegments& segments, DpNicChannels& out) {
  out.per_gpu.assign(cluster.gpus.size(), 0);
  std::vector<int> in_segment(cluster.gpus.size(), 0);
  std::vector<int> members, touched;  // touched: a segment's GPUs in a group that crosses nodes
  const int dp = plan.dp();
  for (int k = 0; k < segments.count(); ++k) {
    GroupShard shard;  // only its cut into shards is used here (no parameter counts)
    for (int r = 0; r < dp; ++r)
      if (const int s = segments.stage_of(k, r); s >= 0) shard.add(plan.replicas[r].stages[s].tp(), 0.0);
    touched.clear();
    for (int j = 0; j < shard.shards; ++j) {
      members.clear();
      bool spans = false;
      for (int r = 0; r < dp; ++r)
        if (const int s = segments.stage_of(k, r); s >= 0) {
          const Stage& st = plan.replicas[r].stages[s];
          const int g = st.gpus[shard.member_rank(j, st.tp())];
          spans = spans || (!members.empty() && cluster.gpus[g].node != cluster.gpus[members.front()].node);
          members.push_back(g);
        }
      if (spans)
        for (int g : members)
          if (in_segment[g]++ == 0) touched.push_back(g);
    }
    // Segments run one after the other: a GPU counts its most groups in any of them.
    for (int g : touched) {
      out.per_gpu[g] = std::max(out.per_gpu[g], in_segment[g]);
      in_segment[g] = 0;
    }
  }
  node_senders_of(cluster, out.per_gpu, out.per_node, &out.on_rail_of_gpu);
}

bool stages_in_several_groups(const Plan& plan, bool aligned, const int* copy_of) {
  bool shared_gpus = !aligned;
  for (int r = 1; r < plan.dp() && !shared_gpus; ++r)
    for (std::size_t st = 0; (!copy_of || copy_of[r] < 0) && st < plan.replicas[r].stages.size() && !shared_gpus; ++st)
      shared_gpus = plan.replicas[r].stages[st].tp() != plan.replicas[0].stages[st].tp();
  return shared_gpus;
}

void add_wan_crossings(const Cluster& cluster, const int* members, int n, double weight, std::vector<double>& directed) {
  const int zones = static_cast<int>(cluster.zones.size());
  if (zones < 2 || n < 2) return;
  directed.resize(static_cast<std::size_t>(zones) * zones, 0.0);
  for (int i = 0; i < n; ++i) {
    const int na = cluster.gpus[members[i]].node, nb = cluster.gpus[members[(i + 1) % n]].node;
    const int za = cluster.nodes[na].zone, zb = cluster.nodes[nb].zone;
    if (za == zb) continue;
    int on_node = 0;  // the crossing carries the group's members on the node before it
    for (int k = 0; k < n; ++k) on_node += cluster.gpus[members[k]].node == na ? 1 : 0;
    directed[za * zones + zb] += weight * on_node;
  }
}

void wan_load_of(const Cluster& cluster, const std::vector<double>& directed, std::vector<double>& out) {
  out.clear();
  const int zones = static_cast<int>(cluster.zones.size());
  if (zones < 2) return;
  // A link's two directions carry the rings' crossings each way; the busier one sets the share.
  out.assign(static_cast<std::size_t>(zones) * zones, 0.0);
  if (directed.empty()) return;
  for (int a = 0; a < zones; ++a)
    for (int b = a + 1; b < zones; ++b)
      out[zone_pair_index(cluster, a, b)] = std::max(directed[a * zones + b], directed[b * zones + a]);
}

void wan_senders_for(const std::vector<double>& load, double weight, std::vector<double>& out) {
  out.assign(load.size(), 0.0);
  for (std::size_t i = 0; i < load.size(); ++i)
    if (load[i] > 0 && weight > 0) out[i] = std::max(1.0, load[i] / weight);
}

}  // namespace hetsim::models
