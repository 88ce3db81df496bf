// SPDX-License-Identifier: Apache-2.0
// Running a Plan for real: on one rank of any communicator (MPI), or with threads as ranks.
#pragma once
#include <functional>
#include <vector>

#include "cluster.hpp"
#include "comm/communicator.hpp"
#include "plan.hpp"
#include "report.hpp"
#include "runner/gradient_collector.hpp"
#include "runner/measurement.hpp"
#include "runner/rank_runner.hpp"
#include "workload.hpp"

namespace hetsim::exec {

struct RunSpec {
  models::Cluster cluster;
  models::Workload workload;
  models::Plan plan;
  int steps = 1;
  RunOptions options;
  /// Called on each rank (its thread, in process) after every step with the step's records,
  /// which are then not kept (options.keep_measurements ignored): `run --out` writes them as
  /// the run goes (measurement_stream.hpp) instead of holding every step's in memory.
  std::function<void(int rank, std::vector<Measurement> records)> on_step_records;
  /// With on_step_records, the most records a rank may hold within a step (0: no limit): past it
  /// the rank fails with why, before a step of many micro-batches exhausts the host's memory.
  std::size_t max_step_records = 0;
};

/// Host memory a held record takes (its strings, the vector's growth and the writer's queue),
/// measured: `run --out` of 65,536 micro-batches of tiny-gpt on 2 ranks held 4.9 GB of RSS for
/// its 3.28 million records (2026-12-05), 1.5 KB each.
inline constexpr double kHeldRecordBytes = 1536;

/// What one rank measured, reduced to the figures the Report needs (means over the measured
/// steps: all but the first when there are several, the first being warm-up).
struct RankSummary {
  double step_time_s = 0;
  double compute_s = 0, tp_comm_s = 0, pp_comm_s = 0, dp_comm_s = 0, optimizer_s = 0;
  double forward_per_micro_batch_s = 0, backward_per_micro_batch_s = 0;
  double memory_peak_bytes = 0;
  double uncovered_s = 0;  ///< step time not covered by any timed op (runner overhead)
  double pipeline_s = 0;   ///< from the step's start to the end of its last forward/backward op
  double wait_s = 0;       ///< waiting for other ranks (ops of class bubble)
};

struct RankOutcome {
  std::vector<StepResult> steps;          ///< identical on every rank
  std::vector<Measurement> measurements;  ///< this rank's
  NamedTensors gradients;                 ///< rank 0, when options.capture_gradients: step 1, before DP sync
  std::vector<NamedTensors> parameters;   ///< rank 0, when options.capture_parameters: per replica, after the last step
  models::Report report;                  ///< rank 0: measured values, engine "exec"
};

/// Throws std::invalid_argument for a workload the engine would not train as written: every
/// backend computes in FP32 with Adam, so another dtype or optimizer would run silently as
/// FP32 Adam (and `check` would compare it with a prediction of what the workload says).
void check_executable(const models::Workload& workload);

/// The workload and plan as the engine trains them, for the cost model to price: its GEMMs are
/// its own FP32 kernels (never TF32), its other kernels its own (TrainingSpec::engine_kernels),
/// it has no dropout, its ZeRO-3 gathers block (no prefetch) and its gradient sync runs after
/// the backward, whatever the inputs say for training stacks (`check` compares
/// with this prediction; `run` refuses what it puts over the devices' memory).
struct Executed {
  models::Workload workload;
  models::Plan plan;
};
Executed as_executed(const models::Workload& workload, const models::Plan& plan);

/// Runs spec.steps training steps as rank comm.get_rank() (a collective call).
RankOutcome run_rank(const RunSpec& spec, Communicator& comm);

/// run_rank, but an exception of this rank (other than RankFailure) first calls comm.abort()
/// with a message naming the rank, so that every other rank stops instead of waiting forever.
/// comm.abort() may end the process without unwinding (MPI_Abort), so this rank's temporaries
/// of atomic writes in progress (`run --out`) are removed first.
RankOutcome run_rank_or_abort(const RunSpec& spec, Communicator& comm);

struct RunOutcome {
  std::vector<StepResult> steps;
  std::vector<Measurement> measurements;  ///< every rank's
  NamedTensors gradients;
  std::vector<NamedTensors> parameters;
  models::Report report;
};

/// Threads as ranks in this process. Throws RankFailure naming the first rank that failed.
RunOutcome run_in_process(const RunSpec& spec);

/// The rank's summary from its measurements (exposed for tests; the runner calls accumulate/finish).
RankSummary summarize(const std::vector<Measurement>& measurements, int steps, int forward_passes,
                      int backward_passes, double memory_peak_bytes);

/// The rank whose breakdown is the Report's, as the predictor picks it (models/predictor.cpp,
/// "5. Report"): in the replica with the longest pipeline, the rank with the most compute + TP +
/// p2p time (the bottleneck stage; models/pipeline_time.cpp bottleneck_stage).
int critical_rank(const RankLayout& layout, const std::vector<RankSummary>& ranks);

/// The measured Report from every rank's summary (index = rank).
models::Report build_report(const RunSpec& spec, const RankLayout& layout, const std::vector<RankSummary>& ranks,
                            const std::vector<StepResult>& steps);

}  // namespace hetsim::exec
