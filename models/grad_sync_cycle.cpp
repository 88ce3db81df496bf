// SPDX-License-Identifier: Apache-2.0
// The gradient sync of an overlapped ZeRO-1/2 step as its steady-state cycle, which starts with
// the weights' all-gather of the last update (step_cost.hpp gathers_lead_the_step), around the
// sync's pricing (grad_sync_cost.cpp).
#include <algorithm>
#include <vector>

#include "grad_sync_parts.hpp"
#include "step_cost.hpp"  // declares what this file defines

namespace hetsim::models {

using grad_sync_detail::grad_sync_pass_s;

bool gathers_lead_the_step(const Plan& plan) {
  return plan.overlap_grad_sync && (plan.zero == 1 || plan.zero == 2) && plan.dp() > 1 &&
         !(plan.schedule == Schedule::kInterleaved && plan.interleave > 1);
}

std::vector<double> replica_gather_delay_s(const StepInput& in, const std::vector<double>& gather_of_slot) {
  const int dp = in.plan.dp();
  std::vector<double> delay_s(static_cast<std::size_t>(dp), 0.0);
  for (int r = 0; r < dp; ++r) {
    if (in.copy_of && (*in.copy_of)[r] >= 0) {
      delay_s[r] = delay_s[(*in.copy_of)[r]];  // copies come after their base
      continue;
    }
    double before_s = 0;  // the stage's first forward starts once the stages before it have run theirs
    const int pp = static_cast<int>(in.plan.replicas[r].stages.size());
    for (int s = 0; s < pp; ++s) {
      const std::size_t slot = static_cast<std::size_t>(r) * in.max_pp + s;
      before_s += in.times[slot].forward_s;
      delay_s[r] = std::max(delay_s[r], gather_of_slot[slot] - before_s);
    }
  }
  return delay_s;
}

double grad_sync_exposed_s(const StepInput& in, PlanWork* work, GradSyncEnds* ends, int* paced_replica) {
  if (!gathers_lead_the_step(in.plan)) return grad_sync_pass_s(in, work, ends, nullptr);
  // The steady-state cycle of an overlapped ZeRO-1/2 step (Megatron-Core overlap_param_gather):
  // the weights' all-gather of the last update starts the step, every member at once, and each
  // stage's first forward runs beside it, ending no earlier than it does (bucket by bucket, the
  // forward waits for each bucket's weights). A replica whose first forwards cannot hide its
  // gathers starts that much later (replica_gather_delay_s), and so do the gradients its last
  // backward hands to each bucket: the reductions wait for the latest member as shifted. Priced
  // as one step after the gather (the 4090 x A100 what-if of docs/cost_model.md: the earlier
  // figure, the gather exposed beyond the slowest replica's slack, let the faster replicas'
  // buckets start the reduction before their own gathers had ended).
  const std::size_t slots = static_cast<std::size_t>(in.plan.dp()) * in.max_pp;
  std::vector<double> gather_of_slot(slots, 0.0);
  const std::size_t groups_before = work ? work->dp_groups.size() : 0;
  double exposed_s = grad_sync_pass_s(in, work, ends, &gather_of_slot);
  const std::vector<double> delay_s = replica_gather_delay_s(in, gather_of_slot);
  if (*std::max_element(delay_s.begin(), delay_s.end()) <= 0) return exposed_s;
  std::vector<double> shifted_time_s(in.replica_time_s);
  int slowest = in.slowest_replica;
  for (std::size_t r = 0; r < shifted_time_s.size(); ++r) {
    shifted_time_s[r] += delay_s[r];
    if (shifted_time_s[r] > shifted_time_s[static_cast<std::size_t>(slowest)]) slowest = static_cast<int>(r);
  }
  const StepInput shifted{in.cluster,    in.workload,     in.plan,      in.max_pp,   in.shape_of,
                          in.costs,      in.times,        shifted_time_s, in.tp_in_one_node, in.front_gpu,
                          slowest,       in.used_on_node, in.copy_of,   in.front_node};
  if (work) work->dp_groups.erase(work->dp_groups.begin() + static_cast<std::ptrdiff_t>(groups_before), work->dp_groups.end());
  const double later_s = shifted_time_s[static_cast<std::size_t>(slowest)] - in.replica_time_s[in.slowest_replica];
  if (paced_replica && slowest != in.slowest_replica) *paced_replica = slowest;
  std::fill(gather_of_slot.begin(), gather_of_slot.end(), 0.0);
  exposed_s = grad_sync_pass_s(shifted, work, ends, &gather_of_slot);
  if (ends)
    for (double& end_s : ends->reduce_end_s) end_s += later_s;  // from the unshifted slowest end
  return later_s + exposed_s;
}

}  // namespace hetsim::models
