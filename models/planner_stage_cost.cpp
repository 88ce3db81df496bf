// SPDX-License-Identifier: Apache-2.0
// Unit costs measured with models::predict() on probe pipelines, fitted to a linear stage model.
//
// Why probes: the planner must rank plans the way the predictor does, so it takes its
// per-layer times and memory from the predictor instead of re-deriving them. Two probe
// pipelines per (node type, TP, knobs), each stage on its own TP group of a synthetic
// cluster made of that node type only (memory capacity lifted so nothing is infeasible):
//   probe A: 5 stages of v layers each          (v = interleave factor)
//   probe B: 4 stages of v, 2v, 2v, v layers
//   probe C: 1 stage of v layers (a one-stage pipeline holds the embedding once if tied)
// Middle stages give layer_s/fixed_s (time) and weight/act/fixed bytes (memory) by least
// squares; the first and last stages give the embedding / LM-head extras.
#include "planner_stage_cost.hpp"

#include <Eigen/Dense>
#include <cmath>
#include <mutex>

#include "memory_cost.hpp"
#include "predictor.hpp"

namespace hetsim::models::planner {

namespace {

constexpr int kProbeMicroBatches = 8;  // >= probe stages, so 1F1B holds S - s micro-batches

/// One node per probe stage, joined by a network with no cost: the probes measure the stage
/// (compute, TP collectives inside the node, memory); the search adds p2p of the real links.
Cluster probe_cluster(const NodeType& type, int stages, int tp) {
  Cluster c;
  c.name = "planner-probe";
  NodeType t = type;
  // A TP group wider than a node (a Megatron shape the baseline tries) is probed as if the
  // node were wide enough: an estimate for ranking only, predict() prices the real plan.
  t.gpus_per_node = std::max(t.gpus_per_node, tp);
  t.gpu.memory_bytes = 1e18;  // probes measure memory, they must not be cut short by it
  t.nics.count = 1;
  t.nics.bandwidth_Bps = 1e18;
  t.nics.latency_s = 0;
  c.node_types.push_back(t);
  Zone z;
  z.name = "probe";
  z.fabric.kind = ZoneFabricKind::kSwitch;
  z.fabric.latency_s = 0;
  z.groups.push_back(NodeGroup{0, stages});
  c.zones.push_back(z);
  c.finalize();
  return c;
}

Plan probe_plan(const std::vector<int>& layers, int tp, int gpus_per_node, const Knobs& k) {
  Plan p;
  p.name = "planner-probe";
  p.micro_batch = k.micro_batch;
  p.schedule = k.interleave > 1 ? Schedule::kInterleaved : Schedule::k1f1b;
  p.interleave = k.interleave;
  p.recompute = k.recompute;
  p.sequence_parallel = k.sequence_parallel && tp > 1;
  p.tp_comm_overlap = k.tp_comm_overlap && p.sequence_parallel;
  p.overlap_p2p_comm = k.overlap_p2p_comm && k.interleave > 1;
  p.zero = 0;
  Replica r;
  r.micro_batches = kProbeMicroBatches;
  for (size_t s = 0; s < layers.size(); ++s) {
    Stage st;
    st.layers = layers[s];
    for (int t = 0; t < tp; ++t) st.gpus.push_back(static_cast<int>(s) * gpus_per_node + t);
    r.stages.push_back(st);
  }
  p.replicas.push_back(r);
  return p;
}

}  // namespace

const UnitCost& UnitCostTable::get(int node_type, int tp, const Knobs& knobs) {
  const auto key = std::tuple(node_type, tp, knobs.key());
  {
    std::shared_lock<std::shared_mutex> read(mutex_);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;  // map nodes do not move
  }
  std::unique_lock<std::shared_mutex> write(mutex_);
  auto it = cache_.find(key);
  if (it == cache_.end()) it = cache_.emplace(key, measure(node_type, tp, knobs)).first;
  return it->second;
}

UnitCost UnitCostTable::measure(int node_type, int tp, const Knobs& k) {
  UnitCost u;
  const NodeType& type = cluster_.node_types[node_type];
  u.capacity_bytes = type.gpu.memory_bytes;
  if (!type.gpu.supports(workload_.training.dtype)) {
    u.reason = type.gpu.name + " has no " + to_string(workload_.training.dtype) + " support";
    return u;
  }
  const int v = std::max(1, k.interleave);
  const std::vector<int> layers_a = {v, v, v, v, v};
  const std::vector<int> layers_b = {v, 2 * v, 2 * v, v};
  const std::vector<int> layers_c = {v};  // a one-stage pipeline
  const Cluster cluster = probe_cluster(type, 5, tp);
  Report ra, rb, rc;
  for (int probe = 0; probe < 3; ++probe) {
    const std::vector<int>& layers = probe == 0 ? layers_a : probe == 1 ? layers_b : layers_c;
    Workload w = workload_;
    w.model.layers = 0;
    for (int l : layers) w.model.layers += l;
    w.training.global_batch = k.micro_batch * kProbeMicroBatches;
    const Plan plan = probe_plan(layers, tp, cluster.node_types[0].gpus_per_node, k);
    Report r = predict(cluster, w, plan);
    ++probes_;
    if (r.stages.size() != layers.size()) {
      u.reason = "probe on " + type.name + " tp" + std::to_string(tp) + " gave no stage costs" +
                 (r.feasible ? std::string() : ": " + r.infeasible_reason);
      return u;
    }
    (probe == 0 ? ra : probe == 1 ? rb : rc) = std::move(r);
  }
  const auto time_of = [](const StageReport& s) { return s.forward_s + s.backward_s; };
  // Middle stages: (layers k, inflight f) -> time = k*layer_s + fixed_s; mem = k*w + k*f*act + c.
  struct Row { double k, f, time, mem; };
  std::vector<Row> rows;
  for (int s = 1; s <= 3; ++s) {
    rows.push_back({static_cast<double>(layers_a[s]), inflight_factor(s, 5, kProbeMicroBatches, v),
                    time_of(ra.stages[s]), ra.stages[s].memory_bytes});
  }
  for (int s = 1; s <= 2; ++s) {
    rows.push_back({static_cast<double>(layers_b[s]), inflight_factor(s, 4, kProbeMicroBatches, v),
                    time_of(rb.stages[s]), rb.stages[s].memory_bytes});
  }
  Eigen::MatrixXd at(rows.size(), 2), am(rows.size(), 3);
  Eigen::VectorXd bt(rows.size()), bm(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    at.row(i) << rows[i].k, 1.0;
    bt(i) = rows[i].time;
    am.row(i) << rows[i].k, rows[i].k * rows[i].f, 1.0;
    bm(i) = rows[i].mem;
  }
  const Eigen::VectorXd xt = at.colPivHouseholderQr().solve(bt);
  const Eigen::VectorXd xm = am.colPivHouseholderQr().solve(bm);
  u.layer_s = std::max(0.0, xt(0));
  u.fixed_s = std::max(0.0, xt(1));
  u.weight_bytes = std::max(0.0, xm(0));
  u.act_bytes = std::max(0.0, xm(1));
  u.fixed_bytes = std::max(0.0, xm(2));
  const auto model_time = [&](int layers) { return layers * u.layer_s + u.fixed_s; };
  const auto model_mem = [&](int layers, double f) {
    return layers * u.weight_bytes + layers * f * u.act_bytes + u.fixed_bytes;
  };
  u.first_s = std::max(0.0, time_of(ra.stages[0]) - model_time(v));
  u.last_s = std::max(0.0, time_of(ra.stages[4]) - model_time(v));
  u.first_bytes = std::max(0.0, ra.stages[0].memory_bytes - model_mem(v, inflight_factor(0, 5, kProbeMicroBatches, v)));
  u.last_bytes = std::max(0.0, ra.stages[4].memory_bytes - model_mem(v, inflight_factor(4, 5, kProbeMicroBatches, v)));
  u.solo_s = std::max(0.0, time_of(rc.stages[0]) - model_time(v));
  u.solo_bytes = std::max(0.0, rc.stages[0].memory_bytes - model_mem(v, inflight_factor(0, 1, kProbeMicroBatches, v)));
  // Parameter states of the embedding (first stage), the LM head or its tied copy (last stage),
  // and of both when one stage holds everything (memory_cost.hpp's bytes per parameter).
  const StateBytes sb = state_bytes_per_param(workload_.training);
  const double state_bpp = sb.weights + sb.grads + sb.optimizer;
  const double table = static_cast<double>(workload_.model.vocab) * workload_.model.hidden / tp;
  u.first_state_bytes = std::min(u.first_bytes, table * state_bpp);
  u.last_state_bytes = std::min(u.last_bytes, table * state_bpp);
  u.solo_state_bytes = std::min(u.solo_bytes, workload_.model.params_embedding() / tp * state_bpp);
  if (!std::isfinite(u.layer_s) || u.layer_s <= 0) {
    u.reason = "probe on " + type.name + " tp" + std::to_string(tp) + " gave no per-layer time";
    return u;
  }
  u.ok = true;
  return u;
}

}  // namespace hetsim::models::planner
