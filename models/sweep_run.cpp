// SPDX-License-Identifier: Apache-2.0
#include "sweep_run.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <type_traits>

#include "input_loader.hpp"
#include "jsonl_file.hpp"
#include "plan_notes.hpp"
#include "step_cost.hpp"

namespace hetsim::models {
namespace {

/// The result fields of a row, in CSV/JSON order, each visited as (name, reference): the one list
/// that the checkpoint writer and reader, the CSV and the JSON output share.
template <class Row, class Visit>
void for_each_result(Row& r, Visit&& visit) {
  visit("gpus", r.gpus);
  visit("cluster_price_per_hour", r.cluster_price_per_hour);
  visit("found", r.found);
  visit("tokens_per_s", r.tokens_per_s);
  visit("simulated_tokens_per_s", r.simulated_tokens_per_s);
  visit("lockstep_tokens_per_s", r.lockstep_tokens_per_s);
  visit("mfu", r.mfu);
  visit("plan_gpus", r.plan_gpus);
  visit("plan_price_per_hour", r.plan_price_per_hour);
  visit("cost_per_million_tokens", r.cost_per_million_tokens);
  visit("uniform_tokens_per_s", r.uniform_tokens_per_s);
  visit("fastest_type_only_tokens_per_s", r.fastest_type_only_tokens_per_s);
  visit("uniform_cost_per_million_tokens", r.uniform_cost_per_million_tokens);
  visit("fastest_type_only_cost_per_million_tokens", r.fastest_type_only_cost_per_million_tokens);
  visit("uniform_over_budget", r.uniform_over_budget);
  visit("fastest_type_only_over_budget", r.fastest_type_only_over_budget);
  visit("search_time_s", r.search_time_s);
  visit("search_stopped", r.search_stopped);
  visit("shape", r.shape);
  visit("joins_vendors", r.joins_vendors);
  visit("reason", r.reason);
}

void write_results(JsonOut& j, const SweepRow& r) {
  for_each_result(r, [&](const char* name, const auto& v) { j.key(name).value(v); });
}

/// A checkpoint record back into a row (its point, workload and values come from the spec).
/// False for a record that is not a whole, sane result (another format version, a damaged
/// file): the row is planned again.
bool read_results(const YAML::Node& j, SweepRow& r) {
  bool ok = true;
  for_each_result(r, [&](const char* name, auto& v) {
    using T = std::decay_t<decltype(v)>;
    try {
      const YAML::Node n = j[name];
      // A quoted number or boolean ("9999", "yes") is not what the writer puts there: damage.
      if (!n || !n.IsScalar() || (!std::is_same_v<T, std::string> && n.Tag() == "!")) {
        ok = false;
        return;
      }
      v = n.as<T>();
      if constexpr (std::is_same_v<T, double>) ok = ok && std::isfinite(v) && v >= 0;
      if constexpr (std::is_same_v<T, int>) ok = ok && v >= 0 && v <= kMaxClusterGpus;
      // The writer's texts (a shape, a reason) are printable: a control character is damage,
      // which the table would otherwise print raw.
      if constexpr (std::is_same_v<T, std::string>)
        ok = ok && std::none_of(v.begin(), v.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; });
    } catch (const YAML::Exception&) {
      ok = false;
    }
  });
  // A found plan has a rate, a shape and GPUs of the point; a row without one has no rate.
  const bool whole = r.found ? r.tokens_per_s > 0 && !r.shape.empty() && r.plan_gpus > 0 && r.plan_gpus <= r.gpus
                             : r.tokens_per_s == 0;
  // Its dollars per token are its price over its rate (report.cpp's cost_per_million_tokens, of
  // the goodput at spot prices, which tokens_per_s is): an edited figure that contradicts the
  // other two was resumed as it stood.
  const double cost = cost_per_million_tokens(r.plan_price_per_hour, r.tokens_per_s);
  const bool priced = !r.found || std::abs(r.cost_per_million_tokens - cost) <= 1e-9 * std::max(1.0, cost);
  // Figures of a found plan only: its MFU, its lockstep figure (a slower step: at most its rate)
  // and the simulator's; an edited record had MFU 0 beside 63,865 tokens/s, and a lockstep figure
  // above the rate.
  const bool figures = r.found ? r.mfu > 0 && r.lockstep_tokens_per_s <= r.tokens_per_s * (1 + 1e-9)
                               : r.mfu == 0 && r.lockstep_tokens_per_s == 0 && r.simulated_tokens_per_s == 0;
  return ok && r.mfu <= 1.0 && whole && priced && figures;
}

/// Longest search a record may say it took: beyond any --time-limit a user would wait for
/// (11.6 days); a larger figure is damage, which the table printed as a 300-digit time.
constexpr double kMaxPlausibleSearch_s = 1e6;

/// Whether a record's figures can be this point's: its GPU count and price are the point's, no
/// rate is beyond what every GPU of the point reaches at its highest peak, its MFU is what its
/// rate gives on some of the point's GPUs (at least over all of them at their highest peak; on
/// demand, at most over its plan's GPUs at the lowest peak of the training's dtype), a simulated
/// figure comes only with `refine`, and each baseline's dollars per token imply no price between
/// $0 and the cheapest node (a baseline uses whole nodes). A record edited by hand passed
/// read_results with `gpus: 1000000`, a cluster price of $1e299/h and a baseline of 1e-300
/// tokens/s, and was printed as the row's result.
bool fits_point(const SweepRow& r, const Cluster& cluster, const Workload& workload, bool spot, int refine) {
  const auto same = [](double a, double b) { return std::abs(a - b) <= 1e-9 * std::max({1.0, std::abs(a), std::abs(b)}); };
  if (r.gpus != cluster.gpu_count() || !same(r.cluster_price_per_hour, cluster.price_per_hour(spot))) return false;
  if (!(r.search_time_s <= kMaxPlausibleSearch_s)) return false;
  if (r.simulated_tokens_per_s > 0 && refine <= 0) return false;
  double peak_flops = 0, cheapest_node = std::numeric_limits<double>::infinity();
  double lowest_gpu_peak = std::numeric_limits<double>::infinity();  // a GPU's, at the matmuls' dtype
  for (const Node& n : cluster.nodes) {
    const NodeType& t = cluster.node_types[n.node_type];
    double best = 0;
    for (const auto& [dtype, flops] : t.gpu.peak_flops) best = std::max(best, flops);
    for (const auto& [dtype, flops] : t.gpu.datasheet_peak_flops) best = std::max(best, flops);
    if (const double mfu_peak = mfu_peak_flop_per_s(t.gpu, workload.training); mfu_peak > 0)
      lowest_gpu_peak = std::min(lowest_gpu_peak, mfu_peak);
    peak_flops += best * t.gpus_per_node;
    if (t.price_per_hour_at(spot) > 0) cheapest_node = std::min(cheapest_node, t.price_per_hour_at(spot));
  }
  const double flops_per_token = std::max(1.0, workload.model.flops_per_token());
  const double max_tokens_per_s = peak_flops / flops_per_token;
  for (double rate : {r.tokens_per_s, r.simulated_tokens_per_s, r.lockstep_tokens_per_s, r.uniform_tokens_per_s,
                      r.fastest_type_only_tokens_per_s})
    if (rate > max_tokens_per_s) return false;
  if (r.found) {
    // MFU = model FLOP/s over the plan's GPUs' peaks (predictor.cpp); at spot prices the rate is
    // the goodput, below the step's rate, so only the lower bound holds.
    const double model_flop_per_s = flops_per_token * r.tokens_per_s;
    if (r.mfu < model_flop_per_s / peak_flops * (1 - 1e-6)) return false;
    if (!spot && std::isfinite(lowest_gpu_peak) && r.mfu > model_flop_per_s / (r.plan_gpus * lowest_gpu_peak) * (1 + 1e-6))
      return false;
  }
  const auto priced_sanely = [&](double tokens_per_s, double cost_per_mtok) {
    if (tokens_per_s <= 0 || cost_per_mtok <= 0) return true;  // none, or nodes priced at $0/h
    const double price_per_hour = cost_per_mtok * tokens_per_s * 3600 / 1e6;
    return price_per_hour >= cheapest_node * (1 - 1e-9);
  };
  return priced_sanely(r.tokens_per_s, r.cost_per_million_tokens) &&
         priced_sanely(r.uniform_tokens_per_s, r.uniform_cost_per_million_tokens) &&
         priced_sanely(r.fastest_type_only_tokens_per_s, r.fastest_type_only_cost_per_million_tokens);
}

/// Plans one workload on one point's cluster, and with refine > 0 re-ranks its best `refine`
/// plans with `engine`.
void plan_row(const Cluster& cluster, const Workload& workload, const PlannerOptions& options, int refine,
              const TimedPredictFn& engine, SweepRow& r) {
  r.gpus = cluster.gpu_count();
  r.cluster_price_per_hour = cluster.price_per_hour(options.spot);
  if (r.gpus == 0) {
    r.reason = "the cluster has no GPUs at this point";
    return;
  }
  PlannerResult p = plan_training(cluster, workload, options);
  r.search_time_s = p.search_time_s;
  r.search_stopped = p.searches_stopped > 0 || p.searches_truncated > 0 || p.predictions_skipped > 0;  // not proven best
  // Under a budget, a baseline is the comparison only when it keeps to the budget too; one that
  // fits but costs more is marked so, not left for "none fits" (s63 sweep hunt).
  const auto over_budget = [&](const PlannerBaseline& b) {
    return b.found && options.objective == PlanObjective::kBudget && b.best.report.cost_per_hour > options.budget_per_hour;
  };
  const auto baseline = [&](const PlannerBaseline& b) {
    return !b.found || over_budget(b) ? 0.0 : b.best.goodput_tokens_per_s();
  };
  r.uniform_tokens_per_s = baseline(p.uniform);
  r.fastest_type_only_tokens_per_s = baseline(p.fastest_type_only);
  r.uniform_over_budget = over_budget(p.uniform);
  r.fastest_type_only_over_budget = over_budget(p.fastest_type_only);
  // The same figure as the best plan's `cost_per_million_tokens`, for a baseline counted above.
  const auto baseline_cost = [&](const PlannerBaseline& b, double tokens_per_s) {
    return tokens_per_s > 0 ? b.best.report.cost_per_million_tokens : 0.0;
  };
  r.uniform_cost_per_million_tokens = baseline_cost(p.uniform, r.uniform_tokens_per_s);
  r.fastest_type_only_cost_per_million_tokens = baseline_cost(p.fastest_type_only, r.fastest_type_only_tokens_per_s);
  if (p.top.empty()) {
    r.reason = p.reason;
    return;
  }
  if (refine > 0) {
    const RefineResult refined = refine_top_plans(p, cluster, workload, engine, refine, options.time_limit_s);
    r.search_stopped = r.search_stopped || refined.stopped_at_time_limit;  // its order depends on the machine
    if (refined.refined.front())
      r.simulated_tokens_per_s = refined.refined.front()->tokens_per_s * p.top.front().spot.goodput_fraction;
    else r.reason = refined.note;  // not even the best plan could be simulated
  }
  const RankedPlan& best = p.top.front();
  r.found = true;
  // At spot prices, the tokens/s its nodes' preemptions leave (equal to the report's on demand).
  r.tokens_per_s = best.goodput_tokens_per_s();
  r.mfu = best.report.mfu;
  r.plan_price_per_hour = best.report.cost_per_hour;
  r.cost_per_million_tokens = best.report.cost_per_million_tokens;
  r.plan_gpus = best.plan.gpu_count();
  r.shape = best.shape;
  r.joins_vendors = best.joins_vendors;
  if (const auto lockstep = lockstep_parity_worth_noting(cluster, workload, best.plan, best.report.iteration_time_s))
    r.lockstep_tokens_per_s = lockstep->report.tokens_per_s * best.spot.goodput_fraction;
}

/// RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string csv_field(double v) {
  JsonOut j(-1);  // shortest text that reads back to the same double
  j.value(v);
  return j.str();
}
std::string csv_field(int v) { return std::to_string(v); }
std::string csv_field(bool v) { return v ? "true" : "false"; }

/// 12 significant digits for the printed figures: a price summed from "$14.80/h" nodes prints
/// 49.6, not 49.599999999999994 (the checkpoint keeps the exact double).
double tidy(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.12g", v);
  return std::strtod(buf, nullptr);
}

/// Figures a row does not have print as JSON null and an empty CSV cell, not as 0 (a real
/// figure: a $0/h plan costs $0 per million tokens): the plan's when none was found, a baseline
/// that does not fit, the simulator's when the row was not refined. The checkpoint keeps 0s.
bool figure_absent(const SweepRow& r, std::string_view name) {
  if (name == "tokens_per_s" || name == "mfu" || name == "plan_gpus" || name == "plan_price_per_hour" ||
      name == "cost_per_million_tokens" || name == "joins_vendors")
    return !r.found;
  if (name == "simulated_tokens_per_s") return !r.found || r.simulated_tokens_per_s <= 0;
  if (name == "lockstep_tokens_per_s") return !r.found || r.lockstep_tokens_per_s <= 0;
  if (name == "uniform_tokens_per_s") return r.uniform_tokens_per_s <= 0;
  if (name == "fastest_type_only_tokens_per_s") return r.fastest_type_only_tokens_per_s <= 0;
  if (name == "uniform_cost_per_million_tokens") return r.uniform_tokens_per_s <= 0;
  if (name == "fastest_type_only_cost_per_million_tokens") return r.fastest_type_only_tokens_per_s <= 0;
  return false;
}

/// The value of a node-count axis as the number it is (JSON); other axes keep their text, units
/// included ("400Gbps", "$2.10/h").
std::optional<long long> node_count(const SweepAxis& axis, const std::string& label) {
  if (axis.kind != SweepAxisKind::kNodes) return std::nullopt;
  const auto it = std::find(axis.labels.begin(), axis.labels.end(), label);
  if (it == axis.labels.end() || axis.values.size() != axis.labels.size()) return std::nullopt;
  return static_cast<long long>(axis.values[it - axis.labels.begin()]);
}

}  // namespace

namespace {

/// 64-bit FNV-1a over `n` bytes, continuing from `hash` (offset basis and prime of the draft).
std::uint64_t fnv1a(std::uint64_t hash, const char* bytes, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    hash ^= static_cast<unsigned char>(bytes[i]);
    hash *= 1099511628211ULL;
  }
  return hash;
}
constexpr std::uint64_t kFnvOffsetBasis = 14695981039346656037ULL;

std::string fingerprint_text(std::uint64_t size, std::uint64_t hash) {
  char out[48];
  std::snprintf(out, sizeof out, "%llu:%016llx", static_cast<unsigned long long>(size), static_cast<unsigned long long>(hash));
  return out;
}

}  // namespace

std::string file_fingerprint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::uint64_t hash = kFnvOffsetBasis;
  std::uint64_t size = 0;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    hash = fnv1a(hash, buf, static_cast<std::size_t>(in.gcount()));
    size += static_cast<std::uint64_t>(in.gcount());
  }
  return fingerprint_text(size, hash);
}

std::string catalog_fingerprint(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && is_catalog_file_name(e.path().filename().string())) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::string all;
  for (const fs::path& f : files) all += f.filename().string() + "=" + file_fingerprint(f.string()) + ";";
  return fingerprint_text(files.size(), fnv1a(kFnvOffsetBasis, all.data(), all.size()));
}

std::string sweep_row_key(const SweepSpec& spec, const std::string& cluster_fingerprint,
                          const std::string& workload_fingerprint, const std::string& profile_fingerprint,
                          const std::vector<std::string>& values, int refine,
                          const std::string& catalog_fingerprint, const std::string& model_fingerprint) {
  JsonOut j(-1);
  j.begin_object();
  j.key("objective").value(to_string(spec.objective)).key("budget_per_hour").value(spec.budget_per_hour);
  j.key("spot").value(spec.spot).key("cluster").value(cluster_fingerprint).key("workload").value(workload_fingerprint);
  j.key("profile").value(profile_fingerprint);
  if (!catalog_fingerprint.empty()) j.key("catalog").value(catalog_fingerprint);
  if (!model_fingerprint.empty()) j.key("model").value(model_fingerprint);
  if (spec.tp_comm_overlap) j.key("tp_comm_overlap").value(true);  // absent when off: older checkpoints stay valid
  if (spec.overlap_p2p_comm) j.key("overlap_p2p_comm").value(true);
  if (spec.one_vendor) j.key("one_vendor").value(true);
  if (spec.sharded_collectives != ShardedCollectives::kMemberNic)
    j.key("sharded_collectives").value(to_string(spec.sharded_collectives));
  // The search space when the spec restricts it (absent otherwise: older checkpoints stay valid).
  const SweepSearch& search = spec.search;
  for (const auto& [name, values] : {std::pair<const char*, const std::vector<int>*>{"tp_degrees", &search.tp_degrees},
                                     {"micro_batches", &search.micro_batches}, {"interleave", &search.interleaves},
                                     {"zero", &search.zero_stages}}) {
    if (values->empty()) continue;
    j.key(name).begin_array();
    for (int v : *values) j.value(v);
    j.end_array();
  }
  if (!search.sequence_parallel) j.key("sequence_parallel").value(false);
  if (!search.recomputes.empty()) {
    j.key("recompute").begin_array();
    for (Recompute r : search.recomputes) j.value(to_string(r));
    j.end_array();
  }
  if (refine > 0) j.key("refine").value(refine);
  for (size_t a = 0; a < spec.axes.size(); ++a) j.key(spec.axes[a].identity()).value(values[a]);
  j.end_object();
  return j.str();
}

SweepResult run_sweep(const SweepSpec& spec, const Cluster& base, const std::vector<Workload>& workloads,
                      const Catalog& catalog, const SweepRunOptions& options) {
  // Per key, the results of its last record; none when that record is not a whole, sane result
  // (read_results), so the row is planned again. Records are read one at a time into rows: the
  // parsed records themselves took some 20 KB each.
  std::map<std::string, std::optional<SweepRow>> done;
  if (!options.checkpoint_path.empty()) {
    long records = 0;
    for_each_json_line(options.checkpoint_path, [&](const JsonLine& line) {
      const YAML::Node& j = line.record;
      if (!j.IsMap()) return;
      ++records;
      if (!(j["key"] && j["key"].IsScalar() && j["point"] && j["workload"])) return;
      SweepRow r;
      done[j["key"].Scalar()] = read_results(j, r) ? std::optional<SweepRow>(std::move(r)) : std::nullopt;
    });
    if (records > 0 && done.empty())
      throw ForeignCheckpoint("'" + options.checkpoint_path + "' holds " + std::to_string(records) +
                              " JSON lines and none is a sweep row (expected a checkpoint of hetsim sweep, or a new file)");
  }

  PlannerOptions po = options.planner;
  spec.search.apply_to(po);
  po.objective = spec.objective;
  po.budget_per_hour = spec.budget_per_hour;
  po.spot = spec.spot;
  po.tp_comm_overlap = spec.tp_comm_overlap;
  po.overlap_p2p_comm = spec.overlap_p2p_comm;
  po.one_vendor = spec.one_vendor;
  po.sharded_collectives = spec.sharded_collectives;
  const int refine = options.refine_engine ? std::max(0, options.refine) : 0;  // 0: analytic rows
  po.top = std::max(1, refine);

  const std::string cluster_fp = file_fingerprint(spec.cluster_path);
  std::vector<std::string> workload_fp;
  for (const std::string& w : spec.workload_paths) workload_fp.push_back(file_fingerprint(w));

  SweepResult result;
  const long points = spec.point_count();
  const long total = points * static_cast<long>(workloads.size());
  for (long p = 0; p < points; ++p) {
    const std::vector<int> choice = sweep_point(spec, p);
    std::vector<std::string> values;
    for (size_t a = 0; a < spec.axes.size(); ++a) values.push_back(spec.axes[a].labels[choice[a]]);
    std::optional<Cluster> cluster;  // built for the point's first row (planned, or resumed: its record is checked against it)
    for (size_t w = 0; w < workloads.size(); ++w) {
      SweepRow r;
      const std::string key = sweep_row_key(spec, cluster_fp, workload_fp[w], options.profile_fingerprint, values, refine,
                                            options.catalog_fingerprint, options.model_fingerprint);
      // A row whose search a time limit stopped is planned again: this run may allow more time.
      if (auto it = done.find(key); it != done.end() && it->second && !it->second->search_stopped) {
        if (!cluster) cluster = sweep_cluster(spec, base, choice, catalog, options.profile);
        if (fits_point(*it->second, *cluster, workloads[w], spec.spot, refine)) {
          r = *it->second;
          r.resumed = true;
          ++result.resumed;
        }
      }
      r.point = p;
      r.workload = workloads[w].name;
      r.values = values;
      if (!r.resumed) {
        if (!cluster) cluster = sweep_cluster(spec, base, choice, catalog, options.profile);
        plan_row(*cluster, workloads[w], po, refine, options.refine_engine, r);
        if (!options.checkpoint_path.empty()) {
          JsonOut j(-1);
          j.begin_object().key("key").value(key).key("point").value(static_cast<long long>(p));
          j.key("workload").value(r.workload);
          write_results(j, r);
          j.end_object();
          append_json_line(options.checkpoint_path, j.str());
        }
      }
      result.rows.push_back(r);
      if (options.on_row) options.on_row(result.rows.back(), static_cast<long>(result.rows.size()), total);
    }
  }
  return result;
}

std::string sweep_csv(const SweepSpec& spec, const std::vector<SweepRow>& rows) {
  std::string out = "point,workload";
  for (const SweepAxis& a : spec.axes) out += "," + csv_field(a.column());
  const SweepRow header;
  for_each_result(header, [&](const char* name, const auto&) { out += std::string(",") + name; });
  out += "\n";
  for (const SweepRow& r : rows) {
    out += std::to_string(r.point) + "," + csv_field(r.workload);
    for (const std::string& v : r.values) out += "," + csv_field(v);
    for_each_result(r, [&](const char* name, const auto& v) {
      out += ",";
      if (figure_absent(r, name)) return;
      if constexpr (std::is_same_v<std::decay_t<decltype(v)>, double>) out += csv_field(tidy(v));
      else out += csv_field(v);
    });
    out += "\n";
  }
  return out;
}

void write_sweep_row_json(JsonOut& j, const SweepSpec& spec, const SweepRow& row) {
  j.begin_object().key("point").value(static_cast<long long>(row.point)).key("workload").value(row.workload);
  j.key("values").begin_object();
  for (size_t a = 0; a < spec.axes.size(); ++a) {
    j.key(spec.axes[a].column());
    if (const auto count = node_count(spec.axes[a], row.values[a])) j.value(*count);
    else j.value(row.values[a]);
  }
  j.end_object();
  for_each_result(row, [&](const char* name, const auto& v) {
    j.key(name);
    if (figure_absent(row, name)) j.null();
    else if constexpr (std::is_same_v<std::decay_t<decltype(v)>, double>) j.value(tidy(v));
    else j.value(v);
  });
  j.key("resumed").value(row.resumed).end_object();
}

}  // namespace hetsim::models
