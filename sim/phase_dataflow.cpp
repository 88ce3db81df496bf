// SPDX-License-Identifier: Apache-2.0
// Repeated collective steps as a dataflow (see phase_dataflow.hpp).
#include "phase_dataflow.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace hetsim::sim {

bool dataflow_eligible(const Topology& topology, const Phase& step) {
  std::map<int, int> inflows;
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (const auto& f : step) {
    ++inflows[f.dst];
    const double l = topology.path_latency_s(f.src, f.dst);
    lo = std::min(lo, l);
    hi = std::max(hi, l);
  }
  for (const auto& f : step)
    if (inflows.count(f.src) == 0) return false;
  return !step.empty() && hi > lo * (1 + 1e-9);
}

void run_dataflow_steps(const Phase& step, int steps, const std::function<sg4::CommPtr(const Flow&)>& start,
                        const std::function<void(const Flow&, double, double)>& finished) {
  if (steps <= 0 || step.empty()) return;
  // Per rank: its flows (indices into `step`) and how many flows reach it in one step.
  std::map<int, std::vector<int>> outflows;
  std::map<int, int> inflows;
  for (int i = 0; i < static_cast<int>(step.size()); ++i) {
    outflows[step[i].src].push_back(i);
    ++inflows[step[i].dst];
  }
  // Arrivals per (rank, step) not yet complete; a rank's later steps may start arriving
  // before its earlier ones are done (its predecessor ran ahead), so each step is counted apart.
  std::unordered_map<long long, int> arrived;
  struct InFlight {
    int flow;
    int step;
    double start_s;
  };
  std::vector<sg4::CommPtr> comms;
  std::vector<InFlight> meta;
  auto launch = [&](int flow, int k) {
    meta.push_back({flow, k, sg4::Engine::get_clock()});
    comms.push_back(start(step[flow]));
  };
  for (int i = 0; i < static_cast<int>(step.size()); ++i) launch(i, 0);
  while (!comms.empty()) {
    const auto done = static_cast<std::size_t>(sg4::Comm::wait_any(comms));
    const InFlight m = meta[done];
    comms[done] = comms.back();
    comms.pop_back();
    meta[done] = meta.back();
    meta.pop_back();
    const Flow& f = step[m.flow];
    finished(f, m.start_s, sg4::Engine::get_clock());
    if (m.step + 1 >= steps) continue;
    const long long key = static_cast<long long>(f.dst) * steps + m.step;
    if (++arrived[key] < inflows[f.dst]) continue;
    arrived.erase(key);
    for (int next : outflows[f.dst]) launch(next, m.step + 1);  // the rank forwards what it received
  }
}

}  // namespace hetsim::sim
