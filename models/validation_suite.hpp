// SPDX-License-Identifier: Apache-2.0
// Ground-truth validation suites (../shared/validation/README.md, format version 1): reading
// them strictly, turning each row into the project's own Cluster, Workload and Plan, predicting
// every row with an engine, and the per-suite statistics of DESIGN.md "Ground-truth validation".
// Version 2 (heterogeneous systems, explicit plans) adds a row form that builds its Plan from
// `plan:`; the conversion functions below are where it plugs in.
#pragma once
#include <functional>
#include <map>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "catalog.hpp"
#include "cluster.hpp"
#include "plan.hpp"
#include "predictor.hpp"
#include "profile.hpp"
#include "report.hpp"
#include "workload.hpp"

namespace hetsim::models {

/// One node group of a version-2 heterogeneous system (README "Format version 2").
struct SuiteNodeGroup {
  std::string gpu;                    ///< catalog name
  int count = 1;                      ///< nodes in the group
  int gpus_per_node = 1;
  double intra_node_Bps = 0;          ///< per GPU, one direction
  double nic_Bps = 0;                 ///< per NODE, one direction
  int line = 0;                       ///< 1-based line of the group in the file
};

/// Hardware of a suite (or of one row that overrides it): the homogeneous version-1 form, or
/// (version 2) node groups in rank order.
struct SuiteSystem {
  std::vector<SuiteNodeGroup> nodes;  ///< version-2 heterogeneous form; empty in the homogeneous form
  std::string gpu;                    ///< catalog name
  int gpus_per_node = 8;
  double intra_node_Bps = 0;          ///< per GPU, one direction
  double inter_node_Bps = 0;          ///< per GPU share of the node's NICs, one direction
  double inter_node_latency_s = 5e-6; ///< default: one InfiniBand switch hop + NIC (~1-5 us, Mellanox HDR datasheets)
  /// false when a version-2 node group was rejected: its GPUs are not counted, so the rows' GPU
  /// indices are not checked against the total (each beyond it would be one more false error).
  bool groups_complete = true;
};

struct SuiteRow {
  std::string id;
  int line = 0;                       ///< 1-based line of the row in the file
  SuiteSystem system;
  ModelSpec model;
  TrainingSpec training;              ///< global_batch, dtype, flash_attention
  Recompute recompute = Recompute::kFull;
  Schedule schedule = Schedule::k1f1b;
  int tp = 1, pp = 1, dp = 1, interleave = 1, zero = 0;
  bool sequence_parallel = false;
  bool tp_comm_overlap = false;       ///< `parallel.tp_comm_overlap`, an extension of the format (Plan::tp_comm_overlap)
  bool overlap_p2p_comm = false;      ///< `parallel.overlap_p2p_comm`, an extension (Plan::overlap_p2p_comm)
  bool overlap_grad_sync = false;     ///< `parallel.overlap_grad_sync`, an extension (Plan::overlap_grad_sync)
  /// `parallel.sharded_collectives`, an extension (Plan::sharded_collectives; ZeRO-2/3 rows only)
  ShardedCollectives sharded_collectives = ShardedCollectives::kMemberNic;
  std::optional<int> micro;           ///< omitted: the fastest feasible one is chosen
  /// Version 2 `plan:` rows: stages and replicas with global GPU indices (micro_batch and the
  /// replicas' micro_batches are filled by suite_plan()); nullopt for `parallel:` rows.
  std::optional<Plan> plan;
  std::vector<int> micro_batches;     ///< version 2 `plan.micro_batches` (one per replica); empty: even split
  double measured = 0;
  std::string note;
  /// Where the row's plan fields are written: a path relative to the row ("parallel.tp",
  /// "batch.global", "plan.stages[1].replicas[0].gpus") -> 1-based {line, column}. A row whose
  /// plan cannot be built is reported at the field its reason names (suite_field_reason).
  std::map<std::string, std::pair<int, int>> field_at;
};

struct Suite {
  std::string file;
  std::string name;
  std::pair<int, int> name_at{1, 1};  ///< 1-based line and column of the `suite:` value
  std::string source;
  std::string metric = "iteration_time_s";
  int format = 1;
  std::vector<SuiteRow> rows;
};

/// Reads a suite strictly: unknown keys (with did-you-mean), missing keys, wrong types, bare
/// numbers where a unit is required, unknown GPU names, duplicate ids. Throws ConfigError with
/// every problem of the file.
Suite load_suite(const std::string& path, const Catalog& catalog);
Suite parse_suite(std::string_view text, const Catalog& catalog, const std::string& name = "<string>");

/// The cluster of a row: ceil(gpus / gpus_per_node) nodes of one type in one zone; each node
/// has one NIC per GPU carrying the per-GPU inter-node bandwidth (the suite's definition).
/// A system given as node groups (version 2) becomes every node of every group, one node type
/// per group, in one zone (suite_cluster_from_groups, validation_suite_v2.cpp).
Cluster suite_cluster(const SuiteSystem& system, int gpus, const Catalog& catalog);
Cluster suite_cluster_from_groups(const SuiteSystem& system, const Catalog& catalog);
/// GPUs a row uses: tp*pp*dp, or the largest GPU index of its explicit plan + 1.
int suite_row_gpus(const SuiteRow& row);
Workload suite_workload(const Suite& suite, const SuiteRow& row);
/// The Megatron (tp, pp, dp) plan of a row with micro-batch `micro`.
std::variant<Plan, Infeasible> suite_plan(const SuiteRow& row, const Cluster& cluster, const Workload& workload,
                                          int micro);

/// A reason suite_plan() gave, in the suite's words: the plan's own paths ("replicas[0].stages[1].gpus",
/// "training.global_batch", "pp") become the row's ("plan.stages[1].replicas[0].gpus" in version
/// 2, "parallel.tp" in version 1, "batch.global", "parallel.pp"), and `field` names the one to
/// point at (a key of SuiteRow::field_at; empty when none fits).
/// The keys of a row's `parallel:` that a plan check can name (SuiteRow::field_at records where
/// each is written; suite_field_reason maps the Plan's key to it).
inline constexpr const char* kSuiteParallelKeys[] = {"tp",   "pp",          "dp", "interleave", "zero",
                                                     "sequence_parallel", "tp_comm_overlap", "overlap_p2p_comm"};

struct SuiteFieldReason {
  std::string field;
  std::string reason;  ///< "field: what is wrong (expected ...)"
};
SuiteFieldReason suite_field_reason(const SuiteRow& row, const std::string& plan_reason);

/// `engine` on a copy of each cluster with `profile` applied (validate --profile, hetsim fit).
/// `changed`, when given, counts the predictions whose cluster the profile changed (a profile of
/// other GPUs changes none: the caller can say so rather than print the catalog's figures).
PredictFn with_profile(std::shared_ptr<const Profile> profile, PredictFn engine,
                       std::shared_ptr<std::atomic<long>> changed = nullptr);

struct RowResult {
  std::string id;
  double measured = 0;
  std::optional<double> predicted, error;  ///< error = (predicted - measured) / measured
  int micro = 0;                           ///< the micro-batch used (chosen when the row omits it)
  std::string status = "ok";               ///< ok | infeasible | invalid | error
  std::string reason;
  /// Set when the row was predicted although the memory model put it over capacity (the
  /// measured run fit, so the time is still predicted; validation_run.cpp).
  std::string note;
  bool memory_unchecked = false;           ///< predicted on without_memory_limit(cluster) (see `note`)
  std::string model_key;                   ///< e.g. "l30-h3072-a32-s2048"
  std::string location;                    ///< "file:line" of the row, "file:line:col" of the field an invalid row's reason names
  /// Ok rows: ranks 1..n (ties averaged) of the measured and the predicted time among the ok rows
  /// of the same model_key, the ranks spearman_by_model correlates (1 = fastest).
  std::optional<double> rank_measured, rank_predicted;
};

/// The row of a model-size group whose ranks differ most (the largest share of the group's
/// squared rank differences, which set spearman_by_model), or nullptr when the ranks all agree.
struct RankOutlier {
  const RowResult* row = nullptr;
  int group_rows = 0;
};

struct SuiteResult {
  std::string suite;
  int rows_total = 0, rows_failed = 0;
  std::optional<double> mape, max_error, spearman;
  std::map<std::string, std::optional<double>> spearman_by_model;
  std::vector<RowResult> rows;
  /// The row of model-size group `key` most out of order (RankOutlier).
  RankOutlier most_out_of_order(const std::string& key) const;
};

/// "l<layers>-h<hidden>-a<heads>-s<seq_len>" (plus -f<ffn>/-kv<kv> when not the defaults).
std::string model_key(const ModelSpec& m);

RowResult validate_row(const Suite& suite, const SuiteRow& row, const Catalog& catalog, const PredictFn& engine);
/// `row_done(done, total)`, when given, is called after each row (a caller's progress report).
SuiteResult validate_suite(const Suite& suite, const Catalog& catalog, const PredictFn& engine,
                           const std::function<void(std::size_t, std::size_t)>& row_done = {});
/// Mean of the suites' mape (each suite weighs the same); nullopt when none has one.
std::optional<double> mean_mape(const std::vector<SuiteResult>& results);
/// The JSON document of DESIGN.md ("suites": [...], "mape").
std::string validation_json(const std::vector<SuiteResult>& results);
/// A short table per suite for people.
/// The same cluster with GPUs of unbounded memory: how validate_row() predicts a measured row
/// the memory model puts slightly over capacity (the run fit), and how `hetsim fit` must
/// predict that row too.
Cluster without_memory_limit(Cluster cluster);

/// `with_rows` adds one line per predicted row (micro-batch, measured, predicted, error).
std::string validation_table(const std::vector<SuiteResult>& results, bool with_rows = false);

}  // namespace hetsim::models
