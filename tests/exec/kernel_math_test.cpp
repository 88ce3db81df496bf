// SPDX-License-Identifier: Apache-2.0
// The activations' exp (exec/kernel_math.hpp exp_clamped: plain arithmetic on the host so that
// the CPU loops vectorise) against libm, and GeLU / SiLU written with it against their textbook
// forms (tanh for GeLU, Hendrycks & Gimpel 2016; 1 / (1 + exp(-x)) for the sigmoid).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kernel_math.hpp"

namespace hetsim::exec {
namespace {

namespace km = kernel_math;

/// Distance from a to b in units in the last place of b (a positive, normal float).
double ulps(float a, float b) {
  const float ulp = std::nextafter(b, std::numeric_limits<float>::infinity()) - b;
  return std::fabs(static_cast<double>(a) - b) / ulp;
}

TEST(KernelMath, ExpClampedIsWithinAnUlpOfLibmOverItsRange) {
  double worst = 0;
  for (float x = -80.0f; x <= 80.0f; x += 0.0137f) worst = std::max(worst, ulps(km::exp_clamped(x), std::exp(x)));
  for (float x : {-1e-7f, 0.0f, 1e-7f, 0.5f * 0.693147f, -0.5f * 0.693147f, 1.0f, -1.0f})
    worst = std::max(worst, ulps(km::exp_clamped(x), std::exp(x)));
  EXPECT_LE(worst, 1.5);
  EXPECT_EQ(km::exp_clamped(0.0f), 1.0f);
}

TEST(KernelMath, ExpClampedStaysFiniteAndPositiveOutsideItsRange) {
  EXPECT_EQ(km::exp_clamped(1000.0f), km::exp_clamped(80.0f));
  EXPECT_EQ(km::exp_clamped(-1000.0f), km::exp_clamped(-80.0f));
  EXPECT_GE(1.0f / (1.0f + km::exp_clamped(1000.0f)), std::numeric_limits<float>::min());  // not subnormal
  EXPECT_TRUE(std::isfinite(km::exp_clamped(std::numeric_limits<float>::infinity())));
  EXPECT_GT(km::exp_clamped(-std::numeric_limits<float>::infinity()), 0.0f);
  // NaN is clamped away from the float-to-int conversion; the activations carry it through x.
  EXPECT_TRUE(std::isfinite(km::exp_clamped(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(std::isnan(km::gelu(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(std::isnan(km::silu(std::numeric_limits<float>::quiet_NaN())));
}

TEST(KernelMath, GeluEqualsTheTanhFormAndItsDerivative) {
  for (float x = -12.0f; x <= 12.0f; x += 0.01f) {
    const double u = 0.7978845608028654 * (x + 0.044715 * x * x * x);
    const double t = std::tanh(u);
    const double gelu = 0.5 * x * (1 + t);
    const double grad = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * 0.7978845608028654 * (1 + 3 * 0.044715 * x * x);
    EXPECT_NEAR(km::gelu(x), gelu, 2e-6 * (1 + std::fabs(gelu))) << x;
    EXPECT_NEAR(km::gelu_grad(x), grad, 2e-6 * (1 + std::fabs(grad))) << x;
  }
  EXPECT_NEAR(km::gelu(1.0f), 0.8411920, 1e-6);  // Hendrycks & Gimpel's tanh form at 1
  EXPECT_NEAR(km::gelu(-100.0f), 0.0f, 1e-25);  // x / (1 + e^80): the clamp keeps it off 0 by 2e-33
  EXPECT_EQ(km::gelu(100.0f), 100.0f);
  EXPECT_EQ(km::gelu_grad(100.0f), 1.0f);
  EXPECT_NEAR(km::gelu_grad(-100.0f), 0.0f, 1e-25);
}

TEST(KernelMath, SigmoidMatchesLibmForm) {
  for (float x = -30.0f; x <= 30.0f; x += 0.01f) {
    const double sig = 1.0 / (1.0 + std::exp(-static_cast<double>(x)));
    EXPECT_NEAR(km::sigmoid(x), sig, 1e-6 * sig + 1e-30) << x;
  }
}

}  // namespace
}  // namespace hetsim::exec
