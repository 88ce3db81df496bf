// SPDX-License-Identifier: Apache-2.0
// The Backend interface: device memory, GEMM and the transformer kernels (forward and
// backward) of one device. CPU variants implement it today; CUDA and HIP implement the same
// interface, so every pointer below is a DEVICE pointer that the caller never dereferences.
#pragma once
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace hetsim::exec {

/// Thrown by a backend for an unsupported request or a failed device call.
class BackendError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Trans { kNo, kYes };

/// Causal self-attention of one micro-batch. q: [batch*seq, heads*head_dim],
/// k and v: [batch*seq, kv_heads*head_dim] (grouped-query attention when kv_heads < heads),
/// probs: [batch, heads, seq, seq], out: [batch*seq, heads*head_dim]; all row-major.
struct AttentionShape {
  int batch = 1;
  int seq = 1;
  int heads = 1;      ///< heads held by this device (TP shard)
  int kv_heads = 1;   ///< key/value heads held by this device
  int head_dim = 1;
  std::size_t probs_count() const { return static_cast<std::size_t>(batch) * heads * seq * seq; }
};

/// Adam with bias correction (Kingma & Ba, ICLR 2015, Algorithm 1); weight_decay is the
/// decoupled decay of AdamW (Loshchilov & Hutter, ICLR 2019).
struct AdamConfig {
  float learning_rate = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-8f;
  float weight_decay = 0.0f;
};

/// One device. Conventions: row-major matrices; parameter gradients ACCUMULATE (+=) so that
/// micro-batches add up; activation outputs are overwritten unless stated otherwise.
class Backend {
 public:
  virtual ~Backend() = default;
  Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  /// True when device memory is host memory (communicators then work on it directly).
  virtual bool is_host_memory() const = 0;
  /// Device type name as the cluster catalog spells it (e.g. "cpu-avx2", "h100-sxm5-80gb").
  virtual const std::string& get_device_type() const = 0;

  // ---- memory -------------------------------------------------------------------------
  virtual void* allocate_bytes(std::size_t size_bytes) = 0;
  virtual void release(void* device_ptr) = 0;
  virtual void upload_bytes(void* device_dst, const void* host_src, std::size_t size_bytes) = 0;
  virtual void download_bytes(void* host_dst, const void* device_src, std::size_t size_bytes) = 0;
  virtual void copy_bytes(void* device_dst, const void* device_src, std::size_t size_bytes) = 0;
  /// Waits until every kernel queued on this device has finished (timers call it).
  virtual void synchronize() = 0;
  /// High-water mark of bytes allocated through this backend.
  virtual double get_memory_peak_bytes() const = 0;
  /// Bytes allocated now.
  virtual double get_memory_used_bytes() const = 0;
  /// What runs this backend's kernels where the user should know it (a GPU backend: which GEMM
  /// library and why); empty when there is nothing to say.
  virtual std::string describe_kernels() const { return {}; }

  // ---- dense algebra --------------------------------------------------------------------
  /// C[m,n] = alpha * op(A) * op(B) + beta * C, op(A) is [m,k], op(B) is [k,n] (BLAS sgemm, row-major).
  virtual void gemm(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const float* a,
                    int lda, const float* b, int ldb, float beta, float* c, int ldc) = 0;
  virtual void fill(float* x, std::size_t count, float value) = 0;
  /// x *= alpha
  virtual void scale(std::size_t count, float alpha, float* x) = 0;
  /// y += alpha * x
  virtual void axpy(std::size_t count, float alpha, const float* x, float* y) = 0;
  /// Sum of all elements (accumulated in double), returned to the host.
  virtual double sum(const float* x, std::size_t count) = 0;

  // ---- transformer kernels -------------------------------------------------------------
  /// out[t,:] = wte[tokens[t],:] + wpe[t mod seq,:] for count = batch*seq tokens.
  virtual void embedding_forward(const int* tokens, int count, int seq, int hidden, const float* wte,
                                 const float* wpe, float* out) = 0;
  /// dwte[tokens[t],:] += dout[t,:]; dwpe[t mod seq,:] += dout[t,:].
  virtual void embedding_backward(const int* tokens, int count, int seq, int hidden, const float* dout,
                                  float* dwte, float* dwpe) = 0;
  /// y = (x - mean) * rstd * gamma + beta per row (Ba et al. 2016, eq. 4); saves mean and rstd.
  virtual void layer_norm_forward(int rows, int cols, float epsilon, const float* x, const float* gamma,
                                  const float* beta, float* y, float* mean, float* rstd) = 0;
  /// dx += d/dx; dgamma += ...; dbeta += ...
  virtual void layer_norm_backward(int rows, int cols, const float* x, const float* gamma,
                                   const float* mean, const float* rstd, const float* dy, float* dx,
                                   float* dgamma, float* dbeta) = 0;
  /// Causal softmax(q k^T / sqrt(head_dim)) v (Vaswani et al. 2017, eq. 1); saves probs.
  virtual void attention_forward(const AttentionShape& shape, const float* q, const float* k,
                                 const float* v, float* probs, float* out) = 0;
  /// Overwrites dq, dk, dv.
  virtual void attention_backward(const AttentionShape& shape, const float* q, const float* k,
                                  const float* v, const float* probs, const float* dout, float* dq,
                                  float* dk, float* dv) = 0;
  /// GeLU, tanh form (Hendrycks & Gimpel 2016, section 2): y = 0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3)))
  /// (computed as x sigmoid(2u) with one exp: kernel_math::gelu).
  virtual void gelu_forward(std::size_t count, const float* x, float* y) = 0;
  /// dx = dy * gelu'(x) (overwrites dx).
  virtual void gelu_backward(std::size_t count, const float* x, const float* dy, float* dx) = 0;
  /// SwiGLU (Shazeer 2020, eq. 6): y = silu(gate) * up.
  virtual void swiglu_forward(std::size_t count, const float* gate, const float* up, float* y) = 0;
  /// Overwrites dgate and dup.
  virtual void swiglu_backward(std::size_t count, const float* gate, const float* up, const float* dy,
                               float* dgate, float* dup) = 0;
  /// Row-wise softmax of logits[rows, vocab] into probs and losses[r] = -log probs[r, targets[r]].
  virtual void cross_entropy_forward(int rows, int vocab, const float* logits, const int* targets,
                                     float* probs, float* losses) = 0;
  /// dlogits = scale * (probs - onehot(targets)) (overwrites).
  virtual void cross_entropy_backward(int rows, int vocab, const float* probs, const int* targets,
                                      float scale, float* dlogits) = 0;
  /// One Adam step (step counts from 1) on count parameters with moments m and v.
  virtual void adam_step(std::size_t count, const AdamConfig& config, int step, float* param,
                         const float* grad, float* m, float* v) = 0;

  // ---- typed helpers -------------------------------------------------------------------
  template <class T>
  void upload(T* device_dst, const T* host_src, std::size_t count) {
    upload_bytes(device_dst, host_src, count * sizeof(T));
  }
  template <class T>
  void download(T* host_dst, const T* device_src, std::size_t count) {
    download_bytes(host_dst, device_src, count * sizeof(T));
  }
  template <class T>
  std::vector<T> to_host(const T* device_src, std::size_t count) {
    std::vector<T> out(count);
    download(out.data(), device_src, count);
    return out;
  }
};

/// An owned device array of T (RAII over Backend::allocate_bytes/release).
template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(Backend& backend, std::size_t count)
      : backend_(&backend), count_(count),
        data_(count ? static_cast<T*>(backend.allocate_bytes(count * sizeof(T))) : nullptr) {}
  DeviceArray(DeviceArray&& o) noexcept : backend_(o.backend_), count_(o.count_), data_(o.data_) {
    o.data_ = nullptr;
    o.count_ = 0;
  }
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    if (this != &o) {
      reset();
      backend_ = o.backend_;
      count_ = o.count_;
      data_ = o.data_;
      o.data_ = nullptr;
      o.count_ = 0;
    }
    return *this;
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { reset(); }

  void reset() {
    if (data_) backend_->release(data_);
    data_ = nullptr;
    count_ = 0;
  }
  T* get() const { return data_; }
  std::size_t size() const { return count_; }

 private:
  Backend* backend_ = nullptr;
  std::size_t count_ = 0;
  T* data_ = nullptr;
};

/// Device type names of the CPU backend variants built into this binary.
std::vector<std::string> cpu_device_types();
/// A backend for a device type name: a CPU variant (cpu_device_types()), or a GPU type when a
/// CUDA/HIP backend is built and a device is present. Throws BackendError otherwise.
std::unique_ptr<Backend> make_backend(const std::string& device_type, int local_device = 0);

}  // namespace hetsim::exec
