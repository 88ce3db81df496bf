// SPDX-License-Identifier: Apache-2.0
// CPU backend: token + position embedding and layer normalisation, forward and backward.
#include <cmath>

#include "cpu/cpu_backend.hpp"
#include "kernel_math.hpp"

namespace hetsim::exec::HETSIM_CPU_VARIANT {
namespace km = kernel_math;

void CpuBackend::embedding_forward(const int* tokens, int count, int seq, int hidden, const float* wte,
                                   const float* wpe, float* out) {
  for (int t = 0; t < count; ++t) {
    const float* e = wte + static_cast<std::size_t>(tokens[t]) * hidden;
    const float* p = wpe + static_cast<std::size_t>(t % seq) * hidden;
    float* o = out + static_cast<std::size_t>(t) * hidden;
    for (int j = 0; j < hidden; ++j) o[j] = e[j] + p[j];
  }
}

void CpuBackend::embedding_backward(const int* tokens, int count, int seq, int hidden, const float* dout,
                                    float* dwte, float* dwpe) {
  for (int t = 0; t < count; ++t) {
    const float* d = dout + static_cast<std::size_t>(t) * hidden;
    float* e = dwte + static_cast<std::size_t>(tokens[t]) * hidden;
    float* p = dwpe + static_cast<std::size_t>(t % seq) * hidden;
    for (int j = 0; j < hidden; ++j) {
      e[j] += d[j];
      p[j] += d[j];
    }
  }
}

void CpuBackend::layer_norm_forward(int rows, int cols, float epsilon, const float* x, const float* gamma,
                                    const float* beta, float* y, float* mean, float* rstd) {
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + static_cast<std::size_t>(r) * cols;
    float* yr = y + static_cast<std::size_t>(r) * cols;
    double s = 0;
    for (int j = 0; j < cols; ++j) s += xr[j];
    const float mu = static_cast<float>(s / cols);
    double v = 0;
    for (int j = 0; j < cols; ++j) {
      const double d = xr[j] - mu;
      v += d * d;
    }
    const float rs = static_cast<float>(1.0 / std::sqrt(v / cols + epsilon));
    for (int j = 0; j < cols; ++j) yr[j] = km::layer_norm_output(xr[j], mu, rs, gamma[j], beta[j]);
    mean[r] = mu;
    rstd[r] = rs;
  }
}

// The row sums of g = dy * gamma and g * xhat, then km::layer_norm_input_grad per element.
void CpuBackend::layer_norm_backward(int rows, int cols, const float* x, const float* gamma,
                                     const float* mean, const float* rstd, const float* dy, float* dx,
                                     float* dgamma, float* dbeta) {
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + static_cast<std::size_t>(r) * cols;
    const float* dyr = dy + static_cast<std::size_t>(r) * cols;
    float* dxr = dx + static_cast<std::size_t>(r) * cols;
    const float mu = mean[r];
    const float rs = rstd[r];
    double sum_g = 0, sum_gx = 0;
    for (int j = 0; j < cols; ++j) {
      const float xhat = km::layer_norm_xhat(xr[j], mu, rs);
      const float g = dyr[j] * gamma[j];
      sum_g += g;
      sum_gx += g * xhat;
      dgamma[j] += dyr[j] * xhat;
      dbeta[j] += dyr[j];
    }
    const float mean_g = static_cast<float>(sum_g / cols);
    const float mean_gx = static_cast<float>(sum_gx / cols);
    for (int j = 0; j < cols; ++j) {
      const float xhat = km::layer_norm_xhat(xr[j], mu, rs);
      dxr[j] += km::layer_norm_input_grad(dyr[j], gamma[j], xhat, rs, mean_g, mean_gx);
    }
  }
}

}  // namespace hetsim::exec::HETSIM_CPU_VARIANT
