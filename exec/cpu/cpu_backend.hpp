// SPDX-License-Identifier: Apache-2.0
// The CPU backend. The same sources are compiled once per SIMD variant (see exec/CMakeLists.txt):
// HETSIM_CPU_VARIANT names the namespace of one build (e.g. simd256, scalar), so the variants
// link side by side in one binary and are told apart by device type name at run time.
#pragma once
#include <atomic>
#include <string>

#include "backend.hpp"

#ifndef HETSIM_CPU_VARIANT
#error "compile the CPU backend with -DHETSIM_CPU_VARIANT=<namespace>"
#endif

namespace hetsim::exec::HETSIM_CPU_VARIANT {

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(std::string device_type) : device_type_(std::move(device_type)) {}
  ~CpuBackend() override = default;

  const std::string& get_device_type() const override { return device_type_; }
  bool is_host_memory() const override { return true; }

  void* allocate_bytes(std::size_t size_bytes) override;
  void release(void* device_ptr) override;
  void upload_bytes(void* device_dst, const void* host_src, std::size_t size_bytes) override;
  void download_bytes(void* host_dst, const void* device_src, std::size_t size_bytes) override;
  void copy_bytes(void* device_dst, const void* device_src, std::size_t size_bytes) override;
  void synchronize() override {}
  double get_memory_peak_bytes() const override { return static_cast<double>(peak_bytes_.load()); }
  double get_memory_used_bytes() const override { return static_cast<double>(used_bytes_.load()); }

  void gemm(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const float* a, int lda,
            const float* b, int ldb, float beta, float* c, int ldc) override;
  void fill(float* x, std::size_t count, float value) override;
  void scale(std::size_t count, float alpha, float* x) override;
  void axpy(std::size_t count, float alpha, const float* x, float* y) override;
  double sum(const float* x, std::size_t count) override;

  void embedding_forward(const int* tokens, int count, int seq, int hidden, const float* wte,
                         const float* wpe, float* out) override;
  void embedding_backward(const int* tokens, int count, int seq, int hidden, const float* dout,
                          float* dwte, float* dwpe) override;
  void layer_norm_forward(int rows, int cols, float epsilon, const float* x, const float* gamma,
                          const float* beta, float* y, float* mean, float* rstd) override;
  void layer_norm_backward(int rows, int cols, const float* x, const float* gamma, const float* mean,
                           const float* rstd, const float* dy, float* dx, float* dgamma,
                           float* dbeta) override;
  void attention_forward(const AttentionShape& shape, const float* q, const float* k, const float* v,
                         float* probs, float* out) override;
  void attention_backward(const AttentionShape& shape, const float* q, const float* k, const float* v,
                          const float* probs, const float* dout, float* dq, float* dk,
                          float* dv) override;
  void gelu_forward(std::size_t count, const float* x, float* y) override;
  void gelu_backward(std::size_t count, const float* x, const float* dy, float* dx) override;
  void swiglu_forward(std::size_t count, const float* gate, const float* up, float* y) override;
  void swiglu_backward(std::size_t count, const float* gate, const float* up, const float* dy,
                       float* dgate, float* dup) override;
  void cross_entropy_forward(int rows, int vocab, const float* logits, const int* targets, float* probs,
                             float* losses) override;
  void cross_entropy_backward(int rows, int vocab, const float* probs, const int* targets, float scale,
                              float* dlogits) override;
  void adam_step(std::size_t count, const AdamConfig& config, int step, float* param, const float* grad,
                 float* m, float* v) override;

 private:
  std::string device_type_;
  std::atomic<long long> used_bytes_{0};
  std::atomic<long long> peak_bytes_{0};
};

}  // namespace hetsim::exec::HETSIM_CPU_VARIANT
