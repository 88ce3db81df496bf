// SPDX-License-Identifier: Apache-2.0
// CPU backend: GeLU, SwiGLU, softmax cross-entropy and Adam (element-wise kernels). The
// per-element formulas (and their citations) are in exec/kernel_math.hpp, shared with the GPU.
#include <cmath>
#include <limits>

#include "cpu/cpu_backend.hpp"
#include "kernel_math.hpp"

namespace hetsim::exec::HETSIM_CPU_VARIANT {
namespace km = kernel_math;

void CpuBackend::gelu_forward(std::size_t count, const float* x, float* y) {
  for (std::size_t i = 0; i < count; ++i) y[i] = km::gelu(x[i]);
}

void CpuBackend::gelu_backward(std::size_t count, const float* x, const float* dy, float* dx) {
  for (std::size_t i = 0; i < count; ++i) dx[i] = dy[i] * km::gelu_grad(x[i]);
}

void CpuBackend::swiglu_forward(std::size_t count, const float* gate, const float* up, float* y) {
  for (std::size_t i = 0; i < count; ++i) y[i] = km::swiglu(gate[i], up[i]);
}

void CpuBackend::swiglu_backward(std::size_t count, const float* gate, const float* up, const float* dy,
                                 float* dgate, float* dup) {
  for (std::size_t i = 0; i < count; ++i) {
    const km::SwigluGrad g = km::swiglu_grad(gate[i], up[i], dy[i]);
    dgate[i] = g.dgate;
    dup[i] = g.dup;
  }
}

void CpuBackend::cross_entropy_forward(int rows, int vocab, const float* logits, const int* targets,
                                       float* probs, float* losses) {
  for (int r = 0; r < rows; ++r) {
    const float* z = logits + static_cast<std::size_t>(r) * vocab;
    float* p = probs + static_cast<std::size_t>(r) * vocab;
    float mx = -std::numeric_limits<float>::infinity();
    for (int j = 0; j < vocab; ++j) mx = z[j] > mx ? z[j] : mx;
    double total = 0;
    for (int j = 0; j < vocab; ++j) {
      p[j] = std::exp(z[j] - mx);
      total += p[j];
    }
    const float inv = static_cast<float>(1.0 / total);
    for (int j = 0; j < vocab; ++j) p[j] *= inv;
    // log-sum-exp form keeps the loss finite when the target's probability underflows.
    losses[r] = static_cast<float>(std::log(total)) + mx - z[targets[r]];
  }
}

void CpuBackend::cross_entropy_backward(int rows, int vocab, const float* probs, const int* targets,
                                        float scale, float* dlogits) {
  for (int r = 0; r < rows; ++r) {
    const float* p = probs + static_cast<std::size_t>(r) * vocab;
    float* d = dlogits + static_cast<std::size_t>(r) * vocab;
    for (int j = 0; j < vocab; ++j) d[j] = scale * p[j];
    d[targets[r]] -= scale;
  }
}

void CpuBackend::adam_step(std::size_t count, const AdamConfig& c, int step, float* param, const float* grad,
                           float* m, float* v) {
  const float bc1 = km::adam_bias_correction(c.beta1, step);
  const float bc2 = km::adam_bias_correction(c.beta2, step);
  for (std::size_t i = 0; i < count; ++i) km::adamw_update(c, bc1, bc2, grad[i], param[i], m[i], v[i]);
}

}  // namespace hetsim::exec::HETSIM_CPU_VARIANT
