// SPDX-License-Identifier: Apache-2.0
// run_rank / run_in_process: backend per rank from the cluster's device types, the step loop,
// gradient capture, summaries gathered on rank 0.
#include "runner/run.hpp"

#include <algorithm>
#include <mutex>

#include "comm/in_process_communicator.hpp"

namespace hetsim::exec {
namespace {
constexpr int kSummaryFields = 10;

std::vector<float> pack(const RankSummary& s) {
  return {static_cast<float>(s.step_time_s),        static_cast<float>(s.compute_s),
          static_cast<float>(s.tp_comm_s),          static_cast<float>(s.pp_comm_s),
          static_cast<float>(s.dp_comm_s),          static_cast<float>(s.optimizer_s),
          static_cast<float>(s.forward_per_micro_batch_s), static_cast<float>(s.backward_per_micro_batch_s),
          static_cast<float>(s.memory_peak_bytes),  static_cast<float>(s.uncovered_s)};
}

RankSummary unpack(const float* f) {
  RankSummary s;
  s.step_time_s = f[0];
  s.compute_s = f[1];
  s.tp_comm_s = f[2];
  s.pp_comm_s = f[3];
  s.dp_comm_s = f[4];
  s.optimizer_s = f[5];
  s.forward_per_micro_batch_s = f[6];
  s.backward_per_micro_batch_s = f[7];
  s.memory_peak_bytes = f[8];
  s.uncovered_s = f[9];
  return s;
}
}  // namespace

RankSummary summarize(const std::vector<Measurement>& measurements, int steps, int forward_passes,
                      int backward_passes, double memory_peak_bytes) {
  RankSummary s;
  s.memory_peak_bytes = memory_peak_bytes;
  const int first_measured = steps > 1 ? 2 : 1;
  const int measured = steps - first_measured + 1;
  double ops_s = 0, forward_s = 0, backward_s = 0;
  for (const auto& m : measurements) {
    if (m.step < first_measured) continue;
    const double d = m.end_s - m.start_s;
    if (m.op == "step") {  // the step record: the interval every other op of the step lies in
      s.step_time_s += d;
      continue;
    }
    ops_s += d;
    if (m.phase == "forward") forward_s += d;
    if (m.phase == "backward") backward_s += d;
    switch (m.op_class) {
      case OpClass::kCompute: s.compute_s += d; break;
      case OpClass::kTpComm: s.tp_comm_s += d; break;
      case OpClass::kPpComm: s.pp_comm_s += d; break;
      case OpClass::kDpComm: s.dp_comm_s += d; break;
      case OpClass::kOptimizer: s.optimizer_s += d; break;
    }
  }
  s.uncovered_s = std::max(0.0, s.step_time_s - ops_s) / measured;
  for (double* x : {&s.step_time_s, &s.compute_s, &s.tp_comm_s, &s.pp_comm_s, &s.dp_comm_s, &s.optimizer_s}) {
    *x /= measured;
  }
  // Per micro-batch pass, without p2p (compute + TP comm, as StageReport defines them).
  double fwd_p2p = 0, bwd_p2p = 0;
  for (const auto& m : measurements) {
    if (m.step < first_measured || m.op_class != OpClass::kPpComm) continue;
    (m.phase == "forward" ? fwd_p2p : bwd_p2p) += m.end_s - m.start_s;
  }
  s.forward_per_micro_batch_s = forward_passes ? (forward_s - fwd_p2p) / measured / forward_passes : 0;
  s.backward_per_micro_batch_s = backward_passes ? (backward_s - bwd_p2p) / measured / backward_passes : 0;
  return s;
}

RankOutcome run_rank(const RunSpec& spec, Communicator& comm) {
  const RankLayout layout(spec.plan, spec.workload.model);
  const int rank = comm.get_rank();
  const RankPlace& place = layout.place(rank);
  const std::string device_type = spec.cluster.gpu_type(place.gpu).name;
  auto backend = make_backend(device_type, spec.cluster.gpus.at(place.gpu).local);
  RankRunner runner(layout, spec.workload, spec.plan, *backend, comm, spec.options);
  RankOutcome out;
  for (int s = 1; s <= spec.steps; ++s) {
    out.steps.push_back(runner.step());
    if (s == 1 && spec.options.capture_gradients) {
      out.gradients = collect_named(layout, spec.workload.model, runner.get_captured_gradients(), true, comm);
    }
  }
  // Per micro-batch of the whole stage (all its chunks when interleaved), as StageReport defines.
  const int passes = layout.micro_batches(place.replica);
  const RankSummary mine =
      summarize(runner.get_measurements(), spec.steps, passes, passes, backend->get_memory_peak_bytes());
  const std::vector<float> packed = pack(mine);
  std::vector<float> all(static_cast<std::size_t>(kSummaryFields) * layout.get_world_size());
  comm.all_gather(packed.data(), all.data(), kSummaryFields, layout.world());
  if (rank == 0) {
    std::vector<RankSummary> ranks;
    for (int r = 0; r < layout.get_world_size(); ++r) ranks.push_back(unpack(all.data() + kSummaryFields * r));
    out.report = build_report(spec, layout, ranks, out.steps);
  }
  out.measurements = runner.get_measurements();
  out.comm_calls = comm.get_calls();
  return out;
}

RankOutcome run_rank_or_abort(const RunSpec& spec, Communicator& comm) {
  try {
    return run_rank(spec, comm);
  } catch (const RankFailure&) {
    throw;
  } catch (const std::exception& e) {
    comm.abort(e.what());
    throw;
  }
}

RunOutcome run_in_process(const RunSpec& spec) {
  const RankLayout layout(spec.plan, spec.workload.model);  // validates before threads start
  RunOutcome result;
  std::mutex mutex;
  InProcessWorld::run(layout.get_world_size(), [&](Communicator& comm) {
    RankOutcome o = run_rank(spec, comm);
    std::lock_guard lock(mutex);
    result.measurements.insert(result.measurements.end(), o.measurements.begin(), o.measurements.end());
    if (comm.get_rank() == 0) {
      result.steps = std::move(o.steps);
      result.gradients = std::move(o.gradients);
      result.report = std::move(o.report);
    }
  });
  std::sort(result.measurements.begin(), result.measurements.end(),
            [](const Measurement& a, const Measurement& b) { return a.start_s < b.start_s; });
  return result;
}

}  // namespace hetsim::exec
