// SPDX-License-Identifier: Apache-2.0
// GEMM fit (fit.hpp fit_gemm): e and h of models::gemm_time by a search that minimises the
// model's own largest relative error over the samples, memory roof included.
//
// Why not linear least squares on t - L = (W + h)/(peak e) (k + K0)/k: that regression's
// intercept is h/(peak e); on a CPU, big GEMMs that spill out of cache run slower than medium
// ones, the intercept goes negative, h is clamped to 0, and the slope's e then overshoots every
// measured rate (the profile mispredicted its own samples by up to -48%/+225% on this project's
// development machine, Nov 2026). Here h >= 0 is a constraint of the search instead, and the
// criterion is the one a profile is judged by: its worst relative error on its own samples
// (a Chebyshev / minimax fit; Cheney, "Introduction to Approximation Theory", 1966, ch. 1).
//
// On a GPU the criterion is least squares of the same relative errors instead (fit.hpp
// GemmFitCriterion): the vendor library picks a kernel per shape, so GEMMs of equal work scatter
// by +-20% there (cuBLAS on an H200, 2026-12-04: 0.54 GFLOP in 16.4 to 23.3 us), which no (e, h)
// removes. Minimax spreads its error evenly over that scatter and leaves the large GEMMs, which
// agree with each other and make up a training step, wherever the scatter puts them: the full
// grid's fit put their rate at 66 TFLOP/s where they ran at 51 (a step then predicted 30% fast).
// Least squares lets the many consistent samples pin e: the same samples fit at 0.79 (with the
// grid-fill search, as calibrate runs it), the large GEMMs within 12%.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "compute_cost.hpp"
#include "fit.hpp"
#include "golden_section.hpp"

namespace hetsim::calibration {
namespace {

constexpr double kFp32Bytes = 4.0;  // the execution engine's GEMMs are fp32

/// One sample, reduced to what the objective needs.
struct Point {
  double work_flop, k_factor, memory_s, t_s;
  double floor;  ///< error the memory roof forces whatever e and h: max(0, (memory_s + L) / t - 1)
};

/// max_i err_i (minimax) or sqrt(mean_i err_i^2) (least squares), err_i = |t_model_i / t_i - 1| -
/// floor_i (at least 0), with t_model = max(c_i / e, memory_i) + L and
/// c_i = (W + h) k_factor / peak. floor_i is the error of a sample that ran faster than the memory
/// roof allows: no e or h removes it, and without subtracting it the largest such floor would
/// flatten the objective and leave e and h undetermined.
class Objective {
 public:
  Objective(std::vector<Point> points, double peak_flops, double launch_s, GemmFitCriterion criterion)
      : points_(std::move(points)), peak_(peak_flops), launch_s_(launch_s), criterion_(criterion) {}

  double operator()(double h, double log_e) const {
    const double inv_e = std::exp(-log_e);
    double worst = 0, sum_sq = 0;
    for (const Point& p : points_) {
      const double compute_s = (p.work_flop + h) * p.k_factor / peak_ * inv_e;
      const double err = std::abs((std::max(compute_s, p.memory_s) + launch_s_) / p.t_s - 1.0) - p.floor;
      worst = std::max(worst, err);
      sum_sq += std::max(0.0, err) * std::max(0.0, err);
    }
    return criterion_ == GemmFitCriterion::kMinimax ? worst : std::sqrt(sum_sq / static_cast<double>(points_.size()));
  }

  /// Where to centre the search in log e: mean log(c_i / (t_i - L)) over the samples that outlast
  /// the launch (the least-squares scale in log space when every sample is on the compute roof).
  double start_log_e(double h) const {
    double sum = 0;
    int n = 0;
    for (const Point& p : points_) {
      const double t = p.t_s - launch_s_;
      if (t <= 0) continue;
      sum += std::log((p.work_flop + h) * p.k_factor / peak_ / t);
      ++n;
    }
    return n ? sum / n : 0.0;
  }

  /// min over log e <= log_e_max of (*this)(h, .): a grid, then golden-section refinement of
  /// the best grid cell (Kiefer 1953; Press et al., "Numerical Recipes", 3rd ed., §10.2). In log e
  /// each term |t_model_i / t_i - 1| is a monotone function's distance from a constant, so their
  /// maximum is quasi-convex (unimodal); the grid guards the flat stretches of the memory roof.
  std::pair<double, double> best_log_e(double h, double log_e_max) const {
    const double centre = std::min(start_log_e(h), log_e_max);
    const double lo = centre - 4.0, hi = std::min(centre + 4.0, log_e_max);
    return minimise([&](double u) { return (*this)(h, u); }, lo, hi);
  }

  /// Grid of 81 points on [lo, hi], then 60 golden-section steps around the best one.
  template <class F>
  static std::pair<double, double> minimise(const F& f, double lo, double hi) {
    constexpr int kGrid = 80;
    double best_x = lo, best_f = std::numeric_limits<double>::infinity();
    const double step = (hi - lo) / kGrid;
    for (int i = 0; i <= kGrid; ++i) {
      const double x = lo + i * step;
      if (const double v = f(x); v < best_f) best_f = v, best_x = x;
    }
    const auto [x, fx] = golden_section_minimum(f, std::max(lo, best_x - step), std::min(hi, best_x + step), 60);
    return fx < best_f ? std::make_pair(x, fx) : std::make_pair(best_x, best_f);
  }

 private:
  std::vector<Point> points_;
  double peak_, launch_s_;
  GemmFitCriterion criterion_;
};

struct Solution {
  double h = 0, log_e = 0, value = std::numeric_limits<double>::infinity();
};

/// Best (h, log e) with log e <= log_e_max: h = 0, a log grid of h between 1e-3 x the smallest
/// and 10 x the largest work (beyond, only e/h is identifiable), then golden section in log h.
Solution search(const Objective& f, double min_work, double max_work, double log_e_max) {
  Solution best;
  auto consider = [&](double h) {
    const auto [u, v] = f.best_log_e(h, log_e_max);
    if (v < best.value) best = {h, u, v};
  };
  consider(0.0);
  const double lo = std::log(1e-3 * min_work), hi = std::log(10.0 * max_work);
  const auto [log_h, v] = Objective::minimise([&](double x) { return f.best_log_e(std::exp(x), log_e_max).second; }, lo, hi);
  if (v < best.value) consider(std::exp(log_h));
  return best;
}

}  // namespace

double gemm_model_time(const Sample& s, double peak_flops, double efficiency, double half_work_flop,
                       double kernel_launch_s, double memory_Bps, double k0, double full_outputs) {
  models::DeviceRates d;
  d.peak_flops = peak_flops;
  d.memory_Bps = memory_Bps > 0 ? memory_Bps : std::numeric_limits<double>::infinity();
  d.eff.memory_efficiency = 1.0;  // memory_Bps is already the achieved rate
  d.eff.gemm_efficiency = efficiency;
  d.eff.gemm_half_work_flop = half_work_flop;
  d.eff.kernel_launch_s = kernel_launch_s;
  d.eff.gemm_k0 = k0;
  d.eff.gemm_full_outputs = full_outputs;
  return models::gemm_time(d, s.m, s.n, s.k, 1, kFp32Bytes);
}

GemmFit fit_gemm(const std::vector<Sample>& samples, double peak_flops, double kernel_launch_s, double memory_Bps,
                 double k0, double full_outputs, GemmFitCriterion criterion) {
  if (!(peak_flops > 0) || !std::isfinite(peak_flops)) throw std::invalid_argument("gemm fit: peak must be positive and finite");
  std::vector<Sample> used;
  std::vector<Point> points;
  double min_work = std::numeric_limits<double>::infinity(), max_work = 0;
  GemmFit f;
  for (const Sample& s : samples) {
    if (s.kind != SampleKind::kGemm) continue;
    if (!(s.time_s > 0) || !(s.work_flop() > 0) || !std::isfinite(s.time_s))
      throw std::invalid_argument("gemm fit: sample without a time or work: " + s.key());
    const double bytes = (s.m * s.k + s.k * s.n + s.m * s.n) * kFp32Bytes;  // as models::gemm_time counts them
    const double memory_s = memory_Bps > 0 ? bytes / memory_Bps : 0.0;
    const double floor = std::max(0.0, (memory_s + kernel_launch_s) / s.time_s - 1.0);
    const double fill = models::gemm_grid_fill(s.m * s.n, full_outputs);
    points.push_back({s.work_flop(), (s.k + k0) / s.k / fill, memory_s, s.time_s, floor});
    used.push_back(s);
    min_work = std::min(min_work, s.work_flop());
    max_work = std::max(max_work, s.work_flop());
    if (s.work_flop() / s.time_s > f.best_sample_flops) f.best_sample_flops = s.work_flop() / s.time_s, f.best_sample = s;
  }
  if (points.size() < 2) throw std::invalid_argument("gemm fit: fewer than 2 GEMM samples");
  const auto beyond_launch = std::count_if(used.begin(), used.end(), [&](const Sample& x) { return x.time_s > kernel_launch_s; });
  if (beyond_launch < 2)
    throw std::invalid_argument("gemm fit: fewer than 2 GEMM samples take longer than the kernel launch (" +
                                std::to_string(kernel_launch_s) + " s): no compute time to fit");
  if (max_work <= min_work) throw std::invalid_argument("gemm fit: every sample has the same work (h is not identifiable)");
  const Objective objective(std::move(points), peak_flops, kernel_launch_s, criterion);
  const double no_bound = std::numeric_limits<double>::infinity();
  Solution s = search(objective, min_work, max_work, no_bound);
  f.unclamped_efficiency = std::exp(s.log_e);
  if (!std::isfinite(f.unclamped_efficiency) || !std::isfinite(s.value))
    throw std::invalid_argument("gemm fit: no finite efficiency fits the samples");
  if (f.unclamped_efficiency > 1.0) s = search(objective, min_work, max_work, 0.0);  // best with e <= 1
  f.gemm_efficiency = std::min(1.0, std::exp(s.log_e));
  f.gemm_k0 = k0;
  f.gemm_full_outputs = full_outputs;
  f.criterion = criterion;
  f.criterion_value = s.value;
  f.gemm_half_work_flop = s.h;
  f.samples = static_cast<int>(used.size());
  double sum_sq = 0;
  for (const Sample& x : used) {
    const double t =
        gemm_model_time(x, peak_flops, f.gemm_efficiency, f.gemm_half_work_flop, kernel_launch_s, memory_Bps, k0, full_outputs);
    const double err = t / x.time_s - 1.0;
    f.max_rel_error = std::max(f.max_rel_error, std::abs(err));
    sum_sq += err * err;
    const double compute_only =
        gemm_model_time(x, peak_flops, f.gemm_efficiency, f.gemm_half_work_flop, kernel_launch_s, 0, k0, full_outputs);
    if (t > compute_only) ++f.memory_bound_samples;
    const double roof_s = memory_Bps > 0 ? (x.m * x.k + x.k * x.n + x.m * x.n) * kFp32Bytes / memory_Bps + kernel_launch_s : 0.0;
    const double floor = std::max(0.0, roof_s / x.time_s - 1.0);
    if (floor > 0) {
      ++f.memory_roof_overruns;
      f.max_memory_roof_overrun = std::max(f.max_memory_roof_overrun, roof_s / x.time_s);
    }
    f.max_rel_error_unforced = std::max(f.max_rel_error_unforced, std::abs(err) - floor);
  }
  f.rms_rel_error = std::sqrt(sum_sq / static_cast<double>(used.size()));
  return f;
}

GemmFit fit_gemm_and_k0(const std::vector<Sample>& samples, double peak_flops, double kernel_launch_s,
                        double memory_Bps, const std::vector<double>& candidates,
                        const std::vector<double>& full_outputs_candidates, GemmFitCriterion criterion) {
  if (candidates.empty()) throw std::invalid_argument("gemm fit: no K0 candidates");
  if (full_outputs_candidates.empty()) throw std::invalid_argument("gemm fit: no full-outputs candidates");
  GemmFit best;
  bool any = false;
  for (const double full_outputs : full_outputs_candidates)
    for (const double k0 : candidates) {
      GemmFit f = fit_gemm(samples, peak_flops, kernel_launch_s, memory_Bps, k0, full_outputs, criterion);
      if (!any || f.criterion_value < best.criterion_value) best = f;
      any = true;
    }
  return best;
}

std::vector<double> full_outputs_ladder(const std::vector<Sample>& samples) {
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (const Sample& s : samples)
    if (s.kind == SampleKind::kGemm && s.m * s.n > 0) lo = std::min(lo, s.m * s.n), hi = std::max(hi, s.m * s.n);
  std::vector<double> out{0};
  if (!(hi > 0)) return out;
  for (double x = lo; x <= 2 * hi; x *= std::sqrt(2.0)) out.push_back(x);
  return out;
}

}  // namespace hetsim::calibration
