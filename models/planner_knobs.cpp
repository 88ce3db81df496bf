// SPDX-License-Identifier: Apache-2.0
// The values a user may restrict the planner's search to, and why a restricted search space can
// leave nothing to search.
#include <algorithm>
#include <string>

#include "json_writer.hpp"
#include "planner.hpp"
#include "planner_space.hpp"
#include "text_match.hpp"

namespace hetsim::models {

std::string search_value_problem(SearchKnob knob, int value) {
  switch (knob) {
    case SearchKnob::kTpDegrees:
      if (value < 1 || value > 1024) return std::to_string(value) + " is no TP degree (expected 1 to 1024)";
      return "";
    case SearchKnob::kMicroBatches:
      if (value < 1 || value > 65536) return std::to_string(value) + " is no micro-batch size (expected 1 to 65536)";
      return "";
    case SearchKnob::kInterleave:
      if (value < 1 || value > 128)
        return std::to_string(value) + " is no interleave factor (expected 1 to 128; 1 is plain 1F1B)";
      return "";
    case SearchKnob::kZero:
      // PlannerOptions::zero_stages says how each stage is searched, and why ZeRO-2 is not.
      if (value == 0 || value == 1 || value == 3) return "";
      if (value == 2)
        return "the planner does not search ZeRO-2: a rank keeps only its shard of the gradients, so they are "
               "reduced at every micro-batch, which its estimator does not price (predict or simulate such a plan "
               "with its `zero` key; expected 0, 1 or 3)";
      return std::to_string(value) + " is no ZeRO stage the planner searches (expected 0, 1 or 3)";
  }
  return "";
}

std::string search_space_reason(const Cluster& cluster, const Workload& workload, const PlannerOptions& options) {
  const ModelSpec& m = workload.model;
  bool tp_fits = false;
  for (const NodeType& t : cluster.node_types)
    tp_fits = tp_fits || !planner::valid_tp_degrees(m, t.gpus_per_node, options.tp_degrees).empty();
  if (!tp_fits)
    return "no TP degree searched (" + join_numbers(options.tp_degrees) + ") suits the model and the nodes (a TP degree divides the " +
           std::to_string(m.heads) + " heads and a node's GPUs)";
  bool micro_fits = false;
  for (int mb : options.micro_batches) micro_fits = micro_fits || (mb >= 1 && workload.training.global_batch % mb == 0);
  if (!micro_fits)
    return "no micro-batch size searched (" + join_numbers(options.micro_batches) + ") divides the global batch of " +
           std::to_string(workload.training.global_batch);
  bool interleave_fits = false;
  for (int v : options.interleaves) interleave_fits = interleave_fits || (v >= 1 && m.layers % v == 0);
  if (!interleave_fits)
    return "no interleave factor searched (" + join_numbers(options.interleaves) + ") divides the " + std::to_string(m.layers) +
           " layers";
  // Only interleaved schedules searched: a pipeline of p >= 2 stages (at most layers / v of them)
  // whose micro-batch count is a multiple of p (Narayanan et al., SC'21 §2.2.2). Replicas of 2 and
  // of 3 stages make every count from 2 up; of 2 stages only, even counts. A global batch of one
  // micro-batch was reported as "the model does not fit" (s60 hunt).
  const bool plain_searched = std::any_of(options.interleaves.begin(), options.interleaves.end(), [](int v) { return v == 1; });
  if (!plain_searched) {
    bool schedulable = false;
    int most_micro_batches = 0;
    for (int mb : options.micro_batches) {
      if (mb < 1 || workload.training.global_batch % mb != 0) continue;
      const int micro_batches = workload.training.global_batch / mb;
      most_micro_batches = std::max(most_micro_batches, micro_batches);
      for (int v : options.interleaves) {
        if (v < 2 || m.layers % v != 0) continue;
        const int deepest = m.layers / v;
        schedulable = schedulable || (deepest >= 3 && micro_batches >= 2) || (deepest == 2 && micro_batches % 2 == 0);
      }
    }
    if (!schedulable)
      return "the interleaved schedule (interleave " + join_numbers(options.interleaves) +
             " searched) needs pipelines of 2 or more stages, each replica's micro-batch count a multiple of its "
             "stages, and at least one layer a chunk; the global batch of " +
             std::to_string(workload.training.global_batch) + " gives at most " + std::to_string(most_micro_batches) +
             (most_micro_batches == 1 ? " micro-batch" : " micro-batches") + " of the " + std::to_string(m.layers) + " layers (expected a larger global batch, or --interleave 1)";
  }
  return "";
}

void write_search_space_json(JsonOut& j, const PlannerOptions& options) {
  j.begin_object();
  for (const auto& [name, values] :
       {std::pair<const char*, const std::vector<int>*>{"tp_degrees", &options.tp_degrees},
        {"micro_batches", &options.micro_batches}, {"interleave", &options.interleaves}}) {
    j.key(name).begin_array();
    for (int v : *values) j.value(v);
    j.end_array();
  }
  j.key("recompute").begin_array();
  for (Recompute r : options.recomputes) j.value(to_string(r));
  j.end_array();
  j.key("zero").begin_array();
  for (int z : options.zero_stages) j.value(z);
  j.end_array();
  j.key("sequence_parallel").value(options.sequence_parallel);
  j.key("sharded_collectives").value(to_string(options.sharded_collectives));
  j.key("one_vendor").value(options.one_vendor);
  j.end_object();
}

}  // namespace hetsim::models
