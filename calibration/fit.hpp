// SPDX-License-Identifier: Apache-2.0
// Fitters from microbenchmark samples to the cost model's parameters. Every fit minimises
// RELATIVE errors, so that microsecond kernels and second-long ones weigh the same: Eigen least
// squares with rows weighted by 1/t (memory, links), a minimax search for GEMMs (gemm_fit.cpp).
#pragma once
#include <string>
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
  /// Why the line fit was not used (empty when it was): times that do not grow with the bytes,
  /// or a slope that explains under a tenth of the largest sample (launch-bound sizes). The
  /// rate is then the largest sample's bytes / time and the launch 0.
  std::string fallback;
};
/// Fits every kMemory sample given (the caller chooses which kernels: see fit_memory_bound).
/// Throws when the times do not grow with the bytes.
MemoryFit fit_memory(const std::vector<Sample>& samples);
/// fit_memory, or when it throws or the slope is launch-bound noise, the largest sample's rate
/// (MemoryFit::fallback says why). Throws only without samples.
MemoryFit fit_memory_or_largest(const std::vector<Sample>& samples);

/// What a memory microbenchmark's kernel does per element (microbench.hpp kMemoryKernels).
enum class KernelRole {
  kFitted,          ///< memory-bound elementwise kernel: sets the memory efficiency
  kStreamReference, ///< a pure stream (axpy): the memory roof, reported, not fitted
  kComputeBound,    ///< a transcendental per element on a CPU: its time is the function's, not the bytes'
  kOptimizer,       ///< the optimizer step (Adam): its own rate, the profile's optimizer_memory
};
const char* to_string(KernelRole r);

/// One memory-bound-kernel microbenchmark's own fit (fit_memory on its samples alone).
struct KernelRate {
  std::string op;
  KernelRole role = KernelRole::kFitted;
  double achieved_Bps = 0;  ///< counted bytes / (t - launch), fitted over its sizes
  int samples = 0;
};

/// The memory fit of a device and every kernel's own rate: the efficiency is fitted on the
/// kFitted kernels only; the others are reported (KernelRate), never mixed into it.
struct MemoryBoundFit {
  MemoryFit memory;
  std::vector<KernelRate> kernels;  ///< in the order of microbench.hpp kMemoryKernels
};
/// host_memory: the device computes in host memory (a CPU), where a transcendental per element
/// makes a kernel compute-bound (KernelRole::kComputeBound); on a GPU it does not (fit.cpp).
MemoryBoundFit fit_memory_bound(const std::vector<Sample>& samples, bool host_memory = true);

/// What the GEMM fit minimises over the samples' relative errors (gemm_fit.cpp): the largest
/// (CPUs: the error a profile is judged by) or their root mean square (GPUs: the vendor library's
/// per-shape kernel choice scatters equal-work GEMMs, which minimax would spread over e).
enum class GemmFitCriterion { kMinimax, kLeastSquares };

/// models/compute_cost.cpp gemm_time() on an fp32 GEMM (m x k)(k x n) of work W:
///   t = max((W + h)/(peak e) (k + K0)/k, bytes/memory_Bps) + L   (K0: models::kGemmK0 by default),
/// the roofline of Williams et al. (CACM 2009) with the efficiency ramp eff(W) = e W/(W + h).
/// e and h >= 0 minimise max_i |t_model_i / t_i - 1| (relative, so that microsecond and
/// second-long GEMMs weigh the same; the worst sample, what a profile's error on its own
/// samples is; or the root mean square of these errors: GemmFitCriterion), less the error a
/// sample that outran the memory roof has whatever e and h: a
/// 1-D search over h, with for each h the best e found by a 1-D search in log e
/// started at log e = mean log(c_i / (t_i - L)). L (kernel launch) comes from the memory fit,
/// memory_Bps (achieved: bandwidth x gemm_memory) from the stream reference (calibrate.cpp).
struct GemmFit {
  double gemm_efficiency = 0;       ///< e, in (0, 1]: the best fit with e <= 1
  double unclamped_efficiency = 0;  ///< best e without the bound: above 1 when the peak is too low
  double gemm_half_work_flop = 0;   ///< h, >= 0
  int samples = 0;
  int memory_bound_samples = 0;     ///< samples the fitted model puts on the memory roof
  double max_rel_error = 0;         ///< max_i |t_model_i / t_i - 1| at (e, h)
  double rms_rel_error = 0;         ///< sqrt(mean_i (t_model_i / t_i - 1)^2)
  /// max_i (|t_model_i / t_i - 1| - floor_i), the error no e or h could remove taken out:
  /// floor_i = max(0, (bytes_i / memory_Bps + L) / t_i - 1) of a GEMM faster than the memory roof
  double max_rel_error_unforced = 0;
  int memory_roof_overruns = 0;       ///< samples that ran faster than the memory roof allows (floor_i > 0)
  double max_memory_roof_overrun = 0; ///< max_i (bytes_i / memory_Bps + L) / t_i over them
  double best_sample_flops = 0;     ///< highest W / t any sample ran at
  Sample best_sample;               ///< the sample that ran at it
  double gemm_k0 = 64;              ///< the K0 the fit used (fit_gemm_and_k0: the best of its candidates)
  double gemm_full_outputs = 0;     ///< the grid-fill size the fit used (0: none; models::gemm_grid_fill)
  GemmFitCriterion criterion = GemmFitCriterion::kMinimax;
  double criterion_value = 0;       ///< what the criterion minimised, at (e, h): the unforced max or rms error
};
GemmFit fit_gemm(const std::vector<Sample>& samples, double peak_flops, double kernel_launch_s,
                 double memory_Bps = 0, double k0 = 64, double full_outputs = 0,
                 GemmFitCriterion criterion = GemmFitCriterion::kMinimax);
/// fit_gemm for each K0 of `candidates`, the one with the smallest error by `criterion` (without
/// the memory roof's forced part). K0 is a device's tile-pipeline prologue in k (compute_cost.hpp
/// kGemmK0: 64 on GPUs); a CPU's blocked kernels run small-k GEMMs at full speed (K0 ~ 0).
/// With several `full_outputs_candidates` (EfficiencyModel::gemm_full_outputs; 0: none), every
/// pair of a K0 and a grid-fill size is fitted and the best kept (by `criterion`).
inline const std::vector<double> kGemmK0Candidates{0, 8, 16, 32, 64, 128};
GemmFit fit_gemm_and_k0(const std::vector<Sample>& samples, double peak_flops, double kernel_launch_s,
                        double memory_Bps, const std::vector<double>& candidates = kGemmK0Candidates,
                        const std::vector<double>& full_outputs_candidates = {0},
                        GemmFitCriterion criterion = GemmFitCriterion::kMinimax);
/// Grid-fill sizes to try on a GPU: 0 (none) and the samples' output sizes m x n from the
/// smallest to twice the largest in steps of sqrt(2). A GPU kernel runs one block per output
/// tile, so a small output leaves SMs idle (the execution engine's 128 x 128 tiles on an H200:
/// 3 TFLOP/s at 256 x 1024 outputs, 30 at 2048 x 4096, the same k; 2026-12-04), which the
/// work-based ramp alone cannot fit.
std::vector<double> full_outputs_ladder(const std::vector<Sample>& samples);
/// The time models::gemm_time gives a sample with these figures (memory_Bps 0: no memory roof).
double gemm_model_time(const Sample& s, double peak_flops, double efficiency, double half_work_flop,
                       double kernel_launch_s, double memory_Bps, double k0 = 64, double full_outputs = 0);

/// Alpha-beta (Hockney 1994) per link class. All-reduce samples follow the ring of
/// models/comm_cost.cpp: t - launch = 2(n-1)/n S / B + 2(n-1) alpha; p2p samples t = alpha + S / B.
struct LinkFit {
  double bandwidth_Bps = 0;  ///< B achieved per device (p2p: by each of the pairs running at once)
  double latency_s = 0;      ///< alpha per hop, >= 0
  int samples = 0;
};
LinkFit fit_link(const std::vector<Sample>& samples, double collective_launch_s);

}  // namespace hetsim::calibration
