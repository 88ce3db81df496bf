// SPDX-License-Identifier: Apache-2.0
// The values a user may restrict the planner's search to, and why a restricted search space can
// leave nothing to search.
#include <string>

#include "json_writer.hpp"
#include "planner.hpp"
#include "planner_space.hpp"

namespace hetsim::models {

namespace {

std::string join(const std::vector<int>& values) {
  std::string s;
  for (int v : values) s += (s.empty() ? "" : ", ") + std::to_string(v);
  return s;
}

}  // namespace

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
    tp_fits = tp_fits || !planner::valid_tp_degrees(m, t.gpus_per_node, options.tp_degrees, options.sequence_parallel).empty();
  if (!tp_fits)
    return "no TP degree searched (" + join(options.tp_degrees) + ") suits the model and the nodes (a TP degree divides the " +
           std::to_string(m.heads) + " heads and a node's GPUs)";
  bool micro_fits = false;
  for (int mb : options.micro_batches) micro_fits = micro_fits || (mb >= 1 && workload.training.global_batch % mb == 0);
  if (!micro_fits)
    return "no micro-batch size searched (" + join(options.micro_batches) + ") divides the global batch of " +
           std::to_string(workload.training.global_batch);
  bool interleave_fits = false;
  for (int v : options.interleaves) interleave_fits = interleave_fits || (v >= 1 && m.layers % v == 0);
  if (!interleave_fits)
    return "no interleave factor searched (" + join(options.interleaves) + ") divides the " + std::to_string(m.layers) +
           " layers";
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
