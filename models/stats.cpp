// SPDX-License-Identifier: Apache-2.0
// Error statistics for predicted-versus-measured comparisons.
#include "stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace hetsim::models {

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

double relative_error(double predicted, double measured) { return (predicted - measured) / measured; }

std::optional<double> mape(const std::vector<double>& predicted, const std::vector<double>& measured) {
  const std::size_t n = std::min(predicted.size(), measured.size());
  if (n == 0) return std::nullopt;
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += std::fabs(relative_error(predicted[i], measured[i]));
  return sum / n;
}

std::optional<double> max_abs_error(const std::vector<double>& predicted, const std::vector<double>& measured) {
  const std::size_t n = std::min(predicted.size(), measured.size());
  if (n == 0) return std::nullopt;
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) worst = std::max(worst, std::fabs(relative_error(predicted[i], measured[i])));
  return worst;
}

std::vector<double> average_ranks(const std::vector<double>& values) {
  const std::size_t n = values.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(n);
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j + 1 < n && values[order[j + 1]] == values[order[i]]) ++j;
    const double rank = (i + j) / 2.0 + 1.0;  // average of positions i..j, 1-based
    for (std::size_t k = i; k <= j; ++k) ranks[order[k]] = rank;
    i = j + 1;
  }
  return ranks;
}

std::optional<double> spearman(const std::vector<double>& x, const std::vector<double>& y) {
  const std::size_t n = std::min(x.size(), y.size());
  if (n < 2) return std::nullopt;
  const std::vector<double> rx = average_ranks(std::vector<double>(x.begin(), x.begin() + n));
  const std::vector<double> ry = average_ranks(std::vector<double>(y.begin(), y.begin() + n));
  const double mx = std::accumulate(rx.begin(), rx.end(), 0.0) / n;
  const double my = std::accumulate(ry.begin(), ry.end(), 0.0) / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  if (sxx <= 0 || syy <= 0) return std::nullopt;
  return sxy / std::sqrt(sxx * syy);
}

}  // namespace hetsim::models
