// SPDX-License-Identifier: Apache-2.0
// The Report: what every engine (analytic, sim, exec) produces for one plan, with stable keys.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace hetsim::models {

/// Where the iteration time goes, on the critical path (seconds per step).
struct Breakdown {
  double compute_s = 0;
  double tp_comm_s = 0;
  double pp_comm_s = 0;
  double dp_comm_s = 0;    ///< non-overlapped part of gradient sync (+ ZeRO collectives)
  double bubble_s = 0;
  double optimizer_s = 0;
};

struct StageReport {
  int replica = 0;
  int stage = 0;
  std::string gpu_type;
  int layers = 0;
  int tp = 0;
  double forward_s = 0;          ///< per micro-batch, compute + TP comm + the stage's pipeline sends
  double backward_s = 0;         ///< per micro-batch, incl. recompute and the stage's pipeline sends
  double memory_bytes = 0;       ///< peak per GPU
  double memory_capacity_bytes = 0;
};

/// One op of a stage per micro-batch, summed over the stage's layers and chunks (predict --ops,
/// models/op_breakdown.hpp). Forward and backward parts of an op share a line: "qkv" holds the
/// forward GEMM, its recompute inside the backward pass and "qkv_bwd".
struct OpTime {
  std::string name;
  std::string kind;          ///< compute | tp_all_reduce | tp_all_gather | tp_reduce_scatter
  double forward_s = 0;      ///< in the forward pass
  double recompute_s = 0;    ///< forward run again inside the backward pass (recompute)
  double backward_s = 0;
  double flop = 0;           ///< of all three parts
  int kernels = 0;           ///< of all three parts
  double size_bytes = 0;     ///< collectives: bytes per rank, all three parts
  /// A collective that runs beside a GEMM (tp_comm_overlap): the stage's time holds only what
  /// the GEMM does not hide of it.
  bool overlapped = false;
  double total_s() const { return forward_s + recompute_s + backward_s; }
};

/// The ops of the stages of a plan that run the same ones: same GPU type, layers, TP degree and
/// place in the model (predict --ops).
struct StageOps {
  std::string stages;        ///< which stages, e.g. "replicas 0-15, stages 1-6"
  int stage_count = 0;
  std::string gpu_type;
  int layers = 0;
  int tp = 0;
  double forward_s = 0;      ///< per micro-batch, as StageReport::forward_s (pipeline sends included)
  double backward_s = 0;
  double send_forward_s = 0;   ///< of forward_s: the pipeline sends to the next stage
  double send_backward_s = 0;  ///< of backward_s: the sends to the previous stage
  std::vector<OpTime> ops;   ///< longest first
};

/// Model FLOPs of one GPU type of a plan (models/type_utilisation.hpp).
struct TypeUtilisation {
  std::string gpu_type;
  int gpus = 0;
  double tflops_per_gpu = 0;  ///< model FLOPs per GPU of this type, TFLOP/s
  double mfu = 0;             ///< of this type's peak
};

struct Report {
  std::string engine = "analytic";   ///< analytic | sim | exec
  bool feasible = true;
  std::string infeasible_reason;
  double iteration_time_s = 0;
  double samples_per_s = 0;
  double tokens_per_s = 0;
  double tflops_per_gpu = 0;         ///< model FLOPs (no recompute) per GPU, TFLOP/s
  double mfu = 0;
  double hfu = 0;
  double memory_peak_bytes = 0;
  double cost_per_hour = 0;
  double cost_per_million_tokens = 0;
  int micro_batch = 0;
  Breakdown breakdown;
  std::vector<StageReport> stages;
  /// Per GPU type, where a verb attaches it (utilisation_by_type); empty otherwise. The table
  /// shows it for plans of two types or more.
  std::vector<TypeUtilisation> by_gpu_type;
  /// The cost model's ops per micro-batch of each distinct stage, where a verb attaches them
  /// (predict --ops: op_breakdown); empty otherwise, and then not in the JSON.
  std::vector<StageOps> stage_ops;
  std::map<std::string, double> extra;   ///< engine-specific figures (e.g. sim link utilisation)
  /// What a figure rests on that the user should know (models/plan_notes.hpp); never changes one.
  std::vector<std::string> notes;
};

/// Stable JSON object with the keys of DESIGN.md "Outputs".
/// Dollars per million tokens trained at `cost_per_hour` and `tokens_per_s`; 0 when nothing is
/// trained (the one formula the predictor, the planner's spot pricing and the execution
/// engine's measured reports share).
double cost_per_million_tokens(double cost_per_hour, double tokens_per_s);

/// The largest ratio of a stage's peak memory to its GPUs' capacity (0 without stage rows): above
/// 1, the plan does not fit. The predictors fill the stage rows before their memory check, so an
/// infeasible Report still carries them.
double max_memory_ratio(const Report& report);

std::string to_json(const Report& report);
class JsonOut;
/// The keys of to_json's object, into an object `j` has begun (a verb adding keys of its own).
void write_report_keys(JsonOut& j, const Report& report);
/// Human table for the terminal.
std::string to_table(const Report& report);

}  // namespace hetsim::models
