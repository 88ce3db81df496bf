// SPDX-License-Identifier: Apache-2.0
// Fitting GPU-type and link figures to measured iteration times (run_fit.hpp). The variables
// always form a Profile, and each evaluation applies that profile to every row's cluster with
// models::apply_profile: the profile written at the end is exactly what was evaluated.
#include "run_fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <stdexcept>
#include <variant>

#include "calibrate.hpp"
#include "golden_section.hpp"
#include "predictor.hpp"
#include "stats.hpp"
#include "topology.hpp"

namespace hetsim::calibration {
namespace {

/// One row, ready to predict again and again: the suite's cluster (catalog figures) and the
/// working copy that the current profile is applied to.
struct PreparedRow {
  int suite = 0;
  models::Cluster base, cluster;
  models::Workload workload;
  models::Plan plan;
  double measured = 0;
};

/// One fitted variable: a figure of one device type or link class, searched in [lo, hi].
struct Variable {
  std::string name;  ///< device type or link class
  RunFitParam param = RunFitParam::kGemm;
  double value = 0, lo = 0, hi = 0;
  bool log_scale = true;
  double start = 0;  ///< the catalog's value (set when the search begins)
};

/// The catalog's figures of a device type and the dtype its rows' matmuls run in (TF32 for FP32
/// training where the part has it and the rows allow it).
struct DeviceBase {
  models::EfficiencyModel efficiency;
  models::Dtype dtype = models::Dtype::kBf16;
  int rows = 0;
};

/// The achieved figures of a link class as a profile states them (models/profile.hpp: per
/// device; for NICs, each device while all of its node send), from the suites' clusters.
struct LinkBase {
  models::LinkProfile figures;
  /// The datasheet's line rate per device that `figures` achieves a share of; 0 for a measured
  /// figure, which a fit may exceed (a ring collective can outrun the pair test that measured it).
  double line_Bps = 0;
  int rows = 0;
  bool consistent = true;
};

bool same(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)); }

void note_link(std::map<std::string, LinkBase>& links, const std::string& name, const models::LinkProfile& f,
               double line_Bps) {
  auto [it, fresh] = links.try_emplace(name);
  if (fresh) it->second.figures = f, it->second.line_Bps = line_Bps;
  else if (!same(it->second.figures.bandwidth_Bps, f.bandwidth_Bps) || !same(it->second.figures.latency_s, f.latency_s))
    it->second.consistent = false;
}

/// What a row's plan runs on: the node types holding its GPUs, and whether it spans nodes.
struct UsedHardware {
  std::vector<int> node_types;  ///< indices into cluster.node_types, each once
  bool spans_nodes = false;
};

UsedHardware used_by(const models::Cluster& c, const models::Plan& plan) {
  UsedHardware u;
  int first_node = -1;
  for (const models::Replica& r : plan.replicas) {
    for (const models::Stage& st : r.stages) {
      for (int g : st.gpus) {
        const int node = c.gpus[g].node;
        if (first_node < 0) first_node = node;
        u.spans_nodes = u.spans_nodes || node != first_node;
        const int t = c.nodes[node].node_type;
        if (std::find(u.node_types.begin(), u.node_types.end(), t) == u.node_types.end()) u.node_types.push_back(t);
      }
    }
  }
  return u;
}

/// The link classes a row's plan uses and their achieved figures per device, exactly as the cost
/// model sees them before a profile (the inverse of apply_profile's conversion): the intra
/// fabric of a node type with several GPUs (topology.cpp hop() also caps a node-crossing hop by
/// it), the NICs when the plan spans nodes, capped by the host link without GPUDirect as
/// nic_share() does (a profile's NIC figure lifts that cap).
void collect_links(const models::Cluster& c, const UsedHardware& used, std::map<std::string, LinkBase>& links) {
  for (int t : used.node_types) {
    const models::NodeType& nt = c.node_types[t];
    if (nt.gpus_per_node > 1)
      note_link(links, models::to_string(nt.intra.kind), {models::achieved_bandwidth_Bps(nt.intra), nt.intra.latency_s},
                nt.intra.measured ? 0.0 : nt.intra.bandwidth_Bps);
    if (!used.spans_nodes || nt.nics.count <= 0) continue;
    const double nics_per_device = static_cast<double>(nt.nics.count) / std::max(1, nt.gpus_per_node);
    double per_device_Bps = models::achieved_bandwidth_Bps(nt.nics) * nics_per_device;
    double line_Bps = nt.nics.measured ? 0.0 : nt.nics.bandwidth_Bps * nics_per_device;
    if (!nt.nics.gpu_direct && nt.host_link_Bps > 0) {
      per_device_Bps = std::min(per_device_Bps, nt.host_link_Bps * models::kHostLinkEfficiency);
      if (line_Bps > 0) line_Bps = std::min(line_Bps, nt.host_link_Bps);
    }
    double fabric_s = 0;
    for (const models::Node& n : c.nodes)
      if (n.node_type == t) fabric_s = std::max(fabric_s, c.zones[n.zone].fabric.latency_s);
    note_link(links, models::to_string(nt.nics.kind), {per_device_Bps, 2 * nt.nics.latency_s + fabric_s}, line_Bps);
  }
}

/// The profile the variables describe: only the fitted figures, every other one the catalog's;
/// with `changed_only`, also without the figures the search left where they were.
models::Profile profile_of(const std::vector<Variable>& vars, const std::map<std::string, DeviceBase>& devices,
                           const std::map<std::string, LinkBase>& links, bool changed_only = false) {
  models::Profile p;
  for (const Variable& v : vars) {
    if (changed_only && v.value == v.start) continue;
    if (v.param == RunFitParam::kLinks) {
      models::LinkProfile l = links.at(v.name).figures;
      l.bandwidth_Bps *= v.value;
      p.links[v.name] = l;
      continue;
    }
    const models::EfficiencyModel& e = devices.at(v.name).efficiency;
    models::DeviceProfile& d = p.devices[v.name];
    switch (v.param) {
      case RunFitParam::kGemm:
        d.gemm_efficiency = std::min(1.0, e.gemm_efficiency * v.value);
        if (e.gemm_fp32_efficiency > 0) d.gemm_fp32_efficiency = std::min(1.0, e.gemm_fp32_efficiency * v.value);
        break;
      case RunFitParam::kMemory: d.memory_efficiency = v.value; break;
      case RunFitParam::kHost: d.framework_op_host_s = v.value; break;
      case RunFitParam::kFlash: d.flash_scale = v.value; break;
      case RunFitParam::kLinks: break;
    }
  }
  return p;
}

/// Mean |ln(predicted/measured)| with `profile` applied; a row the model cannot predict counts
/// as a factor of e^3 off.
double objective(const models::Profile& profile, std::vector<PreparedRow>& rows) {
  double sum = 0;
  for (PreparedRow& row : rows) {
    row.cluster = row.base;
    models::apply_profile(row.cluster, profile);
    const models::Report r = models::predict(row.cluster, row.workload, row.plan);
    const bool ok = r.feasible && r.iteration_time_s > 0;
    sum += ok ? std::fabs(std::log(r.iteration_time_s / row.measured)) : 3.0;
  }
  return sum / static_cast<double>(rows.size());
}

/// Minimises the objective in one variable: a grid over [lo, hi], then golden-section search
/// between the best grid point's neighbours (the objective is unimodal near its minimum but
/// may have plateaus where another stage or device type is the bottleneck).
double minimise_one(std::vector<Variable>& vars, std::size_t k, const std::function<double()>& evaluate) {
  Variable& v = vars[k];
  auto at = [&](double x) {
    v.value = x;
    return evaluate();
  };
  auto point = [&](double t) {  // t in [0, 1] along the variable's scale
    return v.log_scale ? v.lo * std::pow(v.hi / v.lo, t) : v.lo + (v.hi - v.lo) * t;
  };
  // The current value first: a figure the rows do not depend on (host time of large models,
  // a flat objective) keeps it instead of drifting to a bound.
  const double start = v.value, start_f = at(start);
  constexpr int kGrid = 13;
  double best_t = 0, best_f = at(point(0));
  for (int i = 1; i < kGrid; ++i) {
    const double t = static_cast<double>(i) / (kGrid - 1), f = at(point(t));
    if (f < best_f) best_f = f, best_t = t;
  }
  const double step = 1.0 / (kGrid - 1);
  const auto [t, f] = golden_section_minimum([&](double u) { return at(point(u)); }, std::max(0.0, best_t - step),
                                             std::min(1.0, best_t + step), 24);
  const double found_f = std::min(f, best_f);
  // A gain under 1e-4 of the objective (or under 1e-6, a millionth of a log error, when the
  // fit is already exact) is noise, not evidence: the figure stays where it was.
  if (!(found_f < start_f - std::max(1e-4 * start_f, 1e-6))) {
    v.value = start;
    return start_f;
  }
  v.value = f < best_f ? point(t) : point(best_t);
  return found_f;
}

Variable device_variable(const std::string& type, RunFitParam p, const DeviceBase& base) {
  const models::EfficiencyModel& e = base.efficiency;
  Variable v{type, p, 1.0, 0, 0, true, 0};
  switch (p) {
    case RunFitParam::kGemm: {
      // The efficiency in the rows' dtype spans 0.05..1 (the other one is capped at 1).
      models::GpuType probe;
      probe.efficiency = e;
      const double rows_eff = probe.gemm_efficiency_in(base.dtype);
      v.lo = 0.05 / rows_eff, v.hi = 1.0 / rows_eff;
      break;
    }
    case RunFitParam::kMemory: v.value = e.memory_efficiency, v.lo = 0.05, v.hi = 1.0; break;
    // assumption: 0-500 us per kernel (a search range, ten times the 49 us default of
    // gpu_type.hpp kFrameworkOpHost_s; PyTorch eager measures 10-20 us per op).
    case RunFitParam::kHost: v.value = e.framework_op_host_s, v.lo = 0, v.hi = 500e-6, v.log_scale = false; break;
    case RunFitParam::kFlash: v.value = e.flash_scale, v.lo = 0.1, v.hi = 2.0; break;  // the profile's range
    case RunFitParam::kLinks: break;
  }
  return v;
}

}  // namespace

const char* to_string(RunFitParam p) {
  switch (p) {
    case RunFitParam::kGemm: return "gemm";
    case RunFitParam::kMemory: return "memory";
    case RunFitParam::kHost: return "host";
    case RunFitParam::kFlash: return "flash";
    case RunFitParam::kLinks: return "links";
  }
  return "?";
}

std::optional<RunFitParam> parse_run_fit_param(std::string_view name) {
  for (RunFitParam p : {RunFitParam::kGemm, RunFitParam::kMemory, RunFitParam::kHost, RunFitParam::kFlash,
                        RunFitParam::kLinks})
    if (name == to_string(p)) return p;
  return std::nullopt;
}

namespace {

/// The rows the fit uses, the device types and link classes they run on, and the catalog's
/// predictions of them per suite.
struct FitInputs {
  std::vector<PreparedRow> rows;
  std::map<std::string, DeviceBase> devices;
  std::map<std::string, LinkBase> links;
  std::vector<std::vector<double>> catalog_pred, catalog_meas;  ///< per suite
};

/// Predicts every row with the catalog and prepares those it can predict; counts the others in
/// `out.suites`.
FitInputs prepare_rows(const std::vector<models::Suite>& suites, const models::Catalog& catalog, RunFitResult& out) {
  FitInputs in;
  std::vector<PreparedRow>& rows = in.rows;
  std::map<std::string, DeviceBase>& devices = in.devices;
  std::map<std::string, LinkBase>& links = in.links;
  in.catalog_pred.resize(suites.size());
  in.catalog_meas.resize(suites.size());
  for (std::size_t s = 0; s < suites.size(); ++s) {
    const models::Suite& suite = suites[s];
    SuiteFit sf;
    sf.suite = suite.name;
    for (const models::SuiteRow& row : suite.rows) {
      // The catalog's prediction first: it picks the micro-batch of rows that omit it and tells
      // which rows the model cannot predict at all (left out of the fit).
      const models::RowResult r = models::validate_row(suite, row, catalog, models::predict);
      if (r.status != "ok") {
        ++sf.rows_skipped;
        continue;
      }
      in.catalog_pred[s].push_back(*r.predicted), in.catalog_meas[s].push_back(row.measured);
      PreparedRow p;
      p.suite = static_cast<int>(s);
      p.measured = row.measured;
      p.workload = models::suite_workload(suite, row);
      p.base = models::suite_cluster(row.system, static_cast<int>(models::suite_row_gpus(row)), catalog);
      // A row validate predicted past the memory model's capacity (the run fit) is fitted so too.
      if (r.memory_unchecked) p.base = models::without_memory_limit(std::move(p.base));
      auto plan = models::suite_plan(row, p.base, p.workload, r.micro);
      if (!std::holds_alternative<models::Plan>(plan)) {
        ++sf.rows_skipped;
        continue;
      }
      p.plan = std::get<models::Plan>(std::move(plan));
      // Only what the plan runs on: a figure no row measured stays the catalog's.
      const UsedHardware used = used_by(p.base, p.plan);
      std::vector<std::string> row_types;
      for (int t : used.node_types) {
        const models::GpuType& gpu = p.base.node_types[t].gpu;
        if (std::find(row_types.begin(), row_types.end(), gpu.name) != row_types.end()) continue;
        row_types.push_back(gpu.name);
        auto [it, fresh] = devices.try_emplace(gpu.name);
        const models::TrainingSpec& training = p.workload.training;
        if (fresh) it->second = {gpu.efficiency, gpu.matmul_dtype(training.dtype, training.allow_tf32), 0};
        ++it->second.rows;
      }
      std::map<std::string, LinkBase> row_links;
      collect_links(p.base, used, row_links);
      for (const auto& [name, l] : row_links) {
        note_link(links, name, l.figures, l.line_Bps);
        ++links[name].rows;
        if (!l.consistent) links[name].consistent = false;
      }
      rows.push_back(std::move(p));
      ++sf.rows_used;
    }
    out.suites.push_back(sf);
  }
  return in;
}

/// The variables of `options.params`, each once: one per device type, or per link class whose
/// achieved figure is the same on every row's nodes (the others are listed in
/// `out.links_not_fitted`).
std::vector<Variable> fit_variables(const RunFitOptions& options, const std::map<std::string, DeviceBase>& devices,
                                    const std::map<std::string, LinkBase>& links, RunFitResult& out) {
  std::vector<Variable> vars;
  std::vector<RunFitParam> seen;
  for (RunFitParam p : options.params) {
    if (std::find(seen.begin(), seen.end(), p) != seen.end()) continue;  // "gemm,gemm": once
    seen.push_back(p);
    if (p != RunFitParam::kLinks) {
      for (const auto& [type, b] : devices) vars.push_back(device_variable(type, p, b));
      continue;
    }
    for (const auto& [name, l] : links) {
      if (!l.consistent) {
        out.links_not_fitted.push_back(name +
                                       ": its achieved figure per device differs between the rows' nodes (another "
                                       "bandwidth, latency or number of GPUs per NIC); a profile holds one figure per class");
        continue;
      }
      // A scale on the achieved bandwidth (the cluster's figure x link_efficiency); assumption:
      // the truth lies within 0.1-2x of it (a search range, not a measured bound), and no link
      // carries more than its datasheet line rate: the fit put SC'21's 25 GB/s InfiniBand at
      // 29.7 GB/s (s68 hunt). A measured figure (line_Bps 0) keeps the 2x.
      const double up_to_line = l.line_Bps > 0 ? l.line_Bps / l.figures.bandwidth_Bps : 2.0;
      vars.push_back({name, p, 1.0, 0.1, std::clamp(up_to_line, 1.0, 2.0), true, 0});
    }
  }
  for (Variable& v : vars) v.start = v.value;
  return vars;
}

/// A fitted variable as the figure it sets (catalog and fitted values in the figure's unit).
FittedFigure fitted_figure(const Variable& v, const std::map<std::string, DeviceBase>& devices,
                           const std::map<std::string, LinkBase>& links) {
  FittedFigure f{v.name, v.param, 0, 0, 0, v.value != v.start, false};
  const double span = v.log_scale ? std::log(v.hi / v.lo) : v.hi - v.lo;
  const double from_lo = v.log_scale ? std::log(v.value / v.lo) : v.value - v.lo;
  f.at_bound = f.changed && (from_lo < 1e-3 * span || span - from_lo < 1e-3 * span);
  if (v.param == RunFitParam::kLinks) {
    const LinkBase& l = links.at(v.name);
    f.rows = l.rows;
    f.catalog_value = l.figures.bandwidth_Bps;
    f.fitted_value = l.figures.bandwidth_Bps * v.value;
    return f;
  }
  const DeviceBase& b = devices.at(v.name);
  f.rows = b.rows;
  models::GpuType probe;
  probe.efficiency = b.efficiency;
  switch (v.param) {
    case RunFitParam::kGemm:
      f.catalog_value = probe.gemm_efficiency_in(b.dtype);
      f.fitted_value = std::min(1.0, f.catalog_value * v.value);
      break;
    case RunFitParam::kMemory: f.catalog_value = b.efficiency.memory_efficiency, f.fitted_value = v.value; break;
    case RunFitParam::kHost: f.catalog_value = b.efficiency.framework_op_host_s, f.fitted_value = v.value; break;
    case RunFitParam::kFlash: f.catalog_value = b.efficiency.flash_scale, f.fitted_value = v.value; break;
    case RunFitParam::kLinks: break;
  }
  return f;
}

/// Whether `step` continues the fit that starts at `start` (the same variables, in order, a
/// pass within the fit's, each value within its variable's search range).
bool resumable(const RunFitProgress& step, const RunFitProgress& start, const std::vector<Variable>& vars,
               int passes) {
  if (step.variables != start.variables || step.values.size() != vars.size()) return false;
  for (std::size_t k = 0; k < vars.size(); ++k)
    if (!(step.values[k] >= vars[k].lo && step.values[k] <= vars[k].hi)) return false;
  return step.pass >= 0 && step.pass < std::max(1, passes) && step.searched >= 0 &&
         step.searched <= static_cast<int>(vars.size()) && std::isfinite(step.objective) &&
         std::isfinite(step.pass_start_objective);
}

}  // namespace

RunFitResult fit_to_runs(const std::vector<models::Suite>& suites, const models::Catalog& catalog,
                         const RunFitOptions& options) {
  RunFitResult out;
  FitInputs in = prepare_rows(suites, catalog, out);
  if (in.rows.empty()) throw std::runtime_error("no row of the suites can be predicted: nothing to fit");
  std::vector<PreparedRow>& rows = in.rows;
  const std::map<std::string, DeviceBase>& devices = in.devices;
  const std::map<std::string, LinkBase>& links = in.links;
  std::vector<Variable> vars = fit_variables(options, devices, links, out);

  const auto evaluate = [&] { return objective(profile_of(vars, devices, links), rows); };
  out.objective_before = objective(profile_of(vars, devices, links), rows);
  RunFitProgress at;  // where the search stands: the start, or the step resumed from
  for (const Variable& v : vars) at.variables.push_back(v.name + "/" + to_string(v.param));
  for (const Variable& v : vars) at.values.push_back(v.value);
  at.objective = at.pass_start_objective = out.objective_before;
  if (options.resume && resumable(*options.resume, at, vars, options.sweeps)) {
    // The search is deterministic: the step's figures give the objective it recorded. A record
    // whose values were edited was resumed with them, into a profile no fit gives (s56 hunt).
    std::vector<Variable> trial = vars;
    for (std::size_t k = 0; k < vars.size(); ++k) trial[k].value = options.resume->values[k];
    const double recomputed = objective(profile_of(trial, devices, links), rows);
    if (std::abs(recomputed - options.resume->objective) <= 1e-9 * std::max(1.0, recomputed)) {
      at = *options.resume;
      vars = std::move(trial);
      out.searches_resumed = at.pass * static_cast<int>(vars.size()) + at.searched;
    } else {
      char buf[160];
      std::snprintf(buf, sizeof buf, "its last step's figures give the objective %.6g, not the %.6g it records", recomputed,
                    options.resume->objective);
      out.resume_refused = buf;
    }
  }
  out.searches = out.searches_resumed;
  for (; at.pass < std::max(1, options.sweeps); ++at.pass, at.searched = 0) {
    if (at.searched == 0) at.pass_start_objective = at.objective;
    while (at.searched < static_cast<int>(vars.size())) {
      at.objective = minimise_one(vars, static_cast<std::size_t>(at.searched), evaluate);
      ++at.searched, ++out.searches;
      for (std::size_t k = 0; k < vars.size(); ++k) at.values[k] = vars[k].value;
      if (options.on_progress) options.on_progress(at);
    }
    if (at.pass_start_objective - at.objective < 1e-6) break;  // converged
  }
  out.profile = profile_of(vars, devices, links, /*changed_only=*/true);
  std::string names;
  int used = 0;
  for (const SuiteFit& sf : out.suites) names += (names.empty() ? "" : ", ") + sf.suite, used += sf.rows_used;
  out.profile.name = "fit";
  out.profile.source = "fitted to " + std::to_string(used) + " measured rows of " + names;
  // Through its YAML and back: the figures evaluated below are the digits the file will hold.
  out.profile = models::parse_profile(profile_to_yaml(out.profile, {}), "fitted profile");
  out.objective_after = objective(out.profile, rows);

  // Per-suite MAPE as `validate` gives it before and `validate --profile` with the profile
  // written after (a row that omits `micro` may take another micro-batch then).
  const models::PredictFn fitted =
      models::with_profile(std::make_shared<const models::Profile>(out.profile), models::predict);
  for (std::size_t s = 0; s < out.suites.size(); ++s) {
    std::vector<double> pa, ma;
    for (const models::SuiteRow& row : suites[s].rows) {
      const models::RowResult r = models::validate_row(suites[s], row, catalog, fitted);
      if (r.status == "ok") pa.push_back(*r.predicted), ma.push_back(row.measured);
    }
    out.suites[s].mape_before = models::mape(in.catalog_pred[s], in.catalog_meas[s]).value_or(0);
    out.suites[s].mape_after = models::mape(pa, ma).value_or(0);
  }

  for (const Variable& v : vars) out.figures.push_back(fitted_figure(v, devices, links));
  return out;
}

}  // namespace hetsim::calibration
