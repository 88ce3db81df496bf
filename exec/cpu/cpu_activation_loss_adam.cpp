// SPDX-License-Identifier: Apache-2.0
// CPU backend: GeLU, SwiGLU, softmax cross-entropy and Adam (element-wise kernels).
#include <cmath>
#include <limits>

#include "cpu/cpu_backend.hpp"

namespace hetsim::exec::HETSIM_CPU_VARIANT {
namespace {
constexpr float kSqrt2OverPi = 0.7978845608028654f;  // sqrt(2/pi), Hendrycks & Gimpel 2016
constexpr float kGeluCubic = 0.044715f;              // same paper, section 2
}  // namespace

void CpuBackend::gelu_forward(std::size_t count, const float* x, float* y) {
  for (std::size_t i = 0; i < count; ++i) {
    const float u = kSqrt2OverPi * (x[i] + kGeluCubic * x[i] * x[i] * x[i]);
    y[i] = 0.5f * x[i] * (1.0f + std::tanh(u));
  }
}

void CpuBackend::gelu_backward(std::size_t count, const float* x, const float* dy, float* dx) {
  for (std::size_t i = 0; i < count; ++i) {
    const float xi = x[i];
    const float u = kSqrt2OverPi * (xi + kGeluCubic * xi * xi * xi);
    const float t = std::tanh(u);
    const float du = kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * xi * xi);
    dx[i] = dy[i] * (0.5f * (1.0f + t) + 0.5f * xi * (1.0f - t * t) * du);
  }
}

void CpuBackend::swiglu_forward(std::size_t count, const float* gate, const float* up, float* y) {
  for (std::size_t i = 0; i < count; ++i) {
    const float sig = 1.0f / (1.0f + std::exp(-gate[i]));
    y[i] = gate[i] * sig * up[i];
  }
}

// silu'(g) = sig(g) * (1 + g * (1 - sig(g))).
void CpuBackend::swiglu_backward(std::size_t count, const float* gate, const float* up, const float* dy,
                                 float* dgate, float* dup) {
  for (std::size_t i = 0; i < count; ++i) {
    const float g = gate[i];
    const float sig = 1.0f / (1.0f + std::exp(-g));
    dup[i] = dy[i] * g * sig;
    dgate[i] = dy[i] * up[i] * sig * (1.0f + g * (1.0f - sig));
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
  const float bc1 = 1.0f - std::pow(c.beta1, static_cast<float>(step));
  const float bc2 = 1.0f - std::pow(c.beta2, static_cast<float>(step));
  for (std::size_t i = 0; i < count; ++i) {
    m[i] = c.beta1 * m[i] + (1.0f - c.beta1) * grad[i];
    v[i] = c.beta2 * v[i] + (1.0f - c.beta2) * grad[i] * grad[i];
    const float mhat = m[i] / bc1;
    const float vhat = v[i] / bc2;
    param[i] -= c.learning_rate * (mhat / (std::sqrt(vhat) + c.epsilon) + c.weight_decay * param[i]);
  }
}

}  // namespace hetsim::exec::HETSIM_CPU_VARIANT
