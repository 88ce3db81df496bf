// SPDX-License-Identifier: Apache-2.0
// Progress and size lines of long simulations (see sim_progress.hpp).
#include "sim_progress.hpp"

#include <cmath>
#include <cstdio>

namespace hetsim::sim {

std::string short_count(double n) {
  static const char* const kSuffix[] = {"", "K", "M", "B"};
  int i = 0;
  while (i < 3 && std::fabs(n) >= 999.5) {
    n /= 1000;
    ++i;
  }
  char buf[32];
  if (i == 0) std::snprintf(buf, sizeof buf, "%.0f", n);
  else std::snprintf(buf, sizeof buf, "%.3g%s", n, kSuffix[i]);
  return buf;
}

std::string short_duration(double s) {
  char buf[32];
  if (s < 9.95) std::snprintf(buf, sizeof buf, "%.1f s", s);
  else if (s < 99.5) std::snprintf(buf, sizeof buf, "%.0f s", s);
  else if (s < 5400) std::snprintf(buf, sizeof buf, "%.1f min", s / 60);
  else std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
  return buf;
}

std::string progress_line(double simulated_s, double estimate_s, double wall_s) {
  char buf[160];
  if (estimate_s > 0 && simulated_s <= estimate_s) {
    // Floor, so that 100% means the estimate is reached, not nearly.
    const int pct = static_cast<int>(std::floor(100.0 * simulated_s / estimate_s));
    std::snprintf(buf, sizeof buf, "simulate: %d%% of the analytic estimate simulated (%.3g of ~%.3g s), %s wall", pct,
                  simulated_s, estimate_s, short_duration(wall_s).c_str());
  } else if (estimate_s > 0) {
    std::snprintf(buf, sizeof buf, "simulate: %.3g s simulated, past the analytic estimate of ~%.3g s, %s wall",
                  simulated_s, estimate_s, short_duration(wall_s).c_str());
  } else {
    std::snprintf(buf, sizeof buf, "simulate: %.3g s simulated, %s wall", simulated_s, short_duration(wall_s).c_str());
  }
  return buf;
}

std::string size_line(double flows) {
  if (!(flows >= kAnnouncedFlows)) return "";
  return "simulate: about " + short_count(flows) + " flows to simulate; at " + short_count(kSlowFlowsPerSecond) + "-" +
         short_count(kFastFlowsPerSecond) + " flows/s that is " + short_duration(flows / kFastFlowsPerSecond) + " to " +
         short_duration(flows / kSlowFlowsPerSecond) + " of wall time";
}

}  // namespace hetsim::sim
