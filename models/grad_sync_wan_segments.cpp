// SPDX-License-Identifier: Apache-2.0
// WanSegments (grad_sync_wan_segments.hpp): the reductions of groups that cross WAN links.
#include "grad_sync_wan_segments.hpp"

#include <algorithm>
#include <limits>

#include "topology.hpp"

namespace hetsim::models::grad_sync_detail {

std::vector<double>& WanSegments::load_of(int k) {
  if (loads_.size() <= static_cast<std::size_t>(k)) loads_.resize(static_cast<std::size_t>(k) + 1);
  return loads_[static_cast<std::size_t>(k)];
}

bool WanSegments::crosses(int k) const {
  if (loads_.size() <= static_cast<std::size_t>(k)) return false;
  for (double l : loads_[static_cast<std::size_t>(k)])
    if (l > 0) return true;
  return false;
}

template <class Link>
void WanSegments::for_each_link(int k, Link&& link) {
  const std::vector<double>& own = load_of(k);
  const int zones = static_cast<int>(c_.zones.size());
  for (int za = 0; za < zones; ++za)
    for (int zb = za + 1; zb < zones; ++zb) {
      const std::size_t pair = static_cast<std::size_t>(zone_pair_index(c_, za, zb));
      if (pair >= own.size() || !(own[pair] > 0)) continue;
      if (const int rail = rails_.wan_of(za, zb); rail >= 0) link(pair, rail, own[pair]);
    }
}

void WanSegments::add(int k, const Reduction& r, const std::vector<double>& all_load, const double* ready_s, int buckets) {
  for_each_link(k, [&](std::size_t pair, int rail, double own) {
    if (pair >= all_load.size() || !(all_load[pair] > 0)) return;
    const double bytes = r.bytes_s * own / all_load[pair] * rails_.rate_Bps(rail);
    for (int i = 0; i < buckets; ++i) rails_.add_reduce(rail, ready_s[i], bytes, k, r.latency_s);
  });
  added_.push_back({k, r});
}

double WanSegments::reduction_end_s(const Added& a) {
  double on_links_s = -std::numeric_limits<double>::infinity();
  for_each_link(a.k, [&](std::size_t, int rail, double) { on_links_s = std::max(on_links_s, rails_.group_reduce_end_s(rail, a.k)); });
  return std::min(a.reduction.shared_end_s, std::max(a.reduction.alone_end_s, on_links_s));
}

}  // namespace hetsim::models::grad_sync_detail
