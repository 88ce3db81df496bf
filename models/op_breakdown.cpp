// SPDX-License-Identifier: Apache-2.0
// The cost model's ops of each distinct stage of a plan, per micro-batch (op_breakdown.hpp).
#include "op_breakdown.hpp"

#include <algorithm>
#include <string>

#include "plan_writer.hpp"

namespace hetsim::models {

namespace {

/// The line an op belongs to: its forward name ("qkv_bwd" -> "qkv").
std::string base_name(const std::string& name) {
  static const std::string kSuffix = "_bwd";
  if (name.size() > kSuffix.size() && name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0)
    return name.substr(0, name.size() - kSuffix.size());
  return name;
}

OpTime& line_of(std::vector<OpTime>& lines, const Op& op) {
  const std::string name = base_name(op.name);
  for (OpTime& l : lines)
    if (l.name == name && l.kind == to_string(op.kind)) return l;
  OpTime& l = lines.emplace_back();
  l.name = name;
  l.kind = to_string(op.kind);
  return l;
}

void add(std::vector<OpTime>& lines, const std::vector<Op>& ops, bool backward_pass) {
  for (const Op& op : ops) {
    OpTime& l = line_of(lines, op);
    if (!backward_pass) l.forward_s += op.duration_s;
    else if (op.recompute) l.recompute_s += op.duration_s;
    else l.backward_s += op.duration_s;
    l.flop += op.flop;
    l.kernels += op.kernels;
    l.size_bytes += op.size_bytes;
    l.overlapped = l.overlapped || op.overlapped;
  }
}

bool same_ops(const StageOps& a, const StageOps& b) {
  if (a.gpu_type != b.gpu_type || a.layers != b.layers || a.tp != b.tp || a.forward_s != b.forward_s ||
      a.backward_s != b.backward_s || a.send_forward_s != b.send_forward_s ||
      a.send_backward_s != b.send_backward_s || a.ops.size() != b.ops.size())
    return false;
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    const OpTime &x = a.ops[i], &y = b.ops[i];
    if (x.name != y.name || x.kind != y.kind || x.forward_s != y.forward_s || x.recompute_s != y.recompute_s ||
        x.backward_s != y.backward_s)
      return false;
  }
  return true;
}

}  // namespace

std::string stage_set_label(std::vector<std::pair<int, int>> members) {
  std::sort(members.begin(), members.end());
  members.erase(std::unique(members.begin(), members.end()), members.end());
  std::vector<int> replicas, stages;
  for (const auto& [r, s] : members) {
    replicas.push_back(r);
    stages.push_back(s);
  }
  for (std::vector<int>* v : {&replicas, &stages}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  if (members.size() == replicas.size() * stages.size())  // every stage of S on every replica of R
    return (replicas.size() > 1 ? "replicas " : "replica ") + index_ranges(replicas, ", ") +
           (stages.size() > 1 ? ", stages " : ", stage ") + index_ranges(stages, ", ");
  constexpr std::size_t kShown = 3;
  std::string out;
  for (std::size_t i = 0; i < members.size() && i < kShown; ++i)
    out += (i ? ", " : "") + std::string("replica ") + std::to_string(members[i].first) + " stage " +
           std::to_string(members[i].second);
  if (members.size() > kShown) out += ", +" + std::to_string(members.size() - kShown) + " more";
  return out;
}

std::vector<StageOps> op_breakdown(const Cluster& cluster, const Plan& plan, const PlanWork& work) {
  std::vector<StageOps> groups;
  std::vector<std::vector<std::pair<int, int>>> members;
  for (const std::vector<StageWork>& replica : work.replicas)
    for (const StageWork& sw : replica) {
      StageOps s;
      s.gpu_type = cluster.gpu_types_label(sw.gpus);
      s.layers = plan.replicas[sw.replica].stages[sw.stage].layers;
      s.tp = static_cast<int>(sw.gpus.size());
      s.forward_s = sw.forward_s;
      s.backward_s = sw.backward_s;
      const double chunks = static_cast<double>(sw.chunks().size());  // p2p_*_s are per chunk pass
      s.send_forward_s = sw.p2p_forward_s * chunks;
      s.send_backward_s = sw.p2p_backward_s * chunks;
      for (const ChunkWork& chunk : sw.chunks()) {
        add(s.ops, chunk.forward, false);
        add(s.ops, chunk.backward, true);
      }
      // Longest first; ties (and zero-time ops) keep the layer's order.
      std::stable_sort(s.ops.begin(), s.ops.end(),
                       [](const OpTime& a, const OpTime& b) { return a.total_s() > b.total_s(); });
      std::size_t k = 0;
      while (k < groups.size() && !same_ops(groups[k], s)) ++k;
      if (k == groups.size()) {
        groups.push_back(std::move(s));
        members.emplace_back();
      }
      members[k].emplace_back(sw.replica, sw.stage);
    }
  for (std::size_t k = 0; k < groups.size(); ++k) {
    groups[k].stage_count = static_cast<int>(members[k].size());
    groups[k].stages = stage_set_label(members[k]);
  }
  return groups;
}

}  // namespace hetsim::models
