// SPDX-License-Identifier: Apache-2.0
// GPU backend: the transformer kernels. The per-element formulas (and their citations) are in
// exec/kernel_math.hpp, shared with the CPU backend in exec/cpu/, whose kernels are the reference
// the gpu tests compare against.
#include <cmath>

#include "gpu/gpu_backend_impl.hpp"
#include "kernel_math.hpp"

namespace hetsim::exec::GPU_NS {
namespace {
namespace km = kernel_math;

constexpr int kThreads = 256;

/// Blocks of a grid-stride launch over n elements: one per kThreads elements, at most 4096.
/// assumption: 4096 blocks x 256 threads = 1M threads are several waves on the largest parts
/// (H100 SXM: 132 SMs x 2048 resident threads, NVIDIA H100 whitepaper 2022), so larger grids add
/// only launch work; the kernels loop over the rest.
unsigned grid_for(std::size_t n) {
  const std::size_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b == 0 ? 1 : (b < 4096 ? b : 4096));
}

#define HETSIM_GRID_STRIDE(i, n)                                                                   \
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)

// Block-wide reductions through shared memory (blockDim.x == kThreads).
__device__ float block_sum(float v, float* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s /= 2) {
    if (static_cast<int>(threadIdx.x) < s) shared[threadIdx.x] += shared[threadIdx.x + s];
    __syncthreads();
  }
  const float r = shared[0];
  __syncthreads();
  return r;
}

__device__ float block_max(float v, float* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s /= 2) {
    if (static_cast<int>(threadIdx.x) < s) shared[threadIdx.x] = fmaxf(shared[threadIdx.x], shared[threadIdx.x + s]);
    __syncthreads();
  }
  const float r = shared[0];
  __syncthreads();
  return r;
}

__global__ void embedding_forward_kernel(const int* tokens, int count, int seq, int hidden, const float* wte,
                                         const float* wpe, float* out) {
  HETSIM_GRID_STRIDE(i, static_cast<std::size_t>(count) * hidden) {
    const int t = static_cast<int>(i / hidden), j = static_cast<int>(i % hidden);
    out[i] = wte[static_cast<std::size_t>(tokens[t]) * hidden + j] + wpe[static_cast<std::size_t>(t % seq) * hidden + j];
  }
}

__global__ void embedding_backward_kernel(const int* tokens, int count, int seq, int hidden, const float* dout,
                                          float* dwte, float* dwpe) {
  HETSIM_GRID_STRIDE(i, static_cast<std::size_t>(count) * hidden) {
    const int t = static_cast<int>(i / hidden), j = static_cast<int>(i % hidden);
    atomicAdd(&dwte[static_cast<std::size_t>(tokens[t]) * hidden + j], dout[i]);
    atomicAdd(&dwpe[static_cast<std::size_t>(t % seq) * hidden + j], dout[i]);
  }
}

__global__ void layer_norm_forward_kernel(int cols, float eps, const float* x, const float* gamma, const float* beta,
                                          float* y, float* mean, float* rstd) {
  __shared__ float shared[kThreads];
  const std::size_t r = blockIdx.x;
  const float* xr = x + r * cols;
  float s = 0;
  for (int j = threadIdx.x; j < cols; j += kThreads) s += xr[j];
  const float mu = block_sum(s, shared) / cols;
  float v = 0;
  for (int j = threadIdx.x; j < cols; j += kThreads) v += (xr[j] - mu) * (xr[j] - mu);
  const float rs = rsqrtf(block_sum(v, shared) / cols + eps);
  for (int j = threadIdx.x; j < cols; j += kThreads) {
    y[r * cols + j] = km::layer_norm_output(xr[j], mu, rs, gamma[j], beta[j]);
  }
  if (threadIdx.x == 0) {
    mean[r] = mu;
    rstd[r] = rs;
  }
}

__global__ void layer_norm_backward_kernel(int cols, const float* x, const float* gamma, const float* mean,
                                           const float* rstd, const float* dy, float* dx, float* dgamma, float* dbeta) {
  __shared__ float shared[kThreads];
  const std::size_t r = blockIdx.x;
  const float mu = mean[r], rs = rstd[r];
  float sg = 0, sgx = 0;
  for (int j = threadIdx.x; j < cols; j += kThreads) {
    const float xhat = km::layer_norm_xhat(x[r * cols + j], mu, rs);
    const float g = dy[r * cols + j] * gamma[j];
    sg += g;
    sgx += g * xhat;
    atomicAdd(&dgamma[j], dy[r * cols + j] * xhat);
    atomicAdd(&dbeta[j], dy[r * cols + j]);
  }
  const float mean_g = block_sum(sg, shared) / cols;
  const float mean_gx = block_sum(sgx, shared) / cols;
  for (int j = threadIdx.x; j < cols; j += kThreads) {
    const float xhat = km::layer_norm_xhat(x[r * cols + j], mu, rs);
    dx[r * cols + j] += km::layer_norm_input_grad(dy[r * cols + j], gamma[j], xhat, rs, mean_g, mean_gx);
  }
}

// One block per row of probs [rows = batch*heads*seq, seq]: scale, causal mask, softmax in place.
__global__ void causal_softmax_kernel(int seq, float scale, float* p) {
  __shared__ float shared[kThreads];
  const std::size_t row = blockIdx.x;
  const int i = static_cast<int>(row % seq);
  float* pr = p + row * seq;
  float mx = -INFINITY;
  for (int j = threadIdx.x; j <= i; j += kThreads) mx = fmaxf(mx, pr[j] * scale);
  mx = block_max(mx, shared);
  float s = 0;
  for (int j = threadIdx.x; j <= i; j += kThreads) {
    pr[j] = expf(pr[j] * scale - mx);
    s += pr[j];
  }
  const float inv = 1.0f / block_sum(s, shared);
  for (int j = threadIdx.x; j < seq; j += kThreads) pr[j] = j <= i ? pr[j] * inv : 0.0f;
}

// dS = km::softmax_input_grad(P, dP, rowsum(P * dP), scale), in place over dP.
__global__ void softmax_backward_kernel(int seq, float scale, const float* p, float* dp) {
  __shared__ float shared[kThreads];
  const std::size_t row = blockIdx.x;
  const int i = static_cast<int>(row % seq);
  const float* pr = p + row * seq;
  float* d = dp + row * seq;
  float dot = 0;
  for (int j = threadIdx.x; j <= i; j += kThreads) dot += pr[j] * d[j];
  dot = block_sum(dot, shared);
  for (int j = threadIdx.x; j < seq; j += kThreads) {
    d[j] = j <= i ? km::softmax_input_grad(pr[j], d[j], dot, scale) : 0.0f;
  }
}

__global__ void gelu_forward_kernel(std::size_t n, const float* x, float* y) {
  HETSIM_GRID_STRIDE(i, n) { y[i] = km::gelu(x[i]); }
}

__global__ void gelu_backward_kernel(std::size_t n, const float* x, const float* dy, float* dx) {
  HETSIM_GRID_STRIDE(i, n) { dx[i] = dy[i] * km::gelu_grad(x[i]); }
}

__global__ void swiglu_forward_kernel(std::size_t n, const float* gate, const float* up, float* y) {
  HETSIM_GRID_STRIDE(i, n) { y[i] = km::swiglu(gate[i], up[i]); }
}

__global__ void swiglu_backward_kernel(std::size_t n, const float* gate, const float* up, const float* dy, float* dgate,
                                       float* dup) {
  HETSIM_GRID_STRIDE(i, n) {
    const km::SwigluGrad g = km::swiglu_grad(gate[i], up[i], dy[i]);
    dgate[i] = g.dgate;
    dup[i] = g.dup;
  }
}

__global__ void cross_entropy_forward_kernel(int vocab, const float* logits, const int* targets, float* probs,
                                             float* losses) {
  __shared__ float shared[kThreads];
  const std::size_t r = blockIdx.x;
  const float* z = logits + r * vocab;
  float* p = probs + r * vocab;
  float mx = -INFINITY;
  for (int j = threadIdx.x; j < vocab; j += kThreads) mx = fmaxf(mx, z[j]);
  mx = block_max(mx, shared);
  float s = 0;
  for (int j = threadIdx.x; j < vocab; j += kThreads) {
    p[j] = expf(z[j] - mx);
    s += p[j];
  }
  const float total = block_sum(s, shared);
  for (int j = threadIdx.x; j < vocab; j += kThreads) p[j] /= total;
  if (threadIdx.x == 0) losses[r] = logf(total) + mx - z[targets[r]];
}

__global__ void cross_entropy_backward_kernel(int rows, int vocab, const float* probs, const int* targets, float scale,
                                              float* dlogits) {
  HETSIM_GRID_STRIDE(i, static_cast<std::size_t>(rows) * vocab) {
    const int r = static_cast<int>(i / vocab), j = static_cast<int>(i % vocab);
    dlogits[i] = scale * (probs[i] - (j == targets[r] ? 1.0f : 0.0f));
  }
}

__global__ void adam_kernel(std::size_t n, AdamConfig c, float bc1, float bc2, float* param, const float* grad,
                            float* m, float* v) {
  HETSIM_GRID_STRIDE(i, n) { km::adamw_update(c, bc1, bc2, grad[i], param[i], m[i], v[i]); }
}

}  // namespace

void GpuBackend::embedding_forward(const int* tokens, int count, int seq, int hidden, const float* wte,
                                   const float* wpe, float* out) {
  embedding_forward_kernel<<<grid_for(static_cast<std::size_t>(count) * hidden), kThreads>>>(tokens, count, seq, hidden,
                                                                                            wte, wpe, out);
  HETSIM_GPU_CHECK_LAUNCH();
}

void GpuBackend::embedding_backward(const int* tokens, int count, int seq, int hidden, const float* dout, float* dwte,
                                    float* dwpe) {
  embedding_backward_kernel<<<grid_for(static_cast<std::size_t>(count) * hidden), kThreads>>>(tokens, count, seq,
                                                                                             hidden, dout, dwte, dwpe);
  HETSIM_GPU_CHECK_LAUNCH();
}

void GpuBackend::layer_norm_forward(int rows, int cols, float epsilon, const float* x, const float* gamma,
                                    const float* beta, float* y, float* mean, float* rstd) {
  if (rows == 0) return;
  layer_norm_forward_kernel<<<rows, kThreads>>>(cols, epsilon, x, gamma, beta, y, mean, rstd);
  HETSIM_GPU_CHECK_LAUNCH();
}

void GpuBackend::layer_norm_backward(int rows, int cols, const float* x, const float* gamma, const float* mean,
                                     const float* rstd, const float* dy, float* dx, float* dgamma, float* dbeta) {
  if (rows == 0) return;
  layer_norm_backward_kernel<<<rows, kThreads>>>(cols, x, gamma, mean, rstd, dy, dx, dgamma, dbeta);
  HETSIM_GPU_CHECK_LAUNCH();
}

// Per (batch, head): S = Q K^T (batched GEMM), causal softmax with the 1/sqrt(d) scale, O = P V.
void GpuBackend::attention_forward(const AttentionShape& s, const float* q, const float* k, const float* v,
                                   float* probs, float* out) {
  const int q_ld = s.heads * s.head_dim, kv_ld = s.kv_heads * s.head_dim, group = s.heads / s.kv_heads;
  const long long ss = static_cast<long long>(s.seq) * s.seq;
  const BatchOffsets qo{static_cast<long long>(s.seq) * q_ld, s.head_dim, s.heads, 1, 0, 1};
  const BatchOffsets ko{static_cast<long long>(s.seq) * kv_ld, s.head_dim, s.heads, 1, 0, group};
  const BatchOffsets po{s.heads * ss, ss, s.heads, 1, 0, 1};
  const int batch = s.batch * s.heads;
  batched_gemm(Trans::kNo, Trans::kYes, s.seq, s.seq, s.head_dim, 1.0f, q, q_ld, qo, k, kv_ld, ko, 0.0f, probs, s.seq,
               po, batch);
  causal_softmax_kernel<<<static_cast<unsigned>(batch * s.seq), kThreads>>>(
      s.seq, 1.0f / std::sqrt(static_cast<float>(s.head_dim)), probs);
  HETSIM_GPU_CHECK_LAUNCH();
  batched_gemm(Trans::kNo, Trans::kNo, s.seq, s.head_dim, s.seq, 1.0f, probs, s.seq, po, v, kv_ld, ko, 0.0f, out, q_ld,
               qo, batch);
}

void GpuBackend::attention_backward(const AttentionShape& s, const float* q, const float* k, const float* v,
                                    const float* probs, const float* dout, float* dq, float* dk, float* dv) {
  const int q_ld = s.heads * s.head_dim, kv_ld = s.kv_heads * s.head_dim, group = s.heads / s.kv_heads;
  const long long ss = static_cast<long long>(s.seq) * s.seq;
  const float scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim));
  const BatchOffsets qo{static_cast<long long>(s.seq) * q_ld, s.head_dim, s.heads, 1, 0, 1};
  const BatchOffsets ko{static_cast<long long>(s.seq) * kv_ld, s.head_dim, s.heads, 1, 0, group};
  const BatchOffsets po{s.heads * ss, ss, s.heads, 1, 0, 1};
  const int batch = s.batch * s.heads;
  float* ds = static_cast<float*>(allocate_bytes(sizeof(float) * static_cast<std::size_t>(batch) * ss));
  // dP = dO V^T, then dS in place; dQ = dS K.
  batched_gemm(Trans::kNo, Trans::kYes, s.seq, s.seq, s.head_dim, 1.0f, dout, q_ld, qo, v, kv_ld, ko, 0.0f, ds, s.seq,
               po, batch);
  softmax_backward_kernel<<<static_cast<unsigned>(batch * s.seq), kThreads>>>(s.seq, scale, probs, ds);
  HETSIM_GPU_CHECK_LAUNCH();
  batched_gemm(Trans::kNo, Trans::kNo, s.seq, s.head_dim, s.seq, 1.0f, ds, s.seq, po, k, kv_ld, ko, 0.0f, dq, q_ld, qo,
               batch);
  // dK = dS^T Q and dV = P^T dO summed over the query heads of each key/value head: one batched
  // GEMM per group member, so that no two blocks of a launch write the same dK/dV block.
  const BatchOffsets kvo{static_cast<long long>(s.seq) * kv_ld, s.head_dim, s.kv_heads, 1, 0, 1};
  for (int g = 0; g < group; ++g) {
    const BatchOffsets qg{static_cast<long long>(s.seq) * q_ld, s.head_dim, s.kv_heads, group, g, 1};
    const BatchOffsets pg{s.heads * ss, ss, s.kv_heads, group, g, 1};
    const float beta = g == 0 ? 0.0f : 1.0f;
    batched_gemm(Trans::kYes, Trans::kNo, s.seq, s.head_dim, s.seq, 1.0f, ds, s.seq, pg, q, q_ld, qg, beta, dk, kv_ld,
                 kvo, s.batch * s.kv_heads);
    batched_gemm(Trans::kYes, Trans::kNo, s.seq, s.head_dim, s.seq, 1.0f, probs, s.seq, pg, dout, q_ld, qg, beta, dv,
                 kv_ld, kvo, s.batch * s.kv_heads);
  }
  release(ds);
}

void GpuBackend::gelu_forward(std::size_t n, const float* x, float* y) {
  gelu_forward_kernel<<<grid_for(n), kThreads>>>(n, x, y);
  HETSIM_GPU_CHECK_LAUNCH();
}

void GpuBackend::gelu_backward(std::size_t n, const float* x, const float* dy, float* dx) {
  gelu_backward_kernel<<<grid_for(n), kThreads>>>(n, x, dy, dx);
  HETSIM_GPU_CHECK_LAUNCH();
}

void GpuBackend::swiglu_forward(std::size_t n, const float* gate, const float* up, float* y) {
  swiglu_forward_kernel<<<grid_for(n), kThreads>>>(n, gate, up, y);
  HETSIM_GPU_CHECK_LAUNCH();
}

void GpuBackend::swiglu_backward(std::size_t n, const float* gate, const float* up, const float* dy, float* dgate,
                                 float* dup) {
  swiglu_backward_kernel<<<grid_for(n), kThreads>>>(n, gate, up, dy, dgate, dup);
  HETSIM_GPU_CHECK_LAUNCH();
}

void GpuBackend::cross_entropy_forward(int rows, int vocab, const float* logits, const int* targets, float* probs,
                                       float* losses) {
  if (rows == 0) return;
  cross_entropy_forward_kernel<<<rows, kThreads>>>(vocab, logits, targets, probs, losses);
  HETSIM_GPU_CHECK_LAUNCH();
}

void GpuBackend::cross_entropy_backward(int rows, int vocab, const float* probs, const int* targets, float scale,
                                        float* dlogits) {
  cross_entropy_backward_kernel<<<grid_for(static_cast<std::size_t>(rows) * vocab), kThreads>>>(rows, vocab, probs,
                                                                                               targets, scale, dlogits);
  HETSIM_GPU_CHECK_LAUNCH();
}

void GpuBackend::adam_step(std::size_t n, const AdamConfig& c, int step, float* param, const float* grad, float* m,
                           float* v) {
  const float bc1 = km::adam_bias_correction(c.beta1, step);
  const float bc2 = km::adam_bias_correction(c.beta2, step);
  adam_kernel<<<grid_for(n), kThreads>>>(n, c, bc1, bc2, param, grad, m, v);
  HETSIM_GPU_CHECK_LAUNCH();
}

}  // namespace hetsim::exec::GPU_NS
