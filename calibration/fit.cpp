// SPDX-License-Identifier: Apache-2.0
#include "fit.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <stdexcept>

#include "compute_cost.hpp"

namespace hetsim::calibration {

std::vector<double> fit_relative_least_squares(const std::vector<std::vector<double>>& rows,
                                               const std::vector<double>& y) {
  if (rows.empty() || rows.size() != y.size()) throw std::invalid_argument("least squares: no samples");
  const Eigen::Index n = static_cast<Eigen::Index>(rows.size());
  const Eigen::Index p = static_cast<Eigen::Index>(rows.front().size());
  if (n < p) throw std::invalid_argument("least squares: fewer samples than parameters");
  Eigen::MatrixXd a(n, p);
  Eigen::VectorXd b(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    if (!(y[i] > 0)) throw std::invalid_argument("least squares: non-positive time");
    const double w = 1.0 / y[i];
    for (Eigen::Index j = 0; j < p; ++j) a(i, j) = rows[i][j] * w;
    b(i) = 1.0;  // y_i * w
  }
  const Eigen::VectorXd x = a.colPivHouseholderQr().solve(b);
  return std::vector<double>(x.data(), x.data() + p);
}

MemoryFit fit_memory(const std::vector<Sample>& samples) {
  std::vector<std::vector<double>> rows;
  std::vector<double> y;
  for (const Sample& s : samples) {
    if (s.kind != SampleKind::kMemory) continue;
    rows.push_back({s.size_bytes, 1.0});
    y.push_back(s.time_s);
  }
  MemoryFit f;
  f.samples = static_cast<int>(y.size());
  const auto x = fit_relative_least_squares(rows, y);
  if (!(x[0] > 0)) throw std::runtime_error("memory fit: time does not grow with bytes");
  f.achieved_Bps = 1.0 / x[0];
  f.kernel_launch_s = std::max(0.0, x[1]);
  return f;
}

GemmFit fit_gemm(const std::vector<Sample>& samples, double peak_flops, double kernel_launch_s) {
  std::vector<std::vector<double>> rows;
  std::vector<double> y;
  for (const Sample& s : samples) {
    if (s.kind != SampleKind::kGemm || s.time_s <= kernel_launch_s) continue;
    const double k_factor = (s.k + models::kGemmK0) / s.k;  // main-loop prologue (compute_cost.hpp)
    rows.push_back({s.work_flop() * k_factor, k_factor});
    y.push_back(s.time_s - kernel_launch_s);
  }
  GemmFit f;
  f.samples = static_cast<int>(y.size());
  const auto x = fit_relative_least_squares(rows, y);
  if (!(x[0] > 0)) throw std::runtime_error("gemm fit: time does not grow with work");
  f.unclamped_efficiency = 1.0 / (x[0] * peak_flops);
  f.gemm_efficiency = std::min(1.0, f.unclamped_efficiency);
  // With e clamped, recompute the slope so that h stays consistent with the large-GEMM rate.
  const double slope = 1.0 / (f.gemm_efficiency * peak_flops);
  f.gemm_half_work_flop = std::max(0.0, x[1] / slope);
  return f;
}

LinkFit fit_link(const std::vector<Sample>& samples, double collective_launch_s) {
  std::vector<std::vector<double>> rows;
  std::vector<double> y;
  for (const Sample& s : samples) {
    if (s.kind == SampleKind::kAllReduce && s.group > 1) {
      const double n = s.group;
      const double t = s.time_s - collective_launch_s;
      if (t <= 0) continue;
      rows.push_back({2.0 * (n - 1) / n * s.size_bytes, 2.0 * (n - 1)});
      y.push_back(t);
    } else if (s.kind == SampleKind::kP2p) {
      rows.push_back({s.size_bytes, 1.0});
      y.push_back(s.time_s);
    }
  }
  LinkFit f;
  f.samples = static_cast<int>(y.size());
  const auto x = fit_relative_least_squares(rows, y);
  if (!(x[0] > 0)) throw std::runtime_error("link fit: time does not grow with the message size");
  f.bandwidth_Bps = 1.0 / x[0];
  f.latency_s = std::max(0.0, x[1]);
  return f;
}

}  // namespace hetsim::calibration
