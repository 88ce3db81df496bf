// SPDX-License-Identifier: Apache-2.0
// The element-wise formulas of the transformer kernels, written once for every backend: the CPU
// loops (exec/cpu/, g++) and the GPU kernels (exec/gpu/, nvcc and clang-HIP) call these functions,
// so a formula cannot drift between backends. Only the per-element arithmetic lives here; how a
// backend walks the elements and reduces rows (double sums on the CPU, block trees on the GPU)
// stays with the backend.
//
// The math calls use the C names (expf, sqrtf): host libm, CUDA and HIP all provide them for
// float under that one spelling. The exception is exp in the activations (exp_clamped): on the
// host it is plain arithmetic, so that the CPU's element loops vectorise (a libm call per element
// ran GeLU at 0.7 GB/s, a fifth of LayerNorm's rate, and made it a quarter of a CPU step).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "backend.hpp"

#if defined(__CUDACC__) || defined(__HIPCC__)
#define HETSIM_HOST_DEVICE __host__ __device__
#else
#define HETSIM_HOST_DEVICE
#endif

namespace hetsim::exec::kernel_math {

// ---- exp for the activations ------------------------------------------------------------------
/// exp(x) with x clamped to [-80, 80]: e^80 = 5.5e34 and 1 / (1 + e^80) = 1.8e-35 stay normal
/// floats (FLT_MIN 1.2e-38), so the activations' formulas below never see 0, inf or a subnormal
/// (x86 cores take a microcode assist on subnormal results; GCC computes both sides of the
/// clamp's select, and with the clamp at 88 GeLU ran 2x slower on this project's machine).
/// On the GPU the device's expf. On the host: x = n ln2 + r with |r| <= ln2/2, ln2 split in a
/// high part of 15 significant bits (n kLn2High is exact for |n| < 512) and the rest (Cody &
/// Waite 1980, "Software Manual for the Elementary Functions", ch. 6); exp(r) by its Taylor
/// polynomial of degree 7 (truncation below (ln2/2)^8/8! = 5e-9; within 1 ulp of glibc's expf
/// over the whole range, tests/exec/kernel_math_test.cpp), 2^n written into the exponent field.
/// n is rounded by adding and subtracting 1.5 * 2^23 (round to nearest in float). The clamps keep
/// NaN away from the float-to-int conversion (a NaN x compares false and becomes -80); callers
/// multiply by x, which carries a NaN through.
HETSIM_HOST_DEVICE inline float exp_clamped(float x) {
  x = x > -80.0f ? x : -80.0f;
  x = x < 80.0f ? x : 80.0f;
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return expf(x);
#else
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2High = 0.693145751953125f;        // 0x3f317200
  constexpr float kLn2Low = 1.428606765330187045e-06f;  // ln 2 - kLn2High
  constexpr float kRound = 12582912.0f;                 // 1.5 * 2^23
  const float n = (x * kLog2e + kRound) - kRound;
  const float r = (x - n * kLn2High) - n * kLn2Low;
  // Horner form of sum_{i=0..7} r^i / i!
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const std::int32_t bits = (static_cast<std::int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
#endif
}

// ---- GELU, tanh approximation (Hendrycks & Gimpel 2016, arXiv 1606.08415, section 2) ----------
//   gelu(x) ~= 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
// computed as x * sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3): 0.5 (1 + tanh(u)) = sigmoid(2u)
// is an identity, and it needs one exp.
inline constexpr float kSqrt2OverPi = 0.7978845608028654f;  // sqrt(2/pi)
inline constexpr float kGeluCubic = 0.044715f;

HETSIM_HOST_DEVICE inline float gelu(float x) {
  const float u = kSqrt2OverPi * (x + kGeluCubic * x * x * x);
  const float s = 1.0f / (1.0f + exp_clamped(-2.0f * u));
  return x * s;
}

/// d gelu / dx of the approximation above: with t = tanh(u) and u' = sqrt(2/pi) (1 + 3 * 0.044715 x^2),
/// 0.5 (1 + t) + 0.5 x (1 - t^2) u' = s + 2 x s (1 - s) u' with s = sigmoid(2u) = 1 / (1 + e),
/// e = exp(-2u), and 1 - s = e s (no cancellation where s is near 1). The backward is
/// dx = dy * gelu_grad(x).
HETSIM_HOST_DEVICE inline float gelu_grad(float x) {
  const float e = exp_clamped(-2.0f * kSqrt2OverPi * (x + kGeluCubic * x * x * x));
  const float s = 1.0f / (1.0f + e);
  const float du = kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * x * x);
  return s + 2.0f * x * s * (e * s) * du;
}

// ---- SwiGLU (Shazeer 2020, arXiv 2002.05202, eq. 5 without biases): silu(gate) * up ----------
HETSIM_HOST_DEVICE inline float sigmoid(float x) { return 1.0f / (1.0f + exp_clamped(-x)); }

/// SiLU (Swish with beta = 1): g * sigmoid(g).
HETSIM_HOST_DEVICE inline float silu(float g) { return g * sigmoid(g); }

HETSIM_HOST_DEVICE inline float swiglu(float gate, float up) { return silu(gate) * up; }

struct SwigluGrad {
  float dgate;
  float dup;
};

/// y = silu(g) * up: dup = dy * silu(g), dgate = dy * up * silu'(g) with
/// silu'(g) = sig(g) * (1 + g * (1 - sig(g))).
HETSIM_HOST_DEVICE inline SwigluGrad swiglu_grad(float gate, float up, float dy) {
  const float sig = sigmoid(gate);
  return {dy * up * sig * (1.0f + gate * (1.0f - sig)), dy * gate * sig};
}

// ---- Layer normalisation (Ba et al. 2016, arXiv 1607.06450) ----------------------------------
/// xhat = (x - mean) * rstd, rstd = 1 / sqrt(var + eps) from the row statistics.
HETSIM_HOST_DEVICE inline float layer_norm_xhat(float x, float mean, float rstd) { return (x - mean) * rstd; }

HETSIM_HOST_DEVICE inline float layer_norm_output(float x, float mean, float rstd, float gamma, float beta) {
  return layer_norm_xhat(x, mean, rstd) * gamma + beta;
}

/// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * gamma: the layer-norm
/// gradient differentiated through the per-row statistics; mean_g and mean_gx are the row means.
HETSIM_HOST_DEVICE inline float layer_norm_input_grad(float dy, float gamma, float xhat, float rstd, float mean_g,
                                                      float mean_gx) {
  return rstd * (dy * gamma - mean_g - xhat * mean_gx);
}

// ---- Softmax backward (attention probabilities) ----------------------------------------------
/// Row-wise P = softmax(scale * S): given dP, dS = P * (dP - row_dot) * scale with
/// row_dot = rowsum(P * dP) (the softmax Jacobian applied to dP, then the chain rule through scale).
HETSIM_HOST_DEVICE inline float softmax_input_grad(float p, float dp, float row_dot, float scale) {
  return p * (dp - row_dot) * scale;
}

// ---- Adam (Kingma & Ba 2015, arXiv 1412.6980, Algorithm 1) with AdamW's decoupled weight decay
// (Loshchilov & Hutter 2019, arXiv 1711.05101, Algorithm 2) -------------------------------------
/// 1 - beta^step, the bias correction of the moment estimates at `step` (1-based). Host only:
/// computed once per step and passed to adamw_update, so every element divides by the same value.
inline float adam_bias_correction(float beta, int step) { return 1.0f - std::pow(beta, static_cast<float>(step)); }

/// One element: m and v are the first and second moments, updated in place, then
///   param -= lr * (mhat / (sqrt(vhat) + eps) + weight_decay * param),  mhat = m / bc1, vhat = v / bc2.
/// The decay is applied to the parameter directly (decoupled) and scaled by the learning rate, as
/// PyTorch's AdamW does (the paper's Algorithm 2 scales it by the schedule multiplier only).
/// grad is taken by reference so that it is loaded where the formula reads it, as in the former
/// inline kernels: by value, nvcc fused the other product of m = b1 m + (1 - b1) g into its FMA,
/// which changed the GPU results in the last bit.
HETSIM_HOST_DEVICE inline void adamw_update(const AdamConfig& c, float bias_correction1, float bias_correction2,
                                            const float& grad, float& param, float& m, float& v) {
  m = c.beta1 * m + (1.0f - c.beta1) * grad;
  v = c.beta2 * v + (1.0f - c.beta2) * grad * grad;
  const float mhat = m / bias_correction1;
  const float vhat = v / bias_correction2;
  param -= c.learning_rate * (mhat / (sqrtf(vhat) + c.epsilon) + c.weight_decay * param);
}

}  // namespace hetsim::exec::kernel_math
