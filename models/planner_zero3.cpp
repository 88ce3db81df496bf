// SPDX-License-Identifier: Apache-2.0
// ZeRO-3 plans for the planner (`hetsim plan --zero 3`): the data-parallel shapes of the search,
// fully sharded. ZeRO-3 (Rajbhandari et al. SC'20, section 5.3; PyTorch FSDP) is searched
// without pipeline parallelism, as DeepSpeed and FSDP run it, and its replicas pair their
// per-pass gathers and reduce-scatters, so they run equal micro-batch counts (plan.hpp
// zero3_asymmetry): the search finds the shapes under ZeRO-1 and each one-stage shape whose
// micro-batches divide evenly gets a ZeRO-3 twin, which the predictor then ranks with the rest.
#include <regex>

#include "planner_space.hpp"

namespace hetsim::models::planner {

std::optional<Plan> zero3_twin(const Plan& plan, ShardedCollectives how) {
  const int dp = plan.dp();
  if (dp < 2 || plan.zero == 3) return std::nullopt;
  int micro_batches = 0;
  for (const Replica& r : plan.replicas) {
    if (r.stages.size() != 1) return std::nullopt;
    micro_batches += r.micro_batches;
  }
  if (micro_batches % dp != 0) return std::nullopt;
  Plan twin = plan;
  twin.zero = 3;
  twin.sharded_collectives = how;
  for (Replica& r : twin.replicas) r.micro_batches = micro_batches / dp;
  return twin;
}

std::string with_micro_batches(const std::string& shape, int micro_batches) {
  // The search's notation gives each kind's count as "] m68" or, for copies that differ, "] m31-30".
  static const std::regex counts(R"(\] m[0-9]+(-[0-9]+)?)");
  return std::regex_replace(shape, counts, "] m" + std::to_string(micro_batches));
}

std::vector<int> shape_search_zero_stages(const std::vector<int>& searched) {
  std::vector<int> out;
  for (int z : searched) {
    const int proxy = z == 3 ? 1 : z;  // ZeRO-3 twins come from ZeRO-1 shapes (same layout)
    if (std::find(out.begin(), out.end(), proxy) == out.end()) out.push_back(proxy);
  }
  return out;
}

}  // namespace hetsim::models::planner
