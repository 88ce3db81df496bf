// SPDX-License-Identifier: Apache-2.0
// Plan helpers: the Megatron-style uniform plan and the structural cross-checks.
#include "plan.hpp"

#include <algorithm>
#include <numeric>

#include "cluster.hpp"
#include "topology.hpp"
#include "workload.hpp"

namespace hetsim::models {

const char* to_string(Schedule s) {
  switch (s) {
    case Schedule::kGpipe: return "gpipe";
    case Schedule::k1f1b: return "1f1b";
    case Schedule::kInterleaved: return "interleaved";
  }
  return "?";
}

std::optional<Recompute> recompute_named(std::string_view name) {
  for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull})
    if (name == to_string(r)) return r;
  return std::nullopt;
}

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::kNone: return "none";
    case Recompute::kSelective: return "selective";
    case Recompute::kFull: return "full";
  }
  return "?";
}

const char* to_string(GradSyncAlgorithm a) {
  switch (a) {
    case GradSyncAlgorithm::kAuto: return "auto";
    case GradSyncAlgorithm::kRing: return "ring";
    case GradSyncAlgorithm::kTree: return "tree";
    case GradSyncAlgorithm::kHierarchical: return "hierarchical";
  }
  return "?";
}

const char* to_string(ShardedCollectives c) {
  switch (c) {
    case ShardedCollectives::kMemberNic: return "member_nic";
    case ShardedCollectives::kNodeNics: return "node_nics";
  }
  return "?";
}

std::optional<ShardedCollectives> sharded_collectives_named(std::string_view name) {
  for (ShardedCollectives c : {ShardedCollectives::kMemberNic, ShardedCollectives::kNodeNics})
    if (name == to_string(c)) return c;
  return std::nullopt;
}

int Plan::gpu_count() const {
  int n = 0;
  for (const Replica& r : replicas) {
    for (const Stage& s : r.stages) n += s.tp();
  }
  return n;
}

long long Plan::global_batch() const {
  long long m = 0;  // inputs allow 2^24 per replica and per micro-batch: no int product
  for (const Replica& r : replicas) m += r.micro_batches;
  return m * micro_batch;
}

std::vector<NodeSenders> cross_node_tp_senders(const Plan& plan, const Cluster& cluster) {
  std::vector<int> per_gpu(cluster.gpus.size(), 0);
  for (const Replica& rep : plan.replicas)
    for (const Stage& st : rep.stages) {
      const int node = cluster.gpus[st.gpus.front()].node;
      bool spans = false;
      for (int g : st.gpus) spans = spans || cluster.gpus[g].node != node;
      if (spans)
        for (int g : st.gpus) ++per_gpu[g];
    }
  std::vector<NodeSenders> senders;
  node_senders_of(cluster, per_gpu, senders);
  return senders;
}

std::string zero3_asymmetry(const Plan& plan) {
  if (plan.zero < 2 || plan.replicas.empty()) return "";
  // ZeRO-2 reduces in the passes of every micro-batch but the last (comm_cost.hpp pass_traffic):
  // with one micro-batch per replica its only reduction is the end-of-step one, which any plan can run.
  const bool one_micro_batch_each = std::all_of(plan.replicas.begin(), plan.replicas.end(),
                                                [](const Replica& r) { return r.micro_batches <= 1; });
  if (plan.zero == 2 && one_micro_batch_each) return "";
  const Replica& first = plan.replicas[0];
  for (std::size_t r = 1; r < plan.replicas.size(); ++r) {
    const Replica& rep = plan.replicas[r];
    const std::string where =
        "replicas[" + std::to_string(r) + "]: ZeRO-" + std::to_string(plan.zero) + " needs every replica to run ";
    const std::string why = plan.zero >= 3 ? ": its per-pass gathers and reduce-scatters pair up across replicas"
                                           : ": its per-micro-batch reduce-scatters pair up across replicas";
    if (rep.micro_batches != first.micro_batches) {
      return where + "the same number of micro-batches (" + std::to_string(rep.micro_batches) + " here, " +
             std::to_string(first.micro_batches) + " on replicas[0])" + why;
    }
    bool same = rep.stages.size() == first.stages.size();
    for (std::size_t s = 0; same && s < rep.stages.size(); ++s) same = rep.stages[s].layers == first.stages[s].layers;
    if (!same) return where + "the same stages (layers per stage) as replicas[0]" + why;
  }
  return "";
}

std::variant<Plan, Infeasible> make_uniform_plan(const Cluster& cluster, const Workload& workload, int tp, int pp,
                                                 int dp, const UniformPlanOptions& o) {
  const ModelSpec& m = workload.model;
  const auto why = [](std::string s) { return Infeasible{std::move(s)}; };
  if (tp < 1 || pp < 1 || dp < 1 || o.micro_batch < 1) return why("tp, pp, dp and micro must be >= 1");
  const long needed = static_cast<long>(tp) * pp * dp;
  if (o.first_gpu + needed > cluster.gpu_count()) {
    return why("tp*pp*dp (" + std::to_string(needed) + ") exceeds the cluster's " +
               std::to_string(cluster.gpu_count() - o.first_gpu) + " GPUs");
  }
  if (m.layers < pp) {
    return why("pp (" + std::to_string(pp) + ") exceeds model.layers (" + std::to_string(m.layers) + ")");
  }
  const int interleave = o.schedule == Schedule::kInterleaved ? o.interleave : 1;
  const long chunks = static_cast<long>(pp) * interleave;  // in long: 4 x 2^30 wraps an int to 0
  if (interleave > 1 && m.layers % chunks != 0) {
    return why("model.layers (" + std::to_string(m.layers) + ") is not divisible by pp*interleave (" +
               std::to_string(chunks) + ")");
  }
  const long per_step = static_cast<long>(dp) * o.micro_batch;
  if (workload.training.global_batch % per_step != 0) {
    return why("training.global_batch (" + std::to_string(workload.training.global_batch) +
               ") is not divisible by dp*micro (" + std::to_string(per_step) + ")");
  }
  Plan plan;
  plan.name = "tp" + std::to_string(tp) + "-pp" + std::to_string(pp) + "-dp" + std::to_string(dp);
  plan.micro_batch = o.micro_batch;
  plan.schedule = o.schedule;
  plan.interleave = interleave;
  plan.recompute = o.recompute;
  plan.sequence_parallel = o.sequence_parallel;
  plan.tp_comm_overlap = o.tp_comm_overlap;
  plan.overlap_p2p_comm = o.overlap_p2p_comm;
  plan.zero = o.zero;
  plan.overlap_grad_sync = o.overlap_grad_sync;
  plan.sharded_collectives = o.sharded_collectives;
  const int micro_batches = static_cast<int>(workload.training.global_batch / per_step);
  for (int d = 0; d < dp; ++d) {
    Replica r;
    r.micro_batches = micro_batches;
    for (int s = 0; s < pp; ++s) {
      Stage st;
      st.layers = m.layers / pp + (s < m.layers % pp ? 1 : 0);  // first (layers mod pp) stages take one more
      const int base = o.first_gpu + tp * (d + dp * s);           // Megatron order: TP, then DP, then PP
      for (int t = 0; t < tp; ++t) st.gpus.push_back(base + t);
      r.stages.push_back(std::move(st));
    }
    plan.replicas.push_back(std::move(r));
  }
  auto problems = check_plan(plan, cluster, workload);
  if (!problems.empty()) return why(problems.front());
  return plan;
}

std::vector<FlagConflict> flag_conflicts(const Plan& plan) {
  std::vector<FlagConflict> out;
  if (plan.interleave > 1 && plan.schedule != Schedule::kInterleaved)
    out.push_back({"interleave", "interleave " + std::to_string(plan.interleave) +
                                     " needs schedule 'interleaved' (expected interleave: 1 with schedule '" +
                                     to_string(plan.schedule) + "')"});
  // Interleaving over one chunk is plain 1F1B: accepted, the plan was priced as a schedule it
  // did not name (s52 bad-input hunt).
  if (plan.interleave == 1 && plan.schedule == Schedule::kInterleaved)
    out.push_back({"schedule", "schedule 'interleaved' with interleave 1 is plain 1F1B (expected interleave: 2 or more, "
                               "or schedule: 1f1b)"});
  if (plan.tp_comm_overlap && !plan.sequence_parallel)
    out.push_back({"tp_comm_overlap",
                   "tp_comm_overlap runs the sequence-parallel all-gathers and reduce-scatters beside the GEMMs "
                   "(expected sequence_parallel: true, or tp_comm_overlap: false)"});
  if (plan.overlap_p2p_comm && plan.schedule != Schedule::kInterleaved)
    out.push_back({"overlap_p2p_comm",
                   "overlapped pipeline sends need the interleaved schedule, as in Megatron-Core (expected schedule: "
                   "interleaved with interleave 2 or more, or overlap_p2p_comm: false)"});
  else if (plan.overlap_p2p_comm && plan.interleave < 2)
    out.push_back({"overlap_p2p_comm", "overlapped pipeline sends need 2 or more chunks per stage, as in Megatron-Core "
                                       "(expected interleave: 2 or more, or overlap_p2p_comm: false)"});
  return out;
}

std::vector<std::string> check_plan(const Plan& plan, const Cluster& cluster, const Workload& workload) {
  std::vector<std::string> out;
  const ModelSpec& m = workload.model;
  // Which workload the sums were checked against: a plan header naming another one gave
  // "expected model.layers = 32" without a name to look for (s67 walkthrough).
  const std::string of_workload = workload.name.empty() ? std::string() : " of workload " + workload.name;
  if (plan.micro_batch < 1) out.push_back("micro_batch: must be >= 1 (got " + std::to_string(plan.micro_batch) + ")");
  if (plan.zero < 0 || plan.zero > 3) out.push_back("zero: must be 0-3 (got " + std::to_string(plan.zero) + ")");
  if (plan.interleave < 1) out.push_back("interleave: must be >= 1");
  for (const FlagConflict& c : flag_conflicts(plan)) out.push_back(c.field + ": " + c.message);
  if (plan.interleave > 1 && plan.pp() < 2)
    out.push_back("interleave: " + std::to_string(plan.interleave) +
                  " splits each stage into chunks of a pipeline (expected 2 or more stages, or interleave: 1)");
  if (plan.replicas.empty()) out.push_back("replicas: at least one replica is required");
  // GPU -> the (replica, stage) that used it first: a table, not a map of path strings (the
  // planner checks every candidate; a 16,384-GPU plan's map was a tenth of its search).
  std::vector<std::pair<int, int>> used_by(static_cast<std::size_t>(std::max(0, cluster.gpu_count())), {-1, -1});
  for (size_t r = 0; r < plan.replicas.size(); ++r) {
    const Replica& rep = plan.replicas[r];
    // Paths are built only for a message (the planner checks every candidate plan).
    const auto rp = [r] { return "replicas[" + std::to_string(r) + "]"; };
    if (rep.micro_batches < 1) out.push_back(rp() + ".micro_batches: must be >= 1");
    // Megatron-LM's interleaved schedule (schedules.py, forward_backward_pipelining_with_
    // interleaving) runs micro-batches in groups of the pipeline depth and rejects a count that
    // is no multiple of it; pipeline_time()'s interleaved form assumes the same.
    const int depth = static_cast<int>(rep.stages.size());
    if (plan.interleave > 1 && depth == 1 && r > 0 && plan.pp() >= 2)  // replica 0's is said above
      out.push_back(rp() + ".stages: one stage, but interleave " + std::to_string(plan.interleave) +
                    " splits each stage into chunks of a pipeline (expected 2 or more stages, or interleave: 1)");
    if (plan.interleave > 1 && depth > 1 && rep.micro_batches >= 1 && rep.micro_batches % depth != 0)
      out.push_back(rp() + ".micro_batches: " + std::to_string(rep.micro_batches) + " is no multiple of the " +
                    std::to_string(depth) + " stages, which the interleaved schedule needs (expected a multiple of " +
                    std::to_string(depth) + ", or interleave: 1)");
    if (rep.stages.empty()) out.push_back(rp() + ".stages: at least one stage is required");
    int layers = 0;
    for (size_t s = 0; s < rep.stages.size(); ++s) {
      const Stage& st = rep.stages[s];
      const auto sp = [&rp, s] { return rp() + ".stages[" + std::to_string(s) + "]"; };
      layers += st.layers;
      if (st.layers < 1) out.push_back(sp() + ".layers: must be >= 1 (got " + std::to_string(st.layers) + ")");
      if (plan.interleave > 1 && st.layers % plan.interleave != 0) {
        out.push_back(sp() + ".layers: " + std::to_string(st.layers) + " is not divisible by interleave (" +
                      std::to_string(plan.interleave) + ") (expected a multiple of it: each chunk holds layers / interleave)");
      }
      if (st.gpus.empty()) {
        out.push_back(sp() + ".gpus: no GPUs");
        continue;
      }
      const int tp = st.tp();
      if (m.heads % tp != 0) {
        out.push_back(sp() + ".gpus: tp " + std::to_string(tp) + " does not divide model.heads (" +
                      std::to_string(m.heads) + ") (expected a number of GPUs that divides it)");
      } else if (m.kv_heads % tp != 0 && tp % m.kv_heads != 0) {
        out.push_back(sp() + ".gpus: tp " + std::to_string(tp) + " and model.kv_heads (" + std::to_string(m.kv_heads) +
                      ") do not divide one another (expected a number of GPUs that divides it or is a multiple of it)");
      }
      // Megatron-LM's sequence parallelism scatters the sequence over the TP group and asserts
      // that it divides (mappings.py _split_along_first_dim).
      if (plan.sequence_parallel && m.seq_len % tp != 0) {
        out.push_back(sp() + ".gpus: tp " + std::to_string(tp) + " does not divide model.seq_len (" +
                      std::to_string(m.seq_len) +
                      "), which sequence parallelism splits over the TP group (expected a number of GPUs that "
                      "divides it, or sequence_parallel: false)");
      }
      if (m.ffn_hidden % tp != 0) {
        out.push_back(sp() + ".gpus: tp " + std::to_string(tp) + " does not divide model.ffn_hidden (" +
                      std::to_string(m.ffn_hidden) + ") (expected a number of GPUs that divides it)");
      }
      for (int g : st.gpus) {
        if (g < 0 || g >= cluster.gpu_count()) {
          out.push_back(sp() + ".gpus: GPU " + std::to_string(g) + " out of range (cluster has " +
                        std::to_string(cluster.gpu_count()) + " GPUs)");
        } else if (std::pair<int, int>& first = used_by[static_cast<std::size_t>(g)]; first.first >= 0) {
          const bool same_stage = first == std::pair<int, int>(static_cast<int>(r), static_cast<int>(s));
          const std::string first_path =
              "replicas[" + std::to_string(first.first) + "].stages[" + std::to_string(first.second) + "]";
          out.push_back(sp() + ".gpus: GPU " + std::to_string(g) + " is used more than once" +
                        (same_stage ? std::string(" in this stage") : " (also by " + first_path + ")") +
                        " (expected each GPU in one stage of one replica)");
        } else {
          first = {static_cast<int>(r), static_cast<int>(s)};
        }
      }
    }
    if (!rep.stages.empty() && layers != m.layers) {
      out.push_back(rp() + ".stages: layers sum to " + std::to_string(layers) + " (expected model.layers = " +
                    std::to_string(m.layers) + of_workload + ")");
    }
  }
  if (!plan.replicas.empty() && plan.micro_batch >= 1 && plan.global_batch() != workload.training.global_batch) {
    out.push_back("replicas: micro_batch x sum of micro_batches = " + std::to_string(plan.global_batch()) +
                  " (expected training.global_batch = " + std::to_string(workload.training.global_batch) + of_workload + ")");
  }
  return out;
}


}  // namespace hetsim::models
