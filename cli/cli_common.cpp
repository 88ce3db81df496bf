// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the verbs: --format, input loading, JSON and text tables.
#include "cli_common.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cfloat>
#include <cmath>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <set>
#include <ostream>

#include "catalog.hpp"
#include "diagnostics.hpp"
#include "input_loader.hpp"
#include "json_writer.hpp"
#include "planner.hpp"
#include "profile.hpp"
#include "units.hpp"
#include "yaml_reader.hpp"
#include "verbs.hpp"

namespace hetsim::cli {

const char* to_string(OutputFormat f) {
  switch (f) {
    case OutputFormat::kTable: return "table";
    case OutputFormat::kJson: return "json";
    case OutputFormat::kCsv: return "csv";
  }
  return "?";
}

CLI::Option* add_format_option(CLI::App* verb, OutputFormat* format, const std::vector<OutputFormat>& allowed) {
  std::vector<std::string> names;
  std::string list;
  for (OutputFormat f : allowed) {
    names.emplace_back(to_string(f));
    list += list.empty() ? to_string(f) : std::string("|") + to_string(f);
  }
  *format = allowed.empty() ? OutputFormat::kTable : allowed.front();
  return verb
      ->add_option_function<std::string>(
          "--format",
          [format, allowed](const std::string& value) {
            for (OutputFormat f : allowed)
              if (value == to_string(f)) *format = f;
          },
          "Output format: " + list + " (default " + to_string(*format) + ")")
      ->check(CLI::IsMember(names));
}

// ---- inputs -----------------------------------------------------------------------------

models::Cluster load_cluster_file(const std::string& path) {
  return models::load_cluster(path, models::Catalog::builtin());
}

models::Workload load_workload_file(const std::string& path) { return models::load_workload(path); }

models::Plan load_plan_file(const std::string& path, const models::Cluster& cluster, const models::Workload& workload,
                            std::string* infeasible_reason) {
  return models::load_plan(path, cluster, workload, infeasible_reason);
}

models::Diagnostic profile_matching_nothing(const std::string& path, const models::Profile& profile,
                                            const models::Cluster& cluster,
                                            const std::vector<std::string>& swept_devices) {
  std::set<std::string> devices(swept_devices.begin(), swept_devices.end()), links;
  for (const models::NodeType& nt : cluster.node_types) {
    devices.insert(nt.gpu.name);
    links.insert(models::to_string(nt.intra.kind));
    if (nt.nics.count > 0) links.insert(models::to_string(nt.nics.kind));
  }
  const auto join = [](const std::set<std::string>& names) {
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
  };
  // At the profile's `devices:` key (else `links:`), where the names it gives are: a line and a
  // field, as every other error of an input file has.
  YAML::Mark at = YAML::Mark::null_mark();
  std::string field;
  try {
    const YAML::Node doc = YAML::LoadFile(path);
    models::DiagnosticSink unused(path);
    const models::MapReader root(doc, "", unused, doc.Mark());
    for (const char* key : {"devices", "links"})
      if (field.empty() && root.key_mark(key).line >= 0) at = root.key_mark(key), field = key;
  } catch (const YAML::Exception&) {
    // load_profile read the file already; without it the error has no position
  }
  models::DiagnosticSink sink(path);
  sink.error(at, field,
             "profile '" + profile.name + "' names no device type or link class of cluster '" + cluster.name +
                 (swept_devices.empty() ? "'" : "' or of the GPU types its sweep swaps in") +
                 " and would change nothing (expected a profile of its device types " + join(devices) +
                 " or link classes " + join(links) + ")");
  return sink.get_diagnostics().front();
}

namespace {

/// A profile of device figures that leaves out some of the plan's device types: those are priced
/// at the catalog's figures, which a calibrated check reads as the model's miss (a CPU profile
/// without cpu-scalar gave "FAIL: -63.9%" with nothing said; s57 bad-input hunt).
void note_devices_the_profile_misses(const std::string& profile_path, const models::Profile& profile,
                                     const models::Cluster& cluster, const models::Plan& plan) {
  std::vector<std::string> missing;
  for (const models::Replica& r : plan.replicas)
    for (const models::Stage& st : r.stages)
      for (int g : st.gpus) {
        if (g < 0 || g >= cluster.gpu_count()) continue;
        const std::string& type = cluster.gpu_type(g).name;
        if (!profile.devices.contains(type) && std::find(missing.begin(), missing.end(), type) == missing.end())
          missing.push_back(type);
      }
  if (missing.empty()) return;
  std::string list;
  for (const std::string& m : missing) list += (list.empty() ? "" : ", ") + m;
  std::cerr << "hetsim: note: " << profile_path << ": no figures for " << list
            << ", which the plan runs on: priced at the catalog's figures, not calibrated ones\n";
}

/// The two files hold the same bytes (a copy of the cluster the plan's header names is that cluster).
/// Regular files only: a FIFO given as --cluster was read already, and opening it again would wait.
bool same_content(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(a, ec) || !std::filesystem::is_regular_file(b, ec)) return false;
  std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
  if (!fa || !fb) return false;
  return std::equal(std::istreambuf_iterator<char>(fa), std::istreambuf_iterator<char>(),
                    std::istreambuf_iterator<char>(fb), std::istreambuf_iterator<char>());
}

}  // namespace

Inputs load_inputs(const std::string& cluster_path, const std::string& workload_path, const std::string& plan_path,
                   const std::string& profile_path) {
  Inputs in;
  models::DiagnosticCollector errors;
  const bool cluster_ok = errors.collect([&] { in.cluster = load_cluster_file(cluster_path); });
  const bool workload_ok = errors.collect([&] { in.workload = load_workload_file(workload_path); });
  if (!plan_path.empty()) {
    if (cluster_ok && workload_ok) {
      const bool plan_ok = errors.collect(
          [&] { in.plan = load_plan_file(plan_path, in.cluster, in.workload, &in.plan_infeasible_reason); });
      const models::PlanHeader header = models::read_plan_header(plan_path);
      std::error_code ec;
      if (!header.cluster.empty() && std::filesystem::exists(header.cluster, ec) &&
          !std::filesystem::equivalent(header.cluster, cluster_path, ec)) {
        // A plan written for another cluster fails at every selector: say which one it names. A
        // copy of that cluster (the same bytes under another path) is that cluster: the hint,
        // beside the plan's own errors, misled (s63 message hunt).
        if (!plan_ok && !same_content(header.cluster, cluster_path))
          errors.add({plan_path, header.cluster_line, 1, "cluster",
                      "the plan was written for '" + header.cluster + "', not for --cluster '" + cluster_path +
                          "' (expected that cluster, or a plan of this one: `hetsim plan --emit-plan`)"});
        else if (plan_ok)  // --cluster wins, as documented; the header may still be a slip
          std::cerr << "hetsim: note: " << plan_path << ": the plan's header names cluster '" << header.cluster
                    << "'; it was checked against --cluster '" << cluster_path << "'\n";
      }
      // A plan fits several workloads of the same depth and batch: --workload wins, as --cluster
      // does, and the note says so (a plan of llama2-7b was predicted for gpt3-6.7b silently).
      if (plan_ok && !header.workload.empty() && std::filesystem::exists(header.workload, ec) &&
          !std::filesystem::equivalent(header.workload, workload_path, ec))
        std::cerr << "hetsim: note: " << plan_path << ": the plan's header names workload '" << header.workload
                  << "'; --workload '" << workload_path << "' is used instead\n";
    } else {
      errors.collect([&] { models::load_plan_spec(plan_path); });  // still report the plan's own errors
    }
  }
  if (!profile_path.empty()) {
    models::Profile profile;
    bool applied = false;
    if (errors.collect([&] { profile = models::load_profile(profile_path); }) && cluster_ok) {
      const std::vector<std::string> unmet = models::nic_latencies_under_fabric(in.cluster, profile);
      applied = models::apply_profile(in.cluster, profile) > 0;
      if (!applied) errors.add(profile_matching_nothing(profile_path, profile, in.cluster));
      for (const std::string& u : unmet) std::cerr << "hetsim: note: " << profile_path << ": " << u << '\n';
    }
    in.profile_note = "figures of profile '" + profile.name + "' (" + profile_path + ") over the catalog's: " + profile.source;
    // Only beside a profile that applies: before the error that it matches nothing, it misled.
    if (applied && in.plan && !profile.devices.empty())
      note_devices_the_profile_misses(profile_path, profile, in.cluster, *in.plan);
  }
  errors.throw_if_any();
  return in;
}

CLI::Option* add_profile_option(CLI::App* verb, std::string* path) {
  return verb->add_option("--profile", *path,
                          "Calibrated profile (kind: profile, from `hetsim calibrate` or `hetsim fit`) overriding the catalog's "
                          "efficiencies and link figures");
}

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// ---- text table -------------------------------------------------------------------------

void TextTable::print(std::ostream& out, const std::string& indent) const {
  std::vector<size_t> width(header_.size(), 0);
  const auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], row[i].size());
  };
  measure(header_);
  for (const auto& r : rows_) measure(r);
  const auto numeric = [](const std::string& s) {
    return !s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '$' || s[0] == '-');
  };
  const auto print_row = [&](const std::vector<std::string>& row, bool is_header) {
    std::string line = indent;
    for (size_t i = 0; i < width.size(); ++i) {
      const std::string cell = i < row.size() ? row[i] : "";
      const std::string pad(width[i] - cell.size(), ' ');
      const bool left = is_header || std::find(left_.begin(), left_.end(), i) != left_.end();
      line += (!left && numeric(cell)) ? pad + cell : cell + pad;
      if (i + 1 < width.size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  };
  print_row(header_, true);
  for (const auto& r : rows_) print_row(r, false);
}

void note_if_ranks_share_cores(const char* verb, const models::Cluster& cluster, const models::Plan& plan) {
  // Ranks on CPU devices compute on the cores; a GPU rank's thread mostly waits on its device.
  int ranks = 0;
  for (const auto& replica : plan.replicas)
    for (const auto& stage : replica.stages)
      for (const int gpu : stage.gpus) ranks += cluster.gpu_type(gpu).vendor == models::Vendor::kCpu;
  const int cpus = models::search_threads(models::PlannerOptions{});  // the process's affinity mask
  if (ranks <= cpus) return;
  std::cerr << "hetsim " << verb << ": note: " << ranks << " ranks on " << cpus
            << " CPUs: ranks share cores, so measured communication includes waits for descheduled peers\n";
}

std::string load_average_line() {
  std::string line;
  if (std::ifstream in("/proc/loadavg"); in) std::getline(in, line);
  return line;
}

void refuse_if_infeasible(const char* verb, const models::Report& predicted) {
  if (predicted.feasible) return;
  std::cerr << "hetsim " << verb << ": the model finds the plan infeasible: " << predicted.infeasible_reason << '\n';
  throw VerbExit{kExitFailure};
}

std::vector<models::Diagnostic> plan_header_conflicts(const std::string& plan, const models::PlanHeader& header) {
  std::vector<models::Diagnostic> out;
  for (const models::PlanHeader::Conflict& c : header.conflicts) {
    const bool is_cluster = c.what == "cluster";
    out.push_back({plan, c.line, 1, c.what,
                   "the header names " + c.what + " '" + c.name + "' after '" +
                       (is_cluster ? header.cluster : header.workload) + "' on line " +
                       std::to_string(is_cluster ? header.cluster_line : header.workload_line) + " (expected one " +
                       c.what + " in the header)"});
  }
  for (const models::PlanHeader::Extra& e : header.extras)
    out.push_back({plan, e.line, e.col, e.what,
                   "'" + e.text + "' after the header's " + e.what +
                       " name (expected one name, a path with blanks in double quotes, then nothing or a '# comment')"});
  return out;
}

std::optional<models::Diagnostic> plan_header_file_problem(const std::string& plan, const std::string& named, int line,
                                                           const char* what) {
  std::error_code ec;
  if (std::filesystem::is_directory(named, ec))  // the loader would report it as the folder's own error, lines away
    return models::Diagnostic{plan, line, 1, "",
                              std::string("header names ") + what + " '" + named + "', which is a folder (expected a " +
                                  what + " file, or its name)"};
  if (std::filesystem::exists(named, ec)) return std::nullopt;
  if (ec && ec != std::errc::no_such_file_or_directory)  // a symlink loop, a folder it may not enter
    return models::Diagnostic{plan, line, 1, "",
                              std::string("header names ") + what + " '" + named + "', which cannot be read: " +
                                  ec.message() + " (expected a readable " + what + " file)"};
  // A bare name is also looked up as <what>s/NAME.yaml (read_plan_header).
  const bool bare = named.find('/') == std::string::npos && std::filesystem::path(named).extension() != ".yaml";
  return models::Diagnostic{plan, line, 1, "",
                            std::string("header names ") + what + " '" + named + "', but " +
                                (bare ? "neither " + std::string(what) + "s/" + named + ".yaml nor " + named
                                      : "no " + named) +  // "but x.yaml exists" read as the opposite
                                " exists beside the plan or in a folder above it (expected a " + what +
                                " name or path, or --" + what + " FILE)"};
}

std::optional<double> available_host_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kib = 0;
  std::string unit;
  while (in >> key >> kib) {
    std::getline(in, unit);  // " kB"
    if (key == "MemAvailable:") return kib * 1024.0;
  }
  return std::nullopt;
}

std::optional<std::string> host_memory_shortfall(const models::Cluster& cluster, const models::Plan& plan,
                                                 const models::Report& predicted, double available_bytes) {
  if (!predicted.feasible) return std::nullopt;  // refuse_if_infeasible says why
  double needed_bytes = 0;
  int ranks = 0;
  for (const models::StageReport& sr : predicted.stages) {
    if (sr.replica < 0 || sr.replica >= static_cast<int>(plan.replicas.size())) continue;
    const auto& stages = plan.replicas[sr.replica].stages;
    if (sr.stage < 0 || sr.stage >= static_cast<int>(stages.size())) continue;
    for (const int gpu : stages[sr.stage].gpus)
      if (cluster.gpu_type(gpu).vendor == models::Vendor::kCpu) needed_bytes += sr.memory_bytes, ++ranks;
  }
  needed_bytes += ranks * kRankHostOverheadBytes;
  if (ranks == 0 || needed_bytes <= available_bytes) return std::nullopt;
  return "the plan's " + std::to_string(ranks) + " ranks on CPU devices need " + models::format_size(needed_bytes) +
         " of host memory in all (the model's peak per device and 4 MiB of the engine's own per rank, " +
         models::format_size(needed_bytes / ranks) + " a rank on average), and this machine has " + models::format_size(available_bytes) +
         " available (/proc/meminfo MemAvailable): nothing was started (expected a plan with fewer ranks or a "
         "smaller workload; under mpirun the ranks can be spread over hosts)";
}

void refuse_if_host_memory_short(const char* verb, const models::Cluster& cluster, const models::Plan& plan,
                                 const models::Report& predicted, OutputFormat format) {
  const std::optional<double> available_bytes = available_host_memory_bytes();
  if (!available_bytes) return;
  if (const auto why = host_memory_shortfall(cluster, plan, predicted, *available_bytes)) {
    if (format == OutputFormat::kJson) print_refused_report("exec", *why, format);
    std::cerr << "hetsim " << verb << ": " << *why << '\n';
    throw VerbExit{kExitFailure};
  }
}

void print_refused_report(const std::string& engine, const std::string& reason, OutputFormat format) {
  models::Report refused;
  refused.engine = engine;
  refused.feasible = false;
  refused.infeasible_reason = reason;
  std::cout << (format == OutputFormat::kJson ? models::to_json(refused) : models::to_table(refused));
}

void exit_with_reason(const char* verb, const char* json_flag, const std::string& said, const std::string& reason,
                      OutputFormat format) {
  if (format == OutputFormat::kJson) {
    models::JsonOut j;
    j.begin_object().key(json_flag).value(false).key("reason").value(reason).end_object();
    std::cout << j.str();
  }
  std::cerr << "hetsim " << verb << ": " << said << '\n';
  throw VerbExit{kExitFailure};
}

void note_if_machine_busy(const char* verb, const std::string& consequence) {
  const double load = std::atof(load_average_line().c_str());  // the one-minute figure; 0 without one
  const int cpus = models::search_threads(models::PlannerOptions{});
  if (load <= cpus) return;
  char buf[96];
  std::snprintf(buf, sizeof buf, "load %.1f on %d CPUs", load, cpus);
  std::cerr << "hetsim " << verb << ": note: the machine is busy (" << buf << ", /proc/loadavg): " << consequence
            << '\n';
}

bool checkpoint_writable(const std::string& path) {
  std::error_code ec;
  const bool existed = std::filesystem::exists(path, ec);
  if (!std::ofstream(path, std::ios::app)) return false;
  if (!existed) std::filesystem::remove(path, ec);
  return true;
}

void note_if_long_run(const char* verb, const models::Report& predicted, int steps) {
  constexpr double kLongRun_s = 600;  // assumption: past ten minutes a wait with no output needs saying
  const double total_s = predicted.iteration_time_s * steps;
  if (!predicted.feasible || !(total_s > kLongRun_s)) return;
  std::cerr << "hetsim " << verb << ": note: the model predicts " << models::format_time(predicted.iteration_time_s)
            << " a step, about " << models::format_time(total_s) << " for the " << steps
            << " steps asked (--steps); nothing is printed until the run ends\n";
}

std::string format_price_per_hour(double dollars_per_hour) {
  char buf[64];
  // Cents, but not for prices cents would round to $0.00 (a budget of $0.001/h) or that fill
  // a line with digits ($1e300/h was 62 digits cut off before its "/h").
  const double magnitude = std::fabs(dollars_per_hour);
  const char* form = magnitude >= 1e9 || (magnitude > 0 && magnitude < 0.005) ? "$%.3g/h" : "$%.2f/h";
  std::snprintf(buf, sizeof buf, form, dollars_per_hour);
  return buf;
}

std::string format_count(double n) {
  static const char* const kSuffix[] = {"", "K", "M", "B", "T", "P"};
  int i = 0;
  while (i < 5 && std::fabs(n) >= 999.5) {
    n /= 1000;
    ++i;
  }
  char buf[64];
  if (i == 0) {
    std::snprintf(buf, sizeof buf, "%.0f", n);
  } else {
    std::snprintf(buf, sizeof buf, "%.*f%s", std::fabs(n) >= 99.95 ? 0 : (std::fabs(n) >= 9.995 ? 1 : 2), n, kSuffix[i]);
  }
  return buf;
}

std::string format_work(double flop) {
  std::string s = models::format_flops(flop);
  return s.substr(0, s.size() - 2);  // "42.1 GFLOP/s" -> "42.1 GFLOP"
}

std::vector<models::Suite> load_suite_files(const std::vector<std::string>& paths, const models::Catalog& catalog,
                                            models::DiagnosticCollector* earlier) {
  std::vector<models::Suite> suites;
  models::DiagnosticCollector own;
  models::DiagnosticCollector& errors = earlier ? *earlier : own;
  std::map<std::string, std::string> file_of_suite;
  for (const std::string& path : paths) {
    if (!errors.collect([&] { suites.push_back(models::load_suite(path, catalog)); })) continue;
    // A suite given twice (or two files of one name) counted its rows twice in the mean MAPE and
    // the fit, and `--emit-dir` wrote the second over the first (DIR/<suite>/...).
    const auto [it, fresh] = file_of_suite.emplace(suites.back().name, path);
    if (!fresh) {
      models::Diagnostic d;
      d.file = path;
      d.line = suites.back().name_at.first;
      d.col = suites.back().name_at.second;
      d.field = "suite";
      std::error_code ec;
      d.message = std::filesystem::equivalent(path, it->second, ec)
                      ? "the file is given twice (expected each suite file once)"
                      : "suite '" + it->first + "' is also the suite of " + it->second +
                            " (expected each suite once, under its own name)";
      errors.add(std::move(d));
    }
  }
  errors.throw_if_any();
  return suites;
}

}  // namespace hetsim::cli
