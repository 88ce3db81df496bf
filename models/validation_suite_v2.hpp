// SPDX-License-Identifier: Apache-2.0
// Internals of the version-2 suite reader (../shared/validation/README.md "Format version 2"):
// node-group systems and explicit `plan:` rows. Used by validation_suite.cpp only.
#pragma once
#include <optional>
#include <variant>
#include <vector>

#include "validation_suite.hpp"
#include "yaml_reader.hpp"

namespace hetsim::models::detail {

/// Records where a row's field is written (SuiteRow::field_at); a null mark (the key is absent)
/// records nothing.
void mark_field(SuiteRow& row, const std::string& field, const YAML::Mark& at);

/// Reads a `system:` map given as node groups (`nodes:` + optional `inter_node_latency`).
void read_system_groups(MapReader& m, SuiteSystem& system, const Catalog& catalog);

/// A row's `plan:` as written, with where each part was written, kept for the cross-checks
/// that need the row's system, model and batch (all read after the plan).
struct RowPlanInput {
  struct RawStage {
    int layers = 0;
    YAML::Mark at, layers_at, replicas_at;
    std::vector<std::vector<int>> replicas;                ///< per replica: global GPU indices
    std::vector<std::vector<YAML::Mark>> gpu_at;           ///< per replica: each index's mark
  };
  std::string path;                                        ///< "rows[3].plan"
  YAML::Mark at, stages_at, micro_batches_at;
  std::vector<RawStage> stages;
  bool complete = true;                                    ///< false when a part could not be read
  /// false when a GPU index could not be read: the other checks still run (the file's errors
  /// are reported at once), the plan is not built.
  bool gpus_complete = true;
};

/// Reads a row's `plan:` (stages, optional micro_batches) into `input` and row.micro_batches.
void read_row_plan(MapReader& m, RowPlanInput& input, SuiteRow& row);

/// Cross-checks of a `plan:` row against its system, model and batch, each reported at the
/// line:col of the offending value: GPU index out of range, GPU used twice, unequal replica
/// counts across stages, stage layers not summing to model.layers, micro-batch counts not
/// summing to batch.global. A TP group spanning nodes is valid (slow, not wrong). When every
/// check passes, sets row.plan (replica r of every stage forms pipeline r), row.pp and row.dp.
void check_row_plan(const RowPlanInput& input, SuiteRow& row, DiagnosticSink& sink);

/// The Plan of a `plan:` row with micro-batch `micro`: the row's stages and replicas, its
/// micro_batches (or an even split of the global batch), its training options.
std::variant<Plan, Infeasible> suite_explicit_plan(const SuiteRow& row, const Cluster& cluster,
                                                  const Workload& workload, int micro);

}  // namespace hetsim::models::detail
