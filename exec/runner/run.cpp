// SPDX-License-Identifier: Apache-2.0
// run_rank / run_in_process: backend per rank from the cluster's device types, the step loop,
// gradient capture, summaries gathered on rank 0.
#include "runner/run.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "atomic_file.hpp"
#include "comm/in_process_communicator.hpp"

namespace hetsim::exec {
namespace {
constexpr int kSummaryFields = 12;

std::vector<float> pack(const RankSummary& s) {
  std::vector<float> f;
  for (double x : {s.step_time_s, s.compute_s, s.tp_comm_s, s.pp_comm_s, s.dp_comm_s, s.optimizer_s,
                   s.forward_per_micro_batch_s, s.backward_per_micro_batch_s, s.memory_peak_bytes, s.uncovered_s,
                   s.pipeline_s, s.wait_s}) {
    f.push_back(static_cast<float>(x));
  }
  return f;
}

RankSummary unpack(const float* f) {
  RankSummary s;
  double* fields[kSummaryFields] = {&s.step_time_s, &s.compute_s, &s.tp_comm_s, &s.pp_comm_s,
                                    &s.dp_comm_s, &s.optimizer_s, &s.forward_per_micro_batch_s,
                                    &s.backward_per_micro_batch_s, &s.memory_peak_bytes, &s.uncovered_s,
                                    &s.pipeline_s, &s.wait_s};
  for (int i = 0; i < kSummaryFields; ++i) *fields[i] = f[i];
  return s;
}
}  // namespace

namespace {

/// A rank's measured ops summed (steps from `first_measured` on), before summarize divides them.
struct RankSums {
  RankSummary s;
  double ops_s = 0, forward_s = 0, backward_s = 0;
  std::map<int, std::pair<double, double>> span;  ///< step -> (start, end of the last pass op)
};

/// Adds `measurements` to `sums`, in any number of calls (a step's records may come in parts).
void accumulate(RankSums& sums, const std::vector<Measurement>& measurements, int first_measured) {
  RankSummary& s = sums.s;
  auto& span = sums.span;
  for (const auto& m : measurements) {
    if (m.step < first_measured) continue;
    const double d = m.end_s - m.start_s;
    if (m.op == "step") {  // the step record: the interval every other op of the step lies in
      s.step_time_s += d;
      span[m.step].first = m.start_s;
      continue;
    }
    sums.ops_s += d;
    const bool pass = m.phase == "forward" || m.phase == "backward";
    if (pass) span[m.step].second = std::max(span[m.step].second, m.end_s);
    // Per micro-batch pass: compute + TP comm, as StageReport defines forward_s / backward_s.
    const bool stage_time = m.op_class == OpClass::kCompute || m.op_class == OpClass::kTpComm;
    if (stage_time && m.phase == "forward") sums.forward_s += d;
    if (stage_time && m.phase == "backward") sums.backward_s += d;
    switch (m.op_class) {
      case OpClass::kCompute: s.compute_s += d; break;
      case OpClass::kTpComm: s.tp_comm_s += d; break;
      case OpClass::kPpComm: s.pp_comm_s += d; break;
      case OpClass::kDpComm: s.dp_comm_s += d; break;
      case OpClass::kOptimizer: s.optimizer_s += d; break;
      case OpClass::kBubble: s.wait_s += d; break;
    }
  }
}

/// The first step summarize counts: the first is warm-up when there are more.
int first_measured_step(int steps) { return steps > 1 ? 2 : 1; }

RankSummary finish(const RankSums& sums, int steps, int forward_passes, int backward_passes, double memory_peak_bytes) {
  RankSummary s = sums.s;
  for (const auto& [step, se] : sums.span) s.pipeline_s += std::max(0.0, se.second - se.first);
  s.memory_peak_bytes = memory_peak_bytes;
  const int measured = steps - first_measured_step(steps) + 1;
  s.uncovered_s = std::max(0.0, s.step_time_s - sums.ops_s) / measured;
  for (double* x : {&s.step_time_s, &s.compute_s, &s.tp_comm_s, &s.pp_comm_s, &s.dp_comm_s, &s.optimizer_s,
                    &s.pipeline_s, &s.wait_s}) {
    *x /= measured;
  }
  s.forward_per_micro_batch_s = forward_passes ? sums.forward_s / measured / forward_passes : 0;
  s.backward_per_micro_batch_s = backward_passes ? sums.backward_s / measured / backward_passes : 0;
  return s;
}

}  // namespace

RankSummary summarize(const std::vector<Measurement>& measurements, int steps, int forward_passes,
                      int backward_passes, double memory_peak_bytes) {
  RankSums sums;
  accumulate(sums, measurements, first_measured_step(steps));
  return finish(sums, steps, forward_passes, backward_passes, memory_peak_bytes);
}

void check_executable(const models::Workload& workload) {
  const models::TrainingSpec& t = workload.training;
  if (t.dtype != models::Dtype::kFp32)
    throw std::invalid_argument(std::string("the execution engine trains in FP32 only (exec/README.md), and the workload "
                                            "says dtype ") + models::to_string(t.dtype) +
                                " (expected dtype: fp32 in the workload to run it)");
  if (t.optimizer != models::Optimizer::kAdam)
    throw std::invalid_argument(std::string("the execution engine's optimizer is Adam, and the workload says ") +
                                models::to_string(t.optimizer) + " (expected optimizer: adam in the workload to run it)");
}

Executed as_executed(const models::Workload& workload, const models::Plan& plan) {
  Executed e{workload, plan};
  e.workload.training.allow_tf32 = false;
  e.workload.training.engine_kernels = true;
  e.workload.model.dropout = 0;  // the engine trains without dropout
  e.plan.zero3_prefetch = false;
  e.plan.overlap_grad_sync = false;
  return e;
}

RankOutcome run_rank(const RunSpec& spec, Communicator& comm) {
  check_executable(spec.workload);
  const RankLayout layout(spec.plan, spec.workload.model);
  check_tag_space(layout.p2p_tag_count(), layout.get_group_count(), comm.get_tag_ub());
  const int rank = comm.get_rank();
  const RankPlace& place = layout.place(rank);
  const std::string device_type = spec.cluster.gpu_type(place.gpu).name;
  auto backend = make_backend(device_type, spec.cluster.gpus.at(place.gpu).local);
  RankRunner runner(layout, spec.workload, spec.plan, *backend, comm, spec.options);
  RankOutcome out;
  RankSums sums;  // without keep_measurements: the records folded in as they come
  // Without --out (on_step_records) nothing needs a step's records whole: they are folded in
  // as they come, so memory does not grow with the micro-batches of a step.
  const std::size_t batch = std::max<std::size_t>(1, spec.options.fold_records_every);
  if (!spec.options.keep_measurements && !spec.on_step_records) {
    runner.hand_over_records(batch, [&](std::vector<Measurement>& records) {
      accumulate(sums, records, first_measured_step(spec.steps));
      records.clear();
    });
  } else if (spec.on_step_records && spec.max_step_records > 0) {
    // --out writes in start order, and a step's `step` record (its start first) comes at its end:
    // a step's records are held whole, so they are bounded instead.
    runner.hand_over_records(batch, [&](std::vector<Measurement>& records) {
      if (records.size() <= spec.max_step_records) return;
      throw std::runtime_error("--out: a step holds more than " + std::to_string(spec.max_step_records) +
                               " op records on this rank, about " + std::to_string(static_cast<int>(kHeldRecordBytes)) +
                               " bytes each, which is what the host's available memory allows (expected fewer "
                               "micro-batches per step, or a run without --out, which folds them as it goes)");
    });
  }
  for (int s = 1; s <= spec.steps; ++s) {
    out.steps.push_back(runner.step());
    if (s == 1 && spec.options.capture_gradients) {
      out.gradients = collect_named(layout, spec.workload.model, runner.get_captured_gradients(), kSumReplicas, comm);
    }
    if (!spec.options.keep_measurements || spec.on_step_records) {
      std::vector<Measurement> records = runner.take_measurements();
      accumulate(sums, records, first_measured_step(spec.steps));
      if (spec.on_step_records) spec.on_step_records(rank, std::move(records));
    }
    comm.clear_calls();  // the communicator's own log of calls (its tests read it) grew ~8 KB a step
  }
  if (spec.options.capture_parameters) {
    const std::vector<float> values = runner.get_parameter_values();
    for (int r = 0; r < layout.get_dp(); ++r) {
      out.parameters.push_back(collect_named(layout, spec.workload.model, values, r, comm));
    }
  }
  // Per micro-batch of the whole stage (all its chunks when interleaved), as StageReport defines.
  const int passes = layout.micro_batches(place.replica);
  accumulate(sums, runner.get_measurements(), first_measured_step(spec.steps));  // all of them when kept
  const RankSummary mine = finish(sums, spec.steps, passes, passes, backend->get_memory_peak_bytes());
  const std::vector<float> packed = pack(mine);
  std::vector<float> all(static_cast<std::size_t>(kSummaryFields) * layout.get_world_size());
  comm.all_gather(packed.data(), all.data(), kSummaryFields, layout.world());
  if (rank == 0) {
    std::vector<RankSummary> ranks;
    for (int r = 0; r < layout.get_world_size(); ++r) ranks.push_back(unpack(all.data() + kSummaryFields * r));
    out.report = build_report(spec, layout, ranks, out.steps);
    if (const std::string kernels = backend->describe_kernels(); !kernels.empty())
      out.report.notes.push_back("rank 0 (" + device_type + "): " + kernels);
  }
  out.measurements = runner.get_measurements();
  return out;
}

RankOutcome run_rank_or_abort(const RunSpec& spec, Communicator& comm) {
  try {
    return run_rank(spec, comm);
  } catch (const RankFailure&) {
    throw;
  } catch (const std::exception& e) {
    // MPI_Abort ends this process without unwinding: the temporaries of --out would stay.
    models::remove_temporaries_in_progress();
    comm.abort(e.what());
    throw;
  }
}

RunOutcome run_in_process(const RunSpec& spec) {
  check_executable(spec.workload);  // before threads start, as the layout's checks
  const RankLayout layout(spec.plan, spec.workload.model);
  check_tag_space(layout.p2p_tag_count(), layout.get_group_count(), kMinTagUpperBound);
  RunOutcome result;
  std::mutex mutex;
  InProcessWorld::run(layout.get_world_size(), [&](Communicator& comm) {
    RankOutcome o = run_rank(spec, comm);
    std::lock_guard lock(mutex);
    result.measurements.insert(result.measurements.end(), o.measurements.begin(), o.measurements.end());
    if (comm.get_rank() == 0) {
      result.steps = std::move(o.steps);
      result.gradients = std::move(o.gradients);
      result.parameters = std::move(o.parameters);
      result.report = std::move(o.report);
    }
  });
  std::sort(result.measurements.begin(), result.measurements.end(),
            [](const Measurement& a, const Measurement& b) { return a.start_s < b.start_s; });
  return result;
}

}  // namespace hetsim::exec
