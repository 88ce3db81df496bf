// SPDX-License-Identifier: Apache-2.0
// Golden-section search for the minimum of a unimodal function on an interval (Kiefer,
// "Sequential minimax search for a maximum", Proc. AMS 1953; Press et al., "Numerical Recipes",
// 3rd ed., §10.2), shared by the GEMM fit and the fit to measured runs: each brackets the
// minimum with a grid of its own first, then refines the best grid cell with this.
#pragma once
#include <cmath>
#include <utility>

namespace hetsim::calibration {

/// `steps` golden-section steps on [a, b] (each shrinks it by 0.618 and evaluates f once, after
/// f at the two first interior points); returns the better of the two last interior points and
/// its value: (x, f(x)).
template <class F>
std::pair<double, double> golden_section_minimum(const F& f, double a, double b, int steps) {
  const double g = (std::sqrt(5.0) - 1.0) / 2.0;
  double c = b - g * (b - a), d = a + g * (b - a);
  double fc = f(c), fd = f(d);
  for (int i = 0; i < steps; ++i) {
    if (fc < fd) {
      b = d, d = c, fd = fc, c = b - g * (b - a), fc = f(c);
    } else {
      a = c, c = d, fc = fd, d = a + g * (b - a), fd = f(d);
    }
  }
  return fc < fd ? std::make_pair(c, fc) : std::make_pair(d, fd);
}

}  // namespace hetsim::calibration
