// SPDX-License-Identifier: Apache-2.0
// Fitting GPU-type and link figures to measured iteration times (run_fit.hpp). The variables
// always form a Profile, and each evaluation applies that profile to every row's cluster with
// models::apply_profile: the profile written at the end is exactly what was evaluated.
#include "run_fit.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <stdexcept>
#include <variant>

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
};

/// The catalog's figures of a device type and the dtype its rows train in (for reporting).
struct DeviceBase {
  models::EfficiencyModel efficiency;
  models::Dtype dtype = models::Dtype::kBf16;
  int rows = 0;
};

/// The achieved figures of a link class as a profile states them (models/profile.hpp: per
/// device; for NICs, each device while all of its node send), from the suites' clusters.
struct LinkBase {
  models::LinkProfile figures;
  int rows = 0;
  bool consistent = true;
};

bool same(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)); }

void note_link(std::map<std::string, LinkBase>& links, const std::string& name, const models::LinkProfile& f) {
  auto [it, fresh] = links.try_emplace(name);
  if (fresh) it->second.figures = f;
  else if (!same(it->second.figures.bandwidth_Bps, f.bandwidth_Bps) || !same(it->second.figures.latency_s, f.latency_s))
    it->second.consistent = false;
}

/// The link classes a row's cluster uses and their achieved figures (the inverse of what
/// apply_profile does with a profile's links).
void collect_links(const models::Cluster& c, std::map<std::string, LinkBase>& links) {
  for (std::size_t t = 0; t < c.node_types.size(); ++t) {
    const models::NodeType& nt = c.node_types[t];
    if (nt.gpus_per_node > 1)
      note_link(links, models::to_string(nt.intra.kind),
                {models::achieved_bandwidth_Bps(nt.intra), nt.intra.latency_s});
    if (c.nodes.size() > 1 && nt.nics.count > 0) {
      double fabric_s = 0;
      for (const models::Node& n : c.nodes)
        if (n.node_type == static_cast<int>(t)) fabric_s = std::max(fabric_s, c.zones[n.zone].fabric.latency_s);
      note_link(links, models::to_string(nt.nics.kind),
                {models::achieved_bandwidth_Bps(nt.nics) * nt.nics.count / std::max(1, nt.gpus_per_node),
                 2 * nt.nics.latency_s + fabric_s});
    }
  }
}

/// The profile the variables describe: only the fitted figures, every other one the catalog's.
models::Profile profile_of(const std::vector<Variable>& vars, const std::map<std::string, DeviceBase>& devices,
                           const std::map<std::string, LinkBase>& links) {
  models::Profile p;
  for (const Variable& v : vars) {
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
double objective(const models::Profile& profile, std::vector<PreparedRow>& rows,
                 std::vector<double>* predicted = nullptr) {
  double sum = 0;
  if (predicted) predicted->assign(rows.size(), 0);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    PreparedRow& row = rows[i];
    row.cluster = row.base;
    models::apply_profile(row.cluster, profile);
    const models::Report r = models::predict(row.cluster, row.workload, row.plan);
    const bool ok = r.feasible && r.iteration_time_s > 0;
    sum += ok ? std::fabs(std::log(r.iteration_time_s / row.measured)) : 3.0;
    if (predicted && ok) (*predicted)[i] = r.iteration_time_s;
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
  double a = std::max(0.0, best_t - step), b = std::min(1.0, best_t + step);
  const double g = (std::sqrt(5.0) - 1) / 2;
  double c = b - g * (b - a), d = a + g * (b - a);
  double fc = at(point(c)), fd = at(point(d));
  for (int i = 0; i < 24; ++i) {
    if (fc < fd) b = d, d = c, fd = fc, c = b - g * (b - a), fc = at(point(c));
    else a = c, c = d, fc = fd, d = a + g * (b - a), fd = at(point(d));
  }
  const double t = fc < fd ? c : d, f = std::min(fc, fd);
  const double found_f = std::min(f, best_f);
  if (!(found_f < start_f - 1e-9)) {
    v.value = start;
    return start_f;
  }
  v.value = f < best_f ? point(t) : point(best_t);
  return found_f;
}

Variable device_variable(const std::string& type, RunFitParam p, const models::EfficiencyModel& e) {
  Variable v{type, p, 1.0, 0, 0, true};
  switch (p) {
    case RunFitParam::kGemm: {
      const double top = std::max(e.gemm_efficiency, e.gemm_fp32_efficiency);
      v.lo = 0.05 / top, v.hi = 1.0 / top;  // efficiencies between 0.05 and 1
      break;
    }
    case RunFitParam::kMemory: v.value = e.memory_efficiency, v.lo = 0.05, v.hi = 1.0; break;
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

RunFitResult fit_to_runs(const std::vector<models::Suite>& suites, const models::Catalog& catalog,
                         const RunFitOptions& options) {
  RunFitResult out;
  std::vector<PreparedRow> rows;
  std::map<std::string, DeviceBase> devices;
  std::map<std::string, LinkBase> links;
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
      PreparedRow p;
      p.suite = static_cast<int>(s);
      p.measured = row.measured;
      p.workload = models::suite_workload(suite, row);
      p.base = models::suite_cluster(row.system, static_cast<int>(models::suite_row_gpus(row)), catalog);
      auto plan = models::suite_plan(row, p.base, p.workload, r.micro);
      if (!std::holds_alternative<models::Plan>(plan)) {
        ++sf.rows_skipped;
        continue;
      }
      p.plan = std::get<models::Plan>(std::move(plan));
      for (const models::NodeType& nt : p.base.node_types) {
        auto [it, fresh] = devices.try_emplace(nt.gpu.name);
        if (fresh) it->second = {nt.gpu.efficiency, p.workload.training.dtype, 0};
        ++it->second.rows;
      }
      std::map<std::string, LinkBase> row_links;
      collect_links(p.base, row_links);
      for (const auto& [name, l] : row_links) {
        note_link(links, name, l.figures);
        ++links[name].rows;
        if (!l.consistent) links[name].consistent = false;
      }
      rows.push_back(std::move(p));
      ++sf.rows_used;
    }
    out.suites.push_back(sf);
  }
  if (rows.empty()) throw std::runtime_error("no row of the suites can be predicted: nothing to fit");

  std::vector<Variable> vars;
  std::vector<RunFitParam> seen;
  for (RunFitParam p : options.params) {
    if (std::find(seen.begin(), seen.end(), p) != seen.end()) continue;  // "gemm,gemm": once
    seen.push_back(p);
    if (p != RunFitParam::kLinks) {
      for (const auto& [type, b] : devices) vars.push_back(device_variable(type, p, b.efficiency));
      continue;
    }
    for (const auto& [name, l] : links) {
      if (!l.consistent) {
        out.links_not_fitted.push_back(name + ": its links differ between the suites' nodes (a profile holds one figure per class)");
        continue;
      }
      vars.push_back({name, p, 1.0, 0.1, 2.0, true});  // a scale on the achieved bandwidth
    }
  }

  const auto evaluate = [&] { return objective(profile_of(vars, devices, links), rows); };
  std::vector<double> before, after;
  out.objective_before = objective(profile_of(vars, devices, links), rows, &before);
  double current = out.objective_before;
  for (int sweep = 0; sweep < std::max(1, options.sweeps); ++sweep) {
    const double start = current;
    for (std::size_t k = 0; k < vars.size(); ++k) current = minimise_one(vars, k, evaluate);
    if (start - current < 1e-6) break;  // converged
  }
  out.profile = profile_of(vars, devices, links);
  out.objective_after = objective(out.profile, rows, &after);

  // Per-suite MAPE before and after, over the rows used.
  for (std::size_t s = 0; s < out.suites.size(); ++s) {
    std::vector<double> pb, pa, m;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (rows[i].suite != static_cast<int>(s) || before[i] <= 0 || after[i] <= 0) continue;
      pb.push_back(before[i]), pa.push_back(after[i]), m.push_back(rows[i].measured);
    }
    out.suites[s].mape_before = models::mape(pb, m).value_or(0);
    out.suites[s].mape_after = models::mape(pa, m).value_or(0);
  }

  std::string names;
  int used = 0;
  for (const SuiteFit& sf : out.suites) names += (names.empty() ? "" : ", ") + sf.suite, used += sf.rows_used;
  out.profile.name = "fit";
  out.profile.source = "fitted to " + std::to_string(used) + " measured rows of " + names;
  for (const Variable& v : vars) {
    FittedFigure f{v.name, v.param, 0, 0, 0};
    if (v.param == RunFitParam::kLinks) {
      const LinkBase& l = links.at(v.name);
      f.rows = l.rows;
      f.catalog_value = l.figures.bandwidth_Bps;
      f.fitted_value = l.figures.bandwidth_Bps * v.value;
      out.figures.push_back(f);
      continue;
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
    out.figures.push_back(f);
  }
  return out;
}

}  // namespace hetsim::calibration
