// SPDX-License-Identifier: Apache-2.0
// CPU backend: host memory as device memory, GEMM through Eigen, small dense helpers.
#include <Eigen/Core>
#include <cstdlib>
#include <cstring>
#include <new>

#include "cpu/cpu_backend.hpp"

namespace hetsim::exec::HETSIM_CPU_VARIANT {
namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMatrix, Eigen::Unaligned, Eigen::OuterStride<>>;
using MutMap = Eigen::Map<RowMatrix, Eigen::Unaligned, Eigen::OuterStride<>>;

// A small header in front of every allocation records its size for the memory counters.
constexpr std::size_t kHeaderBytes = 64;  // keeps the payload 64-byte aligned (one cache line)

template <class A, class B>
void gemm_into(MutMap& c, float alpha, const A& a, const B& b, float beta) {
  if (beta == 0.0f) {
    c.noalias() = alpha * (a * b);
  } else {
    if (beta != 1.0f) c *= beta;
    c.noalias() += alpha * (a * b);
  }
}

}  // namespace

void* CpuBackend::allocate_bytes(std::size_t size_bytes) {
  void* raw = std::aligned_alloc(kHeaderBytes, kHeaderBytes + ((size_bytes + 63) / 64) * 64);
  if (!raw) throw BackendError(device_type_ + ": out of host memory allocating " + std::to_string(size_bytes) + " bytes");
  *static_cast<std::size_t*>(raw) = size_bytes;
  const long long used = used_bytes_ += static_cast<long long>(size_bytes);
  long long peak = peak_bytes_.load();
  while (used > peak && !peak_bytes_.compare_exchange_weak(peak, used)) {
  }
  return static_cast<char*>(raw) + kHeaderBytes;
}

void CpuBackend::release(void* device_ptr) {
  if (!device_ptr) return;
  void* raw = static_cast<char*>(device_ptr) - kHeaderBytes;
  used_bytes_ -= static_cast<long long>(*static_cast<std::size_t*>(raw));
  std::free(raw);
}

// memcpy wants valid pointers even for 0 bytes; an empty tensor may have none.
void CpuBackend::upload_bytes(void* dst, const void* src, std::size_t n) {
  if (n > 0) std::memcpy(dst, src, n);
}
void CpuBackend::download_bytes(void* dst, const void* src, std::size_t n) {
  if (n > 0) std::memcpy(dst, src, n);
}
void CpuBackend::copy_bytes(void* dst, const void* src, std::size_t n) { std::memmove(dst, src, n); }

void CpuBackend::gemm(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const float* a,
                      int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  MutMap cm(c, m, n, Eigen::OuterStride<>(ldc));
  // Stored shapes: A is [m,k] (or [k,m] when transposed), B is [k,n] (or [n,k]).
  const bool ta = trans_a == Trans::kYes;
  const bool tb = trans_b == Trans::kYes;
  ConstMap am(a, ta ? k : m, ta ? m : k, Eigen::OuterStride<>(lda));
  ConstMap bm(b, tb ? n : k, tb ? k : n, Eigen::OuterStride<>(ldb));
  if (!ta && !tb) gemm_into(cm, alpha, am, bm, beta);
  else if (ta && !tb) gemm_into(cm, alpha, am.transpose(), bm, beta);
  else if (!ta && tb) gemm_into(cm, alpha, am, bm.transpose(), beta);
  else gemm_into(cm, alpha, am.transpose(), bm.transpose(), beta);
}

void CpuBackend::fill(float* x, std::size_t count, float value) {
  for (std::size_t i = 0; i < count; ++i) x[i] = value;
}

void CpuBackend::scale(std::size_t count, float alpha, float* x) {
  for (std::size_t i = 0; i < count; ++i) x[i] *= alpha;
}

void CpuBackend::axpy(std::size_t count, float alpha, const float* x, float* y) {
  for (std::size_t i = 0; i < count; ++i) y[i] += alpha * x[i];
}

double CpuBackend::sum(const float* x, std::size_t count) {
  double s = 0;
  for (std::size_t i = 0; i < count; ++i) s += x[i];
  return s;
}

}  // namespace hetsim::exec::HETSIM_CPU_VARIANT
