// SPDX-License-Identifier: Apache-2.0
// Fitting GPU-type efficiency figures to measured iteration times (run_fit.hpp).
#include "run_fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <variant>

#include "predictor.hpp"
#include "stats.hpp"

namespace hetsim::calibration {
namespace {

/// One row, ready to predict again and again: its own cluster, whose efficiency figures the fit
/// rewrites between evaluations.
struct PreparedRow {
  int suite = 0;
  models::Cluster cluster;
  models::Workload workload;
  models::Plan plan;
  double measured = 0;
};

/// One fitted variable: a figure of one device type, searched in [lo, hi].
struct Variable {
  std::string device_type;
  RunFitParam param = RunFitParam::kGemm;
  double value = 0, lo = 0, hi = 0;
  bool log_scale = true;
};

/// The catalog's figures of a device type and the dtype its rows train in (for reporting).
struct BaseFigures {
  models::EfficiencyModel efficiency;
  models::Dtype dtype = models::Dtype::kBf16;
  int rows = 0;
};

void apply(const std::vector<Variable>& vars, const std::map<std::string, BaseFigures>& base,
           std::vector<PreparedRow>& rows) {
  std::map<std::string, models::EfficiencyModel> eff;
  for (const auto& [type, b] : base) eff[type] = b.efficiency;
  for (const Variable& v : vars) {
    models::EfficiencyModel& e = eff[v.device_type];
    switch (v.param) {
      case RunFitParam::kGemm:
        e.gemm_efficiency = std::min(1.0, e.gemm_efficiency * v.value);
        if (e.gemm_fp32_efficiency > 0) e.gemm_fp32_efficiency = std::min(1.0, e.gemm_fp32_efficiency * v.value);
        break;
      case RunFitParam::kMemory: e.memory_efficiency = v.value; break;
      case RunFitParam::kHost: e.framework_op_host_s = v.value; break;
      case RunFitParam::kFlash: e.flash_scale = v.value; break;
    }
  }
  for (PreparedRow& r : rows)
    for (models::NodeType& nt : r.cluster.node_types) nt.gpu.efficiency = eff.at(nt.gpu.name);
}

/// Mean |ln(predicted/measured)|; a row the model cannot predict counts as a factor of e^3 off.
double objective(std::vector<PreparedRow>& rows, std::vector<double>* predicted = nullptr) {
  double sum = 0;
  if (predicted) predicted->assign(rows.size(), 0);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const models::Report r = models::predict(rows[i].cluster, rows[i].workload, rows[i].plan);
    const bool ok = r.feasible && r.iteration_time_s > 0;
    sum += ok ? std::fabs(std::log(r.iteration_time_s / rows[i].measured)) : 3.0;
    if (predicted && ok) (*predicted)[i] = r.iteration_time_s;
  }
  return sum / static_cast<double>(rows.size());
}

/// Minimises the objective in one variable: a grid over [lo, hi], then golden-section search
/// between the best grid point's neighbours (the objective is unimodal near its minimum but
/// may have plateaus where another stage or device type is the bottleneck).
double minimise_one(std::vector<Variable>& vars, std::size_t k, const std::map<std::string, BaseFigures>& base,
                    std::vector<PreparedRow>& rows) {
  Variable& v = vars[k];
  auto at = [&](double x) {
    v.value = x;
    apply(vars, base, rows);
    return objective(rows);
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

}  // namespace

const char* to_string(RunFitParam p) {
  switch (p) {
    case RunFitParam::kGemm: return "gemm";
    case RunFitParam::kMemory: return "memory";
    case RunFitParam::kHost: return "host";
    case RunFitParam::kFlash: return "flash";
  }
  return "?";
}

std::optional<RunFitParam> parse_run_fit_param(std::string_view name) {
  for (RunFitParam p : {RunFitParam::kGemm, RunFitParam::kMemory, RunFitParam::kHost, RunFitParam::kFlash})
    if (name == to_string(p)) return p;
  return std::nullopt;
}

RunFitResult fit_to_runs(const std::vector<models::Suite>& suites, const models::Catalog& catalog,
                         const RunFitOptions& options) {
  RunFitResult out;
  std::vector<PreparedRow> rows;
  std::map<std::string, BaseFigures> base;
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
      p.cluster = models::suite_cluster(row.system, static_cast<int>(models::suite_row_gpus(row)), catalog);
      auto plan = models::suite_plan(row, p.cluster, p.workload, r.micro);
      if (!std::holds_alternative<models::Plan>(plan)) {
        ++sf.rows_skipped;
        continue;
      }
      p.plan = std::get<models::Plan>(std::move(plan));
      for (const models::NodeType& nt : p.cluster.node_types) {
        auto [it, fresh] = base.try_emplace(nt.gpu.name);
        if (fresh) it->second = {nt.gpu.efficiency, p.workload.training.dtype, 0};
        ++it->second.rows;
      }
      rows.push_back(std::move(p));
      ++sf.rows_used;
    }
    out.suites.push_back(sf);
  }
  if (rows.empty()) throw std::runtime_error("no row of the suites can be predicted: nothing to fit");

  std::vector<Variable> vars;
  for (const auto& [type, b] : base) {
    for (RunFitParam p : options.params) {
      Variable v{type, p, 1.0, 0, 0, true};
      if (p == RunFitParam::kGemm) {
        const double top = std::max(b.efficiency.gemm_efficiency, b.efficiency.gemm_fp32_efficiency);
        v.lo = 0.05 / top, v.hi = 1.0 / top;  // efficiencies between 0.05 and 1
      } else if (p == RunFitParam::kMemory) {
        v.value = b.efficiency.memory_efficiency, v.lo = 0.05, v.hi = 1.0;
      } else if (p == RunFitParam::kFlash) {
        v.value = b.efficiency.flash_scale, v.lo = 0.1, v.hi = 2.0;  // the profile's range
      } else {
        v.value = b.efficiency.framework_op_host_s, v.lo = 0, v.hi = 500e-6, v.log_scale = false;
      }
      vars.push_back(v);
    }
  }

  std::vector<double> before, after;
  apply(vars, base, rows);
  out.objective_before = objective(rows, &before);
  double current = out.objective_before;
  for (int sweep = 0; sweep < std::max(1, options.sweeps); ++sweep) {
    const double start = current;
    for (std::size_t k = 0; k < vars.size(); ++k) current = minimise_one(vars, k, base, rows);
    if (start - current < 1e-6) break;  // converged
  }
  apply(vars, base, rows);
  out.objective_after = objective(rows, &after);

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

  // The profile: only the fitted figures; everything else stays the catalog's.
  std::string names;
  int used = 0;
  for (const SuiteFit& sf : out.suites) names += (names.empty() ? "" : ", ") + sf.suite, used += sf.rows_used;
  out.profile.name = "fit";
  out.profile.source = "fitted to " + std::to_string(used) + " measured rows of " + names;
  for (const Variable& v : vars) {
    const BaseFigures& b = base.at(v.device_type);
    models::DeviceProfile& d = out.profile.devices[v.device_type];
    FittedFigure f{v.device_type, v.param, 0, 0, b.rows};
    models::GpuType probe;
    probe.efficiency = b.efficiency;
    switch (v.param) {
      case RunFitParam::kGemm:
        f.catalog_value = probe.gemm_efficiency_in(b.dtype);
        d.gemm_efficiency = std::min(1.0, b.efficiency.gemm_efficiency * v.value);
        if (b.efficiency.gemm_fp32_efficiency > 0)
          d.gemm_fp32_efficiency = std::min(1.0, b.efficiency.gemm_fp32_efficiency * v.value);
        f.fitted_value = std::min(1.0, f.catalog_value * v.value);
        break;
      case RunFitParam::kMemory:
        f.catalog_value = b.efficiency.memory_efficiency;
        d.memory_efficiency = f.fitted_value = v.value;
        break;
      case RunFitParam::kHost:
        f.catalog_value = b.efficiency.framework_op_host_s;
        d.framework_op_host_s = f.fitted_value = v.value;
        break;
      case RunFitParam::kFlash:
        f.catalog_value = b.efficiency.flash_scale;
        d.flash_scale = f.fitted_value = v.value;
        break;
    }
    out.figures.push_back(f);
  }
  return out;
}

}  // namespace hetsim::calibration
