// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the verbs of the `hetsim` executable: the --format option, loading the
// three inputs (bad input -> ConfigError -> exit 2 in main) and a text table. JSON output uses
// models::JsonOut (models/json_writer.hpp), the one JSON writer of the project.
#pragma once
#include <cmath>
#include <CLI/CLI.hpp>

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster.hpp"
#include "diagnostics.hpp"
#include "input_loader.hpp"
#include "option_checks.hpp"
#include "output_paths.hpp"
#include "units.hpp"
#include "plan.hpp"
#include "report.hpp"
#include "validation_suite.hpp"
#include "workload.hpp"

namespace hetsim::cli {

// ---- --format ---------------------------------------------------------------------------
enum class OutputFormat { kTable, kJson, kCsv };
const char* to_string(OutputFormat f);

/// Adds `--format` to a verb (default table); `allowed` lists the formats the verb writes.
/// Any other value is rejected by CLI11 (exit code 2) with the allowed values listed.
CLI::Option* add_format_option(CLI::App* verb, OutputFormat* format,
                               const std::vector<OutputFormat>& allowed = {OutputFormat::kTable, OutputFormat::kJson});

// ---- inputs -----------------------------------------------------------------------------
// Input-file options take no CLI::ExistingFile check: the loaders report a missing file or a
// folder as `path: error: ...` like any other input error, together with the other files'.
/// Each throws models::ConfigError (main prints it and exits 2) when the file is bad.
models::Cluster load_cluster_file(const std::string& path);  ///< with the built-in GPU catalog
models::Workload load_workload_file(const std::string& path);
/// `infeasible_reason`: see models::load_plan (a TP degree that does not divide the model).
models::Plan load_plan_file(const std::string& path, const models::Cluster& cluster, const models::Workload& workload,
                            std::string* infeasible_reason = nullptr);

/// The usual inputs of a verb. Loads every file given and reports the errors of all of
/// them together (one ConfigError) before anything runs.
struct Inputs {
  models::Cluster cluster;
  models::Workload workload;
  std::optional<models::Plan> plan;  ///< when plan_path is not empty
  /// The plan file's plan is well formed but cannot run this workload (a TP degree that does
  /// not divide the model): "file:line:col: field: what"; empty when it can.
  std::string plan_infeasible_reason;
  /// When a profile was applied: which, and its provenance, for the Report's notes (a saved
  /// Report must say whether its figures are the catalog's or calibrated ones).
  std::string profile_note;
};
/// Ground-truth suites; the errors of every file together (ConfigError).
/// `earlier`, when given, holds errors found before (a --profile's): they are reported together
/// with the suites' (s60 hunt: a bad profile hid every suite error).
std::vector<models::Suite> load_suite_files(const std::vector<std::string>& paths, const models::Catalog& catalog,
                                            models::DiagnosticCollector* earlier = nullptr);
/// A profile none of whose device types and link classes the cluster uses changes nothing: the
/// figures printed would be the catalog's, presented as calibrated (a profile of another
/// cluster). The error that says so, naming what the cluster has.
models::Diagnostic profile_matching_nothing(const std::string& path, const models::Profile& profile,
                                            const models::Cluster& cluster,
                                            const std::vector<std::string>& swept_devices = {});
/// A profile (models/profile.hpp), when profile_path is not empty, is applied to the cluster.
Inputs load_inputs(const std::string& cluster_path, const std::string& workload_path, const std::string& plan_path = "",
                   const std::string& profile_path = "");
using models::utc_now;
/// Adds `--profile FILE` to a verb.
CLI::Option* add_profile_option(CLI::App* verb, std::string* path);

/// One figure through a printf format ("%.0f"), for the verbs' tables.
std::string fmt(const char* format, double v);

// ---- output -----------------------------------------------------------------------------

/// Left-aligned text columns for --format table; numeric-looking cells are right-aligned.
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void add_row(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  /// Keeps a column's cells left-aligned even when they start like numbers (plan shapes: "2x[...]").
  void left_align(size_t column) { left_.push_back(column); }
  void print(std::ostream& out, const std::string& indent = "") const;

 private:
  std::vector<std::string> header_;
  std::vector<size_t> left_;
  std::vector<std::vector<std::string>> rows_;
};

/// In-process runs (threads as ranks): a note on stderr when the plan's ranks on CPU devices outnumber the CPUs
/// this process may use. Ranks then share cores, and every collective or receive also waits for
/// peers the OS has descheduled: measured communication (and `check`) reads high.
void note_if_ranks_share_cores(const char* verb, const models::Cluster& cluster, const models::Plan& plan);
/// A note on stderr when other work loads the machine (/proc/loadavg's one-minute figure above
/// the CPUs this process may use): what a measurement then gets is a share of a core, so the
/// times are slow by an amount that changes from run to run. `consequence` says what it does
/// to this verb's result.
void note_if_machine_busy(const char* verb, const std::string& consequence);
/// A verb that ends without its result (exit 1, not an input error: "error:" is for exit 2):
/// "hetsim <verb>: <said>" on stderr and, for --format json, {"<json_flag>": false, "reason"} on
/// stdout, where scripts read the result.
[[noreturn]] void exit_with_reason(const char* verb, const char* json_flag, const std::string& said,
                                   const std::string& reason, OutputFormat format);
/// Whether a checkpoint can be appended to: false when `path` cannot be opened for appending. A
/// file that did not exist is removed again (the job's first record makes it), so that a job that
/// then stops on another error leaves no empty checkpoint behind.
bool checkpoint_writable(const std::string& path);
/// A note on stderr when the model puts `steps` steps of the plan at more than ten minutes: the
/// run prints nothing until it ends, so the user learns up front what the wait will be (and that
/// Ctrl-C loses nothing they have, the files being written only at the end).
void note_if_long_run(const char* verb, const models::Report& predicted, int steps);
/// The line of /proc/loadavg ("1.78 2.53 6.66 1/79 1068"); empty where there is none.
std::string load_average_line();
/// Exit 1 with the model's reason when it finds the plan infeasible (run and check start nothing
/// it would not fit or price).
void refuse_if_infeasible(const char* verb, const models::Report& predicted);
/// In-process runs: exit 1 when the plan's ranks on CPU devices, which are threads of this process
/// and share this host's memory, need more in all than the host has available (/proc/meminfo
/// MemAvailable). Each rank needs its stage's peak memory per device of `predicted` (the cost
/// model's, as the device capacity check uses); a device's catalog `memory` is a share the user
/// chose, so 512 ranks of 4 GiB each pass that check on a 23 GiB machine and then swap or are
/// killed. Nothing is checked where /proc/meminfo cannot be read.
/// With --format json the reason also goes to stdout as a Report (print_refused_report, engine
/// "exec"), where a script reads it.
void refuse_if_host_memory_short(const char* verb, const models::Cluster& cluster, const models::Plan& plan,
                                 const models::Report& predicted, OutputFormat format);

/// A Report that says only why no figure is given ("feasible": false, its reason), printed in
/// `format` on stdout, where scripts read the Report: every exit-1 refusal of a verb that prints
/// a Report prints this one with --format json (a script's json.load found an empty stdout).
void print_refused_report(const std::string& engine, const std::string& reason, OutputFormat format);
/// Host memory of an in-process rank besides its device memory: its thread's stack, communicator
/// queues and staging buffers. Measured (2026-12-05): a 1-layer, 64-wide model at --dp 1024 took
/// 2.76 GB of RSS, 2.7 MB a rank, where the model's device memory is a few KB; --dp 8192 would
/// have met the OOM killer on a 23 GB machine instead of a refusal.
inline constexpr double kRankHostOverheadBytes = 4.0 * (1 << 20);
/// What refuse_if_host_memory_short says for a host with `available_bytes` (the model's peak per
/// device plus kRankHostOverheadBytes, over the CPU ranks); nullopt when the plan's CPU ranks fit
/// (or it has none, or the model finds it infeasible).
std::optional<std::string> host_memory_shortfall(const models::Cluster& cluster, const models::Plan& plan,
                                                 const models::Report& predicted, double available_bytes);
/// A plan header's second line naming another cluster or workload than the first (which would
/// be the one used), each at its line (docs/inputs.md "Header comment").
std::vector<models::Diagnostic> plan_header_conflicts(const std::string& plan, const models::PlanHeader& header);
/// Why the file a plan's header names for `what` ("cluster", "workload") cannot be loaded, at the
/// header's line: missing (with where it was looked for), a folder, or unreadable (a symlink
/// loop); nullopt when it exists.
std::optional<models::Diagnostic> plan_header_file_problem(const std::string& plan, const std::string& named, int line,
                                                           const char* what);

/// MemAvailable of /proc/meminfo in bytes; nullopt where there is none.
std::optional<double> available_host_memory_bytes();

/// "$1,234.56/h"-style money and "1.23e+12"-free counts ("6.74B", "1.38T") for tables.
std::string format_price_per_hour(double dollars_per_hour);
std::string format_count(double n);
/// An amount of work: "42.1 GFLOP" (models::format_flops without the "/s").
std::string format_work(double flop);

}  // namespace hetsim::cli
