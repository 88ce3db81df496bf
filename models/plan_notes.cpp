// SPDX-License-Identifier: Apache-2.0
#include "plan_notes.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>

#include "predictor.hpp"
#include "text_match.hpp"
#include "units.hpp"

namespace hetsim::models {

namespace {

/// The node types of the plan's GPUs whose nodes have fewer NICs than GPUs.
std::set<int> shared_nic_node_types(const Cluster& cluster, const Plan& plan) {
  std::set<int> types;
  for (const Replica& r : plan.replicas)
    for (const Stage& s : r.stages)
      for (int gpu : s.gpus) {
        const int type = cluster.nodes[cluster.node_of_gpu(gpu)].node_type;
        const NodeType& t = cluster.node_types[type];
        if (t.nics.count < t.gpus_per_node) types.insert(type);
      }
  return types;
}

/// Whether some stage's data-parallel copies sit on more than one node: only then do the
/// sharded collectives cross a NIC.
bool data_parallel_groups_span_nodes(const Cluster& cluster, const Plan& plan) {
  for (int s = 0; s < plan.pp(); ++s) {
    std::set<int> nodes;
    for (const Replica& r : plan.replicas)
      if (s < static_cast<int>(r.stages.size()))
        for (int gpu : r.stages[s].gpus) nodes.insert(cluster.node_of_gpu(gpu));
    if (nodes.size() > 1) return true;
  }
  return false;
}

std::string member_nic_note(const Cluster& cluster, const Workload& workload, const Plan& plan,
                            const std::set<int>& types) {
  std::string where;
  for (int type : types) {
    const NodeType& t = cluster.node_types[type];
    if (!where.empty()) where += ", ";
    where += t.name + " (" + std::to_string(t.nics.count) + (t.nics.count == 1 ? " NIC" : " NICs") + " for " +
             std::to_string(t.gpus_per_node) + " GPUs)";
  }
  Plan fsdp = plan;
  fsdp.sharded_collectives = ShardedCollectives::kNodeNics;
  const Report alt = predict(cluster, workload, fsdp);
  std::string note = "ZeRO-" + std::to_string(plan.zero) +
                     "'s gathers and reduce-scatters are priced at each GPU's share of its node's NICs "
                     "(sharded_collectives: member_nic, DeepSpeed's per-layer gathers, checked on nodes of one NIC per "
                     "GPU: SC'21 Table 2); " +
                     where + " share theirs, where that rule was never checked.";
  if (alt.feasible)
    note += " With `sharded_collectives: node_nics` in the plan (PyTorch FSDP's flat gathers over the node's NICs) "
            "the analytic model gives " +
            format_time(alt.iteration_time_s) + " per step (docs/inputs.md).";
  return note;
}

/// The plan's GPU types, by node type index, in the order the plan first uses them.
std::vector<int> plan_node_types(const Cluster& cluster, const Plan& plan) {
  std::vector<int> types;
  for (const Replica& r : plan.replicas)
    for (const Stage& s : r.stages)
      for (int gpu : s.gpus) {
        const int type = cluster.nodes[cluster.node_of_gpu(gpu)].node_type;
        if (std::find(types.begin(), types.end(), type) == types.end()) types.push_back(type);
      }
  return types;
}

std::string default_gemm_note(const Workload& workload, const std::vector<const GpuType*>& gpus) {
  std::set<std::string> names;
  for (const GpuType* gpu : gpus) {
    const GpuType& g = *gpu;
    const Dtype matmul = g.matmul_dtype(workload.training.dtype, workload.training.allow_tf32);
    const bool fp32_figure = matmul == Dtype::kFp32 && g.efficiency.gemm_fp32_efficiency > 0;
    if (!g.efficiency.gemm_given && !fp32_figure && g.vendor != Vendor::kCpu) names.insert(g.name);
  }
  if (names.empty()) return {};
  const std::string list = join_names({names.begin(), names.end()});
  const bool one = names.size() == 1;
  return list + (one ? " has" : " have") + " no `efficiency.gemm` in the catalog or a profile, so " +
         (one ? "its" : "their") +
         " matmuls run at the default 0.80 of the dense peak, an A100-era figure (A100 0.77, H100 0.63, MI300X 0.46 "
         "in the catalog): give " + (one ? "it one" : "each one") +
         " from a MAMF measurement or `hetsim fit` (docs/adding-inputs.md, step 5), or `hetsim calibrate` on the "
         "hardware.";
}

/// GPU types of the plan that run FlashAttention at the A100's ratio to their GEMM rate for want
/// of a figure of their own (EfficiencyModel::flash_given).
std::string default_flash_note(const Workload& workload, const std::vector<const GpuType*>& gpus) {
  if (!workload.training.flash_attention) return {};
  std::set<std::string> names;
  for (const GpuType* gpu : gpus) {
    const GpuType& g = *gpu;
    if (!g.efficiency.flash_given && g.vendor != Vendor::kCpu) names.insert(g.name);
  }
  if (names.empty()) return {};
  const std::string list = join_names({names.begin(), names.end()});
  const bool one = names.size() == 1;
  return list + (one ? " has" : " have") +
         " no `efficiency.flash` in the catalog or a profile, so FlashAttention runs there at the A100's ratio to "
         "the GEMM rate (FlashAttention-2 reaches 73% of A100 peak but 35% of H100 peak: Hopper parts carry 0.59): "
         "give " + (one ? "it one" : "each one") +
         " from a FlashAttention benchmark on the part (docs/adding-inputs.md, step 5), as long sequences lean on it.";
}

}  // namespace

std::vector<std::string> assumed_efficiency_notes(const Cluster& cluster, const Workload& workload,
                                                  const std::vector<const Plan*>& plans) {
  std::vector<int> types;
  for (const Plan* plan : plans)
    for (int type : plan_node_types(cluster, *plan))
      if (std::find(types.begin(), types.end(), type) == types.end()) types.push_back(type);
  std::vector<const GpuType*> gpus;
  for (int type : types) gpus.push_back(&cluster.node_types[type].gpu);
  return assumed_efficiency_notes(gpus, workload);
}

std::vector<std::string> assumed_efficiency_notes(const std::vector<const GpuType*>& gpus, const Workload& workload) {
  std::vector<std::string> notes;
  if (std::string note = default_gemm_note(workload, gpus); !note.empty()) notes.push_back(std::move(note));
  if (std::string note = default_flash_note(workload, gpus); !note.empty()) notes.push_back(std::move(note));
  return notes;
}

const char* const kJoinsVendorsNote =
    "only hetsim's execution engine runs such a plan: NCCL and RCCL build no communicator across vendors, so "
    "Megatron-LM, DeepSpeed and PyTorch FSDP cannot";

bool any_spot_price(const Cluster& cluster) {
  return std::any_of(cluster.node_types.begin(), cluster.node_types.end(),
                     [](const NodeType& t) { return t.spot_price_per_hour.has_value(); });
}

const char* const kNoSpotPriceNote =
    "--spot: no node type of the cluster has a spot_price, so every node is priced on demand and none is "
    "reclaimed (give node types a spot_price and a preemption_rate: docs/inputs.md)";

bool joins_vendors(const Cluster& cluster, const Plan& plan) {
  const auto vendor = [&](int gpu) { return cluster.gpu_type(gpu).vendor; };
  for (const Replica& r : plan.replicas)
    for (size_t s = 0; s + 1 < r.stages.size(); ++s)
      if (vendor(r.stages[s].gpus.front()) != vendor(r.stages[s + 1].gpus.front())) return true;
  for (int s = 0; s < plan.pp(); ++s) {
    std::set<Vendor> vendors;
    for (const Replica& r : plan.replicas)
      if (s < static_cast<int>(r.stages.size()))
        for (int gpu : r.stages[s].gpus) vendors.insert(vendor(gpu));
    if (vendors.size() > 1) return true;
  }
  return false;
}

namespace {

/// Plan settings that change nothing on this plan: the user asked for something the model
/// (and the frameworks it mirrors) does not do here, so the figure is that of the plan without it.
std::string no_op_settings_note(const Plan& plan) {
  std::vector<std::string> idle;
  bool any_tp = false;
  for (const Replica& r : plan.replicas)
    for (const Stage& s : r.stages) any_tp = any_tp || s.tp() > 1;
  // Sequence parallelism splits the TP group's norm and dropout activations along the sequence
  // (Korthikanti et al. 2022, sec. 4.2.2): with no TP group there is nothing to split.
  if (plan.sequence_parallel && !any_tp)
    idle.push_back(std::string("`sequence_parallel`") + (plan.tp_comm_overlap ? " and `tp_comm_overlap`" : "") +
                   " (every stage runs TP 1: there is no TP group to split the sequence over)");
  // Interleaving with one virtual stage per GPU is plain 1F1B (Narayanan et al., SC'21, sec. 2.2).
  if (plan.schedule == Schedule::kInterleaved && plan.interleave == 1)
    idle.push_back("`schedule: interleaved` (interleave is 1: one virtual stage per GPU is plain 1F1B; set "
                   "`interleave` to 2 or more)");
  if (plan.dp() == 1) {
    if (plan.zero > 0)
      idle.push_back("`zero: " + std::to_string(plan.zero) +
                     "` (one data-parallel replica: there is no group to shard the states over)");
    if (plan.overlap_grad_sync)
      idle.push_back("`overlap_grad_sync` (one data-parallel replica: there is no gradient sync to overlap)");
  }
  if (idle.empty()) return {};
  std::string list;
  for (const std::string& i : idle) list += (list.empty() ? "" : "; ") + i;
  return "settings that change nothing on this plan, so the figures are those of the plan without them: " + list +
         ".";
}

}  // namespace

std::optional<LockstepParityFigure> lockstep_parity_worth_noting(const Cluster& cluster, const Workload& workload,
                                                                 const Plan& plan, double predicted_s) {
  std::optional<LockstepParityFigure> lockstep = lockstep_parity_figure(cluster, workload, plan);
  if (!lockstep || !(predicted_s > 0) || lockstep->report.iteration_time_s < kLockstepNoteRatio * predicted_s)
    return std::nullopt;
  return lockstep;
}

std::string lockstep_parity_note(const Cluster& cluster, const Workload& workload, const Plan& plan,
                                 double predicted_s) {
  const std::optional<LockstepParityFigure> lockstep = lockstep_parity_worth_noting(cluster, workload, plan, predicted_s);
  if (!lockstep) return {};
  std::vector<std::string> names;
  for (int n : lockstep->nodes) names.push_back(cluster.node_name(n));
  constexpr std::size_t kNamed = 4;
  std::string where;
  for (std::size_t i = 0; i < names.size() && i < kNamed; ++i) where += (i ? ", " : "") + names[i];
  if (names.size() > kNamed) where += " and " + std::to_string(names.size() - kNamed) + " more";
  char more[32];
  std::snprintf(more, sizeof more, "%+.1f%%", 100.0 * (lockstep->report.iteration_time_s / predicted_s - 1.0));
  const std::string which =
      plan.schedule == Schedule::kInterleaved && plan.interleave > 1
          ? "pipeline sends of several boundaries pass through the NICs of " + where +
                " (the interleaved schedule's chunks cross them in turn); this figure prices each boundary's sends "
                "alone. If they all coincide the step takes "
          : "pipeline sends of boundaries of one parity pass through the NICs of " + where +
                " together in 1F1B's steady state (stages b and b + 2 exchange at once); this figure prices each "
                "boundary's sends alone, as when the schedule staggers them. If they coincide in every slot the step "
                "takes ";
  return which + format_time(lockstep->report.iteration_time_s) + " (" + more +
         "); the step lies between the two, and `hetsim simulate` times their contention (docs/report.md).";
}

std::vector<std::string> plan_notes(const Cluster& cluster, const Workload& workload, const Plan& plan) {
  std::vector<std::string> notes;
  for (std::string& note : assumed_efficiency_notes(cluster, workload, {&plan})) notes.push_back(std::move(note));
  if (joins_vendors(cluster, plan))
    notes.push_back(std::string("the plan exchanges data between NVIDIA and AMD GPUs (pipeline sends or data-parallel "
                                "groups): ") + kJoinsVendorsNote + ".");
  if (plan.zero >= 2 && plan.sharded_collectives == ShardedCollectives::kMemberNic && plan.dp() > 1 &&
      data_parallel_groups_span_nodes(cluster, plan)) {
    const std::set<int> types = shared_nic_node_types(cluster, plan);
    if (!types.empty()) notes.push_back(member_nic_note(cluster, workload, plan, types));
  }
  if (std::string note = no_op_settings_note(plan); !note.empty()) notes.push_back(std::move(note));
  return notes;
}

}  // namespace hetsim::models
