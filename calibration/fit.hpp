// SPDX-License-Identifier: Apache-2.0
// Fitters (Eigen least squares) from microbenchmark samples to the cost model's parameters.
// Every fit minimises RELATIVE residuals (rows weighted by 1/t), so that microsecond kernels
// and second-long ones weigh the same.
#pragma once
#include <vector>

#include "sample.hpp"

namespace hetsim::calibration {

/// Weighted linear least squares: argmin_x sum_i ((A_i x - y_i) / y_i)^2 (QR with column
/// pivoting; Golub & Van Loan, "Matrix Computations", 4th ed., §5.4). rows[i] = A_i.
std::vector<double> fit_relative_least_squares(const std::vector<std::vector<double>>& rows, const std::vector<double>& y);

/// models/compute_cost.cpp memory_time(): t = bytes / (bandwidth * memory_efficiency) + kernel_launch.
struct MemoryFit {
  double achieved_Bps = 0;     ///< bandwidth * memory_efficiency
  double kernel_launch_s = 0;  ///< intercept, >= 0
  int samples = 0;
};
MemoryFit fit_memory(const std::vector<Sample>& samples);

/// models/compute_cost.cpp gemm_time() on a compute-bound GEMM (m x k)(k x n) of work W:
///   t - L = (W + h) / (peak e) * (k + K0) / k      (K0 = models::kGemmK0),
/// linear in (W (k+K0)/k, (k+K0)/k) with coefficients 1 / (peak e) and h / (peak e);
/// L (kernel launch) comes from the memory fit.
struct GemmFit {
  double gemm_efficiency = 0;      ///< e, in (0, 1]
  double unclamped_efficiency = 0; ///< 1 / (slope * peak): above 1 when the peak is too low
  double gemm_half_work_flop = 0;  ///< h, >= 0
  int samples = 0;
};
GemmFit fit_gemm(const std::vector<Sample>& samples, double peak_flops, double kernel_launch_s);

/// Alpha-beta (Hockney 1994) per link class. All-reduce samples follow the ring of
/// models/comm_cost.cpp: t - launch = 2(n-1)/n S / B + 2(n-1) alpha; p2p samples t = alpha + S / B.
struct LinkFit {
  double bandwidth_Bps = 0;  ///< B, achieved by one pair
  double latency_s = 0;      ///< alpha per hop, >= 0
  int samples = 0;
};
LinkFit fit_link(const std::vector<Sample>& samples, double collective_launch_s);

}  // namespace hetsim::calibration
