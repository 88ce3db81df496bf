// SPDX-License-Identifier: Apache-2.0
// Loaders of the YAML inputs (docs/inputs.md): GPU catalog, cluster, workload and plan files,
// validated strictly and converted to SI units. Every loader collects all the errors of a file
// and throws one ConfigError (file:line:col: error: field: what (expected ...)).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "catalog.hpp"
#include "cluster.hpp"
#include "gpu_type.hpp"
#include "plan.hpp"
#include "workload.hpp"

namespace hetsim::models {

/// What a file is, from its `kind:` key.
enum class InputKind { kGpuCatalog, kCluster, kWorkload, kPlan, kProfile, kSweep };
const char* to_string(InputKind k);  ///< "gpu-catalog" | "cluster" | "workload" | "plan" | "profile" | "sweep"

/// Reads only the `kind:` of a file. Throws ConfigError when the file cannot be read,
/// is not YAML, or has no valid `kind:`.
InputKind peek_kind(const std::string& path);
InputKind peek_kind_text(std::string_view text, const std::string& name = "<string>");

// ---- GPU catalog ------------------------------------------------------------------------
/// The device types of one `kind: gpu-catalog` file.
std::vector<GpuType> load_catalog_file(const std::string& path);
std::vector<GpuType> parse_catalog(std::string_view text, const std::string& name = "<string>");
/// Every `*.yaml` (or `*.yml`) file of a directory, in name order; a type defined twice is an error.
Catalog load_catalog_dir(const std::string& dir);
/// Whether load_catalog_dir reads a file of that name: ".yaml" or ".yml", in any case (a
/// catalog written as gpus.yml was skipped, and the cluster then met "unknown GPU" with no hint),
/// not a hidden file (a name starting with a dot).
bool is_catalog_file_name(const std::string& file_name);

// ---- cluster, workload ------------------------------------------------------------------
/// A finalized cluster (nodes and GPUs derived, GPU types copied from the catalog).
Cluster load_cluster(const std::string& path, const Catalog& catalog);
Cluster parse_cluster(std::string_view text, const Catalog& catalog, const std::string& name = "<string>");

Workload load_workload(const std::string& path);
Workload parse_workload(std::string_view text, const std::string& name = "<string>");

// ---- plan -------------------------------------------------------------------------------
/// A plan as written, before its GPU selectors are resolved against a cluster:
/// `plan.replicas[r].stages[s].gpus` holds only the integer indices written in the file,
/// `gpus_text[r][s]` the stage's `gpus` value as written (e.g. "us-east/dgx[0]/gpu[0-7]").
struct PlanSpec {
  Plan plan;
  std::vector<std::vector<std::string>> gpus_text;
};
PlanSpec load_plan_spec(const std::string& path);
PlanSpec parse_plan_spec(std::string_view text, const std::string& name = "<string>");

/// A plan resolved against its cluster and checked against both (check_plan()); errors
/// point to the line:col of the offending field. With `infeasible_reason`, a TP degree that
/// does not divide a dimension of the model (heads, kv_heads, ffn_hidden, seq_len under sequence
/// parallelism) is no error when it is the file's only kind of problem: the plan is returned
/// and the reason, "file:line:col: field: what", says why it cannot run (empty when it can).
Plan load_plan(const std::string& path, const Cluster& cluster, const Workload& workload,
               std::string* infeasible_reason = nullptr);
Plan parse_plan(std::string_view text, const Cluster& cluster, const Workload& workload,
                const std::string& name = "<string>", std::string* infeasible_reason = nullptr);

/// The inputs a plan file was written for, from its leading comment block:
///   # cluster: mixed-a100-v100          (a name: clusters/<name>.yaml)
///   # workload: workloads/llama2-7b.yaml (or a path)
/// (both may share one line). Names and relative paths are looked up in the plan file's folder
/// and then its ancestors, nearest first, so `plans/p.yaml` finds the repository's
/// `clusters/`; the returned strings are the paths found (as written when not found), empty
/// when the header does not name them.
struct PlanHeader {
  std::string cluster;
  std::string workload;
  int cluster_line = 0;   ///< 1-based line of the header comment that names it (0: none)
  int workload_line = 0;
  /// A later header line naming another cluster or workload than the first one did (which is
  /// the one used): a plan edited by hand, whose two headers cannot both be right.
  struct Conflict {
    int line = 0;
    std::string what, name;  ///< "cluster" or "workload", and the name that line gives
  };
  std::vector<Conflict> conflicts;
  /// Text after a header's name that is neither the other key nor a '# comment' ("# cluster:
  /// local-cpu dgx-a100" used local-cpu, silently): each is reported.
  struct Extra {
    int line = 0, col = 0;   ///< 1-based, where the text starts
    std::string what, text;  ///< the key it follows ("cluster" or "workload"), the text
  };
  std::vector<Extra> extras;
};
PlanHeader read_plan_header(const std::string& plan_path);

}  // namespace hetsim::models
