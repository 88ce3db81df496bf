// SPDX-License-Identifier: Apache-2.0
// Running a cluster-design sweep (models/sweep_spec.hpp): every workload is planned on every
// grid point's cluster with the planner, and the best plan and the two homogeneous baselines
// become one result row. Finished rows go to a JSON-lines checkpoint, so a killed sweep resumes
// where it stopped; the results are written as CSV (docs/sweep.md).
#pragma once
#include <stdexcept>
#include <functional>
#include <string>
#include <vector>

#include "catalog.hpp"
#include "json_writer.hpp"
#include "cluster.hpp"
#include "plan_refine.hpp"
#include "planner.hpp"
#include "profile.hpp"
#include "sweep_spec.hpp"
#include "workload.hpp"

namespace hetsim::models {

struct SweepRow {
  long point = 0;                      ///< grid index (sweep_point)
  std::string workload;                ///< workload name
  std::vector<std::string> values;     ///< per axis, the value as written in the spec
  int gpus = 0;                        ///< GPUs of the point's cluster
  double cluster_price_per_hour = 0;   ///< the whole point's cluster, on demand (or spot)
  bool found = false;                  ///< a plan was found
  std::string reason;                  ///< why not (or, for a found plan, why it has no simulated figure)
  double tokens_per_s = 0;             ///< best plan (predicted)
  /// --refine: the simulator's tokens/s of the best plan, which is the best of the planner's
  /// first K by this figure; 0 when not refined or the simulator gave none (`reason` says why).
  double simulated_tokens_per_s = 0;
  /// The best plan's tokens/s if its pipeline sends of one parity, which 1F1B passes through a
  /// node's NIC at once, coincide in every slot (lockstep_parity_figure); 0 when that figure is
  /// less than kLockstepNoteRatio slower than tokens_per_s, or there is none.
  double lockstep_tokens_per_s = 0;
  double mfu = 0;
  double plan_price_per_hour = 0;      ///< nodes the best plan uses
  double cost_per_million_tokens = 0;
  int plan_gpus = 0;                   ///< GPUs the best plan uses
  std::string shape;                   ///< the best plan's shape (planner notation)
  bool joins_vendors = false;          ///< the best plan joins NVIDIA and AMD GPUs (models::joins_vendors)
  double uniform_tokens_per_s = 0;     ///< baselines; 0 when none fits (or, objective budget,
  double fastest_type_only_tokens_per_s = 0;  ///< none within the budget)
  /// The baselines' $ per million tokens (objective cost compares these); 0 when none fits.
  double uniform_cost_per_million_tokens = 0;
  double fastest_type_only_cost_per_million_tokens = 0;
  /// Objective budget: the baseline fits but costs more than the budget (its figures are 0).
  bool uniform_over_budget = false;
  bool fastest_type_only_over_budget = false;
  double search_time_s = 0;
  bool search_stopped = false;         ///< a search (or --refine) reached --time-limit: the plan may not be the best
  bool resumed = false;                ///< taken from the checkpoint, not planned by this run
};

struct SweepRunOptions {
  PlannerOptions planner;              ///< objective, budget and spot are taken from the spec
  std::string checkpoint_path;         ///< JSON lines of finished rows; empty: no checkpoint
  const Profile* profile = nullptr;    ///< applied to every point's cluster (sweep_cluster)
  /// Identity of the profile's content (file_fingerprint of its file), part of every row's
  /// checkpoint key: rows planned with another profile, or none, are not reused.
  std::string profile_fingerprint;
  /// Identity of the GPU catalog's content (catalog_fingerprint): rows planned with other GPU
  /// figures are not reused. Empty: not part of the key.
  std::string catalog_fingerprint;
  /// Identity of the cost model (cost_model_fingerprint()): rows planned by another build of
  /// hetsim are not reused. Empty: not part of the key.
  std::string model_fingerprint;
  /// Re-rank each row's best `refine` plans with `refine_engine` (the simulator) and report the
  /// winner (plan_refine.hpp); 0 or no engine: the analytic best. Part of every row's key.
  int refine = 0;
  TimedPredictFn refine_engine;  ///< given what is left of the row's --time-limit
  /// Called after each row (resumed rows too), in grid order.
  std::function<void(const SweepRow&, long done, long total)> on_row;
};

struct SweepResult {
  std::vector<SweepRow> rows;          ///< grid order, workloads in spec order within a point
  long resumed = 0;
};

/// A file's content identity: its size and 64-bit FNV-1a hash (Fowler, Noll, Vo; IETF draft
/// draft-eastlake-fnv), in hex; "" when it cannot be read.
std::string file_fingerprint(const std::string& path);
/// The content identity of a catalog folder: the names and file_fingerprint of its *.yaml
/// files (those load_catalog_dir reads), in name order, hashed.
std::string catalog_fingerprint(const std::string& dir);

/// A checkpoint record's identity: what decides a row's result: objective, budget, spot, the
/// contents of the cluster, workload and profile files (not their paths: a sweep resumed from
/// another folder, or after an edit, is judged by what it reads), every axis value, and the
/// --refine depth when there is one (a refined row is not an analytic one, nor the reverse), and
/// the GPU catalog's and the cost model's identities when given.
std::string sweep_row_key(const SweepSpec& spec, const std::string& cluster_fingerprint,
                          const std::string& workload_fingerprint, const std::string& profile_fingerprint,
                          const std::vector<std::string>& values, int refine = 0,
                          const std::string& catalog_fingerprint = "", const std::string& model_fingerprint = "");

/// A checkpoint file with JSON lines none of which is a sweep row (a calibrate checkpoint, say):
/// run_sweep refuses it rather than append rows to someone else's file.
struct ForeignCheckpoint : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// Runs (or resumes) the sweep. `workloads` are the loaded spec.workload_paths, in order.
/// Throws ForeignCheckpoint before planning anything (the checkpoint is read once, here).
SweepResult run_sweep(const SweepSpec& spec, const Cluster& base, const std::vector<Workload>& workloads,
                      const Catalog& catalog, const SweepRunOptions& options);

/// The rows as CSV (RFC 4180 quoting), one header line naming the axes' columns.
std::string sweep_csv(const SweepSpec& spec, const std::vector<SweepRow>& rows);
/// One row as a JSON object (its point's axis values under "values"), into `j`.
void write_sweep_row_json(JsonOut& j, const SweepSpec& spec, const SweepRow& row);

}  // namespace hetsim::models
