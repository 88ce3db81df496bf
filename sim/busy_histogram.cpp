// SPDX-License-Identifier: Apache-2.0
// Bounded busy-time histogram of a link (see busy_histogram.hpp).
#include "busy_histogram.hpp"

#include <algorithm>
#include <cmath>

namespace hetsim::sim {

BusyHistogram::BusyHistogram(double first_width_s) : width_s_(first_width_s > 0 ? first_width_s : 1e-3) {}

void BusyHistogram::add(double start_s, double end_s) {
  if (!(end_s > start_s) || !std::isfinite(end_s)) return;
  start_s = std::max(0.0, start_s);
  last_end_s_ = std::max(last_end_s_, end_s);
  if (open_ && start_s <= open_interval_.second && end_s >= open_interval_.first) {
    open_interval_.first = std::min(open_interval_.first, start_s);
    open_interval_.second = std::max(open_interval_.second, end_s);
    return;
  }
  if (open_) flush(open_interval_.first, open_interval_.second);
  open_interval_ = {start_s, end_s};
  open_ = true;
}

void BusyHistogram::coarsen_until(double end_s) {
  while (end_s > width_s_ * kFineBins) {
    for (int i = 0; i < kFineBins / 2; ++i) busy_s_[i] = busy_s_[2 * i] + busy_s_[2 * i + 1];
    std::fill(busy_s_.begin() + kFineBins / 2, busy_s_.end(), 0.0);
    width_s_ *= 2;
  }
}

void BusyHistogram::flush(double start_s, double end_s) {
  if (busy_s_.empty()) busy_s_.assign(kFineBins, 0.0);
  coarsen_until(end_s);
  const int first = std::min(kFineBins - 1, static_cast<int>(start_s / width_s_));
  for (int i = first; i < kFineBins && i * width_s_ < end_s; ++i) {
    const double overlap = std::min(end_s, (i + 1) * width_s_) - std::max(start_s, i * width_s_);
    if (overlap <= 0) continue;
    // An interval that overlaps an earlier, already flushed one (a long flow beside short ones)
    // counts its shared part once per bin at most: a bin is never busier than its width.
    const double before = busy_s_[i];
    busy_s_[i] = std::min(width_s_, before + overlap);
    total_s_ += busy_s_[i] - before;
  }
}

std::vector<double> BusyHistogram::busy_per_bin(double t_end_s, int bins) const {
  std::vector<double> out(static_cast<std::size_t>(std::max(0, bins)), 0.0);
  if (bins <= 0 || !(t_end_s > 0)) return out;
  BusyHistogram all = *this;
  if (all.open_) all.flush(all.open_interval_.first, all.open_interval_.second);
  if (all.busy_s_.empty()) return out;
  const double bin_s = t_end_s / bins;
  for (int i = 0; i < kFineBins; ++i) {
    if (all.busy_s_[i] <= 0) continue;
    // Spread the fine bin's busy time over the output bins it covers, by overlap; the bin that
    // holds the last end spreads over its part up to that end only (where the step ends, a
    // fine bin can reach past it, and busy time spread there was lost).
    const double lo = i * all.width_s_, hi = std::max(std::min((i + 1) * all.width_s_, last_end_s_), lo + 1e-300);
    for (int j = std::max(0, static_cast<int>(lo / bin_s)); j < bins && j * bin_s < hi; ++j) {
      const double overlap = std::min(hi, (j + 1) * bin_s) - std::max(lo, j * bin_s);
      if (overlap > 0) out[j] += all.busy_s_[i] * overlap / (hi - lo);
    }
  }
  for (double& v : out) v = std::min(v, bin_s);
  return out;
}

}  // namespace hetsim::sim
