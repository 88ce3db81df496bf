// SPDX-License-Identifier: Apache-2.0
// The GPU backend class, compiled once per runtime (namespace GPU_NS = cuda_backend | hip_backend)
// from the same sources. Kernels are portable (a register-blocked FP32 GEMM, one block per row
// for norms and softmax); the vendor's BLAS (cuBLAS, or rocBLAS where installed) runs the GEMMs
// when it loads (vendor_blas.hpp; HETSIM_GPU_GEMM chooses).
// Device memory goes through a block cache (block_cache.hpp): freed blocks are kept for reuse.
#pragma once
#include <memory>
#include <mutex>
#include <string>

#include "backend.hpp"
#include "gpu/batch_offsets.hpp"
#include "gpu/block_cache.hpp"
#include "gpu/gpu_compat.hpp"
#include "gpu/vendor_blas.hpp"

namespace hetsim::exec::GPU_NS {

class GpuBackend final : public Backend {
 public:
  GpuBackend(std::string device_type, int device);
  ~GpuBackend() override;

  const std::string& get_device_type() const override { return device_type_; }
  bool is_host_memory() const override { return false; }
  void* allocate_bytes(std::size_t size_bytes) override;
  void release(void* device_ptr) override;
  void upload_bytes(void* device_dst, const void* host_src, std::size_t size_bytes) override;
  void download_bytes(void* host_dst, const void* device_src, std::size_t size_bytes) override;
  void copy_bytes(void* device_dst, const void* device_src, std::size_t size_bytes) override;
  void synchronize() override;
  double get_memory_peak_bytes() const override { return static_cast<double>(peak_bytes_); }
  double get_memory_used_bytes() const override { return static_cast<double>(used_bytes_); }
  std::string describe_kernels() const override { return gemm_note_; }

  void gemm(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
            int ldb, float beta, float* c, int ldc) override;
  void fill(float* x, std::size_t count, float value) override;
  void scale(std::size_t count, float alpha, float* x) override;
  void axpy(std::size_t count, float alpha, const float* x, float* y) override;
  double sum(const float* x, std::size_t count) override;

  void embedding_forward(const int* tokens, int count, int seq, int hidden, const float* wte, const float* wpe,
                         float* out) override;
  void embedding_backward(const int* tokens, int count, int seq, int hidden, const float* dout, float* dwte,
                          float* dwpe) override;
  void layer_norm_forward(int rows, int cols, float epsilon, const float* x, const float* gamma, const float* beta,
                          float* y, float* mean, float* rstd) override;
  void layer_norm_backward(int rows, int cols, const float* x, const float* gamma, const float* mean,
                           const float* rstd, const float* dy, float* dx, float* dgamma, float* dbeta) override;
  void attention_forward(const AttentionShape& shape, const float* q, const float* k, const float* v, float* probs,
                         float* out) override;
  void attention_backward(const AttentionShape& shape, const float* q, const float* k, const float* v,
                          const float* probs, const float* dout, float* dq, float* dk, float* dv) override;
  void gelu_forward(std::size_t count, const float* x, float* y) override;
  void gelu_backward(std::size_t count, const float* x, const float* dy, float* dx) override;
  void swiglu_forward(std::size_t count, const float* gate, const float* up, float* y) override;
  void swiglu_backward(std::size_t count, const float* gate, const float* up, const float* dy, float* dgate,
                       float* dup) override;
  void cross_entropy_forward(int rows, int vocab, const float* logits, const int* targets, float* probs,
                             float* losses) override;
  void cross_entropy_backward(int rows, int vocab, const float* probs, const int* targets, float scale,
                              float* dlogits) override;
  void adam_step(std::size_t count, const AdamConfig& config, int step, float* param, const float* grad, float* m,
                 float* v) override;

  /// C_z = alpha op(A_z) op(B_z) + beta C_z for z in [0, batch) (row-major, strided batches).
  void batched_gemm(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                    const BatchOffsets& a_batch, const float* b, int ldb, const BatchOffsets& b_batch, float beta,
                    float* c, int ldc, const BatchOffsets& c_batch, int batch);

 private:
  /// batched_gemm through the vendor's BLAS: one call, strided when every operand's batches are
  /// evenly spaced, else with per-batch address arrays.
  void vendor_batched_gemm(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                           const BatchOffsets& a_batch, const float* b, int ldb, const BatchOffsets& b_batch,
                           float beta, float* c, int ldc, const BatchOffsets& c_batch, int batch);

  std::string device_type_;
  int device_;
  std::mutex mutex_;
  BlockCache cache_;  ///< device memory: live blocks and freed ones kept for reuse (block_cache.hpp)
  long long used_bytes_ = 0;
  long long peak_bytes_ = 0;
  double* sum_scratch_ = nullptr;
  std::unique_ptr<VendorBlas> blas_;  ///< the vendor's GEMM; null: hetsim's own kernel
  std::string gemm_note_;             ///< which GEMM runs, and why (describe_kernels)
};

}  // namespace hetsim::exec::GPU_NS
