// SPDX-License-Identifier: Apache-2.0
// Error statistics for predicted-versus-measured comparisons (validation, planner checks).
#pragma once
#include <optional>
#include <vector>

namespace hetsim::models {

/// The median of the values (the mean of the middle two for an even count); 0 when empty.
double median(std::vector<double> values);
/// Signed relative error (predicted - measured) / measured.
double relative_error(double predicted, double measured);
/// Mean absolute relative error of the pairs (a fraction, not percent); nullopt when empty.
std::optional<double> mape(const std::vector<double>& predicted, const std::vector<double>& measured);
/// Largest absolute relative error; nullopt when empty.
std::optional<double> max_abs_error(const std::vector<double>& predicted, const std::vector<double>& measured);
/// Ranks 1..n with ties given their average rank (fractional ranking).
std::vector<double> average_ranks(const std::vector<double>& values);
/// Spearman's rank correlation: Pearson correlation of the average ranks (Spearman 1904;
/// ties handled as in Kendall & Gibbons, "Rank correlation methods", 1990). nullopt with fewer
/// than two pairs or when either side is constant.
std::optional<double> spearman(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace hetsim::models
