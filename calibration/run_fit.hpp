// SPDX-License-Identifier: Apache-2.0
// Calibration from measured training runs: the efficiency figures of each GPU type that make the
// analytic model reproduce the iteration times of ground-truth suites (docs/validation.md), written
// as a Profile. The microbenchmark calibration (calibrate.hpp) measures this machine's kernels;
// this one fits what a user's own framework reached on their hardware, e.g. a Megatron-Core or
// FSDP stack whose overlaps and fused kernels the catalog's defaults do not assume.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog.hpp"
#include "profile.hpp"
#include "validation_suite.hpp"

namespace hetsim::calibration {

/// A fitted figure of one GPU type.
enum class RunFitParam {
  kGemm,    ///< scale on the GEMM efficiencies (gemm and gemm_fp32 alike): the compute rate
  kMemory,  ///< memory efficiency (memory-bound kernels)
  kHost,    ///< framework_op_host: host time per launched kernel
  kFlash,   ///< flash: scale on the FlashAttention efficiencies (rows with flash_attention)
  kLinks,   ///< achieved bandwidth of every link class the rows use (profile `links:`)
};
const char* to_string(RunFitParam p);
std::optional<RunFitParam> parse_run_fit_param(std::string_view name);

/// Where a fit stands after one figure's search. The search is deterministic, so a fit resumed
/// from its last step ends with the figures an uninterrupted one would have found.
struct RunFitProgress {
  std::vector<std::string> variables;  ///< "device type/figure" of each variable, in search order
  std::vector<double> values;          ///< their values after the step
  int pass = 0;                        ///< the coordinate-descent pass the step belongs to
  int searched = 0;                    ///< variables of that pass searched (values.size(): pass done)
  double objective = 0;                ///< after the step
  double pass_start_objective = 0;     ///< when the pass began (decides whether another pass runs)
};

struct RunFitOptions {
  std::vector<RunFitParam> params = {RunFitParam::kGemm};
  int sweeps = 3;  ///< coordinate-descent passes over all parameters
  /// A step of an earlier run of the same fit to continue from; ignored when its variables are
  /// not this fit's (other suites or figures).
  std::optional<RunFitProgress> resume;
  /// Called after each figure's search (a checkpoint, calibration/run_fit_checkpoint.hpp).
  std::function<void(const RunFitProgress&)> on_progress;
};

struct FittedFigure {
  std::string device_type;  ///< for kLinks: the link class (nvswitch, infiniband, ...)
  RunFitParam param = RunFitParam::kGemm;
  double catalog_value = 0, fitted_value = 0;  ///< gemm: the efficiency in the rows' dtype; links: B/s
  int rows = 0;                                ///< rows that run on this device type (use this link class)
  bool changed = false;   ///< false: the rows did not move it (left out of the profile)
  bool at_bound = false;  ///< the search stopped at the end of its range: the rows want more
};

struct SuiteFit {
  std::string suite;
  int rows_used = 0, rows_skipped = 0;  ///< skipped: rows the catalog model cannot predict
  double mape_before = 0, mape_after = 0;
};

struct RunFitResult {
  models::Profile profile;
  std::vector<FittedFigure> figures;
  /// Link classes not fitted, with why: a profile holds one achieved figure per class, so a
  /// class whose links differ between the suites' nodes (e.g. two Ethernet speeds) is left alone.
  std::vector<std::string> links_not_fitted;
  /// mape_after is what `validate --profile` reports with the written profile (it chooses the
  /// micro-batch of rows that omit it again); the objective keeps the catalog's choice.
  std::vector<SuiteFit> suites;
  /// Mean |ln(predicted / measured)| over the rows used: the fit's objective (symmetric in
  /// over- and under-prediction, so no row dominates by being slow).
  double objective_before = 0, objective_after = 0;
  /// Figure searches taken from options.resume, and all the fit ran (resumed ones included).
  int searches_resumed = 0, searches = 0;
  /// Why options.resume was not taken though it belongs to this fit ("" when it was, or none was
  /// given): its figures do not give the objective it recorded (an edited or damaged record).
  std::string resume_refused;
};

/// Fits `options.params` per GPU type over every predictable row of `suites` with the analytic
/// model (a row that omits `micro` keeps the micro-batch chosen with the catalog's figures).
/// Throws std::runtime_error when no row can be predicted.
RunFitResult fit_to_runs(const std::vector<models::Suite>& suites, const models::Catalog& catalog,
                         const RunFitOptions& options);

}  // namespace hetsim::calibration
