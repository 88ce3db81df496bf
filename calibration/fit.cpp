// SPDX-License-Identifier: Apache-2.0
#include "fit.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <stdexcept>

#include "microbench.hpp"

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

const char* to_string(KernelRole r) {
  switch (r) {
    case KernelRole::kFitted: return "fitted";
    case KernelRole::kStreamReference: return "stream reference";
    case KernelRole::kComputeBound: return "compute-bound";
    case KernelRole::kOptimizer: return "optimizer step";
  }
  return "?";
}

namespace {

/// Roofline (Williams et al., CACM 2009): a kernel runs at min(compute roof, intensity x memory
/// roof). The cost model has one compute roof, the FMA peak of its GEMMs; a transcendental
/// function is not FMA work: an exp is a range reduction plus a polynomial of tens of
/// instructions (exec/kernel_math.hpp exp_clamped: vectorised on the cpu-avx2 device, where GeLU
/// then runs at LayerNorm's rate, but not on cpu-scalar, 4-5x slower; a libm call per element
/// vectorises on neither), and on GPUs it goes to the special-function units (a quarter of the
/// FMA rate or less; NVIDIA CUDA C++ Programming Guide, "Arithmetic Instructions" throughput
/// table). One per element can put such a kernel under an in-core ceiling the model does not
/// know, so its time says nothing certain about bytes/s: it is reported, not fitted. One per row
/// (LayerNorm's sqrt) is negligible per byte. That holds on CPUs. On a GPU the special-function
/// units return a transcendental per element faster than memory delivers the element (H100 SXM:
/// 16 results per clock per SM x 132 SMs x 1.98 GHz = 4.2e12/s, against 3.35 TB/s / 8 bytes =
/// 0.4e12 elements/s for an FP32 in-out kernel), so GeLU is a memory-bound kernel there and is
/// fitted (on an H200, 2026-12-04: GeLU 2.8-3.5 TB/s, axpy 3.5-5.8 TB/s).
constexpr double kComputeBoundTranscendentalsPerElement = 0.5;

KernelRole role_of(const MemoryKernel& k, bool host_memory) {
  if (k.stream) return KernelRole::kStreamReference;
  if (k.optimizer) return KernelRole::kOptimizer;
  if (host_memory && k.transcendentals_per_element >= kComputeBoundTranscendentalsPerElement)
    return KernelRole::kComputeBound;
  return KernelRole::kFitted;
}

}  // namespace

MemoryFit fit_memory_or_largest(const std::vector<Sample>& samples) {
  const Sample* largest = nullptr;
  for (const Sample& s : samples)
    if (s.kind == SampleKind::kMemory && (largest == nullptr || s.size_bytes > largest->size_bytes)) largest = &s;
  if (largest == nullptr) throw std::invalid_argument("memory fit: no memory-bound samples");
  MemoryFit f;
  try {
    f = fit_memory(samples);
    if (largest->size_bytes / f.achieved_Bps >= 0.1 * largest->time_s) return f;
    f.fallback = "the sizes are launch-bound (the fitted bytes term is under a tenth of the largest sample's time)";
  } catch (const std::exception&) {
    f.fallback = "the times do not grow with the bytes";
  }
  f.achieved_Bps = largest->algbw_Bps();
  f.kernel_launch_s = 0;
  f.samples = 0;
  for (const Sample& s : samples) f.samples += s.kind == SampleKind::kMemory;
  return f;
}

MemoryBoundFit fit_memory_bound(const std::vector<Sample>& samples, bool host_memory) {
  MemoryBoundFit out;
  std::vector<Sample> fitted;
  for (const MemoryKernel& k : kMemoryKernels) {
    std::vector<Sample> mine;
    for (const Sample& s : samples)
      if (s.kind == SampleKind::kMemory && s.op == k.op) mine.push_back(s);
    if (mine.empty()) continue;
    KernelRate r;
    r.op = k.op;
    r.role = role_of(k, host_memory);
    r.samples = static_cast<int>(mine.size());
    r.achieved_Bps = fit_memory_or_largest(mine).achieved_Bps;
    out.kernels.push_back(r);
    if (r.role == KernelRole::kFitted) fitted.insert(fitted.end(), mine.begin(), mine.end());
  }
  for (const Sample& s : samples)
    if (s.kind == SampleKind::kMemory) memory_kernel(s.op);  // an unknown kernel is an error, not ignored
  if (fitted.empty()) throw std::invalid_argument("memory fit: no memory-bound elementwise kernel among the samples");
  out.memory = fit_memory_or_largest(fitted);
  return out;
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
  // Flat times fit a bandwidth term of ~0 (a link of 1e21 B/s: s60 hunt, every p2p sample at
  // 0.5 s): the size term must account for at least 1% of the slowest sample's time.
  double size_term_s = 0, slowest_s = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    size_term_s = std::max(size_term_s, x[0] * rows[i][0]);
    slowest_s = std::max(slowest_s, y[i]);
  }
  if (!(x[0] > 0) || size_term_s < 0.01 * slowest_s)
    throw std::runtime_error("link fit: time does not grow with the message size");
  f.bandwidth_Bps = 1.0 / x[0];
  f.latency_s = std::max(0.0, x[1]);
  return f;
}

}  // namespace hetsim::calibration
