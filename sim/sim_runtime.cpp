// SPDX-License-Identifier: Apache-2.0
// The actors' runtime (sim_runtime.hpp): collectives phase by phase, pipeline transfers.
#include "sim_runtime.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <string>

#include "actor_spawn.hpp"
#include "comm_cost.hpp"
#include "phase_dataflow.hpp"

namespace hetsim::sim {

namespace {

/// The narrowest link of a flow's path: its rate on the network, without the staging cap
/// Topology::path_bandwidth_Bps adds.
double network_Bps(const Topology& topo, const Flow& f) {
  double bps = std::numeric_limits<double>::infinity();
  for (int l : topo.path(f.src, f.dst)) bps = std::min(bps, topo.get_link(l).bandwidth_Bps);
  return bps;
}

}  // namespace

std::vector<double> Runtime::arrival_delays(const Phase& flows, double scale) const {
  std::vector<double> out;
  for (std::size_t i = 0; i < flows.size(); ++i) {
    const Flow& f = flows[i];
    const models::HostStaging staging = models::host_staging(topo_.get_cluster(), f.src, f.dst);
    if (!staging.staged || staging.rate_Bps <= 0) continue;
    if (out.empty()) out.assign(flows.size(), 0.0);
    const double bytes = f.bytes * scale;
    out[i] = staging.extra_latency_s + std::max(0.0, bytes / staging.rate_Bps - bytes / network_Bps(topo_, f));
  }
  return out;
}

namespace {

/// The longest of a phase's arrival delays (Runtime::arrival_delays; empty: none staged).
double longest_s(const std::vector<double>& arrival_delay_s) {
  return arrival_delay_s.empty() ? 0.0 : *std::max_element(arrival_delay_s.begin(), arrival_delay_s.end());
}

}  // namespace

double Runtime::staging_delay(const Phase& flows) const { return longest_s(arrival_delays(flows)); }

double Runtime::send_staging_delay(const FoldedPhase& transfer) const {
  std::map<int, double> staged_into;  // GPU -> staged bytes it receives
  for (const Phase* flows : {&transfer.simulated, &transfer.shadows})
    for (const Flow& f : *flows)
      if (models::host_staging(topo_.get_cluster(), f.src, f.dst).staged) staged_into[f.dst] += f.bytes;
  double longest = 0;
  for (const Phase* flows : {&transfer.simulated, &transfer.shadows})
    for (const Flow& f : *flows) {
      const models::HostStaging staging = models::host_staging(topo_.get_cluster(), f.src, f.dst);
      if (!staging.staged || staging.rate_Bps <= 0) continue;
      const double net_s = f.bytes / network_Bps(topo_, f);
      longest = std::max(longest, staging.extra_latency_s + std::max(0.0, staged_into[f.dst] / staging.rate_Bps - net_s));
    }
  return longest;
}

bool Runtime::one_dataflow_run(const std::vector<FoldedPhase>& phases) const {
  if (phases.size() < 2) return false;
  const FoldedPhase& first = phases.front();
  for (const FoldedPhase& ph : phases)
    if (!ph.shadows.empty() || ph.delay_after_s != 0 || !same_flows(ph.simulated, first.simulated)) return false;
  return dataflow_eligible(topo_, first.simulated, arrival_delays(first.simulated));
}

void Runtime::run_bucketed_dataflow(const std::vector<FoldedPhase>& phases, int buckets,
                                    const std::function<void(int bucket)>& wait_for_release) {
  Phase scaled = phases.front().simulated;
  for (auto& f : scaled) f.bytes /= buckets;
  const int steps = static_cast<int>(phases.size());
  const BucketGate gate{steps, buckets, wait_for_release};
  run_dataflow_steps(topo_, scaled, steps * buckets, [&](const Flow& f) { return flow_ends(f); }, comm_workers_,
                     [&](const Flow& f, double from, double to) { account(f, from, to); }, &gate,
                     arrival_delays(scaled));
}

double Runtime::run_phases(const std::vector<FoldedPhase>& phases, double scale, bool launch, bool back_to_back) {
  const double t0 = sg4::Engine::get_clock();
  bool any = false;
  for (const auto& ph : phases) any = any || !ph.simulated.empty();
  if (!any) return 0;
  if (launch) sg4::this_actor::sleep_for(models::kCollectiveLaunch_s);
  std::vector<sg4::CommPtr> comms;
  for (std::size_t i = 0; i < phases.size(); ++i) {
    const auto& ph = phases[i];
    if (ph.simulated.empty()) continue;
    // A run of equal steps with nothing folded into them (a ring's, unfolded): a dataflow.
    // The run is looked for only from a step that qualifies, so equal-latency steps (most
    // of them) are not compared with their successors again and again.
    std::size_t j = i + 1;
    // Host-staged flows' copies, of the bytes that run (a bucket copies its share only).
    const std::vector<double> staged_s = arrival_delays(ph.simulated, scale);
    if (ph.shadows.empty() && ph.delay_after_s == 0 && dataflow_eligible(topo_, ph.simulated, staged_s))
      while (j < phases.size() && same_flows(phases[j].simulated, ph.simulated) && phases[j].shadows.empty() &&
             phases[j].delay_after_s == 0)
        ++j;
    if (j - i > 1) {
      Phase scaled = ph.simulated;
      for (auto& f : scaled) f.bytes *= scale;
      run_dataflow_steps(topo_, scaled, static_cast<int>(j - i), [&](const Flow& f) { return flow_ends(f); }, comm_workers_,
                         [&](const Flow& f, double from, double to) { account(f, from, to); }, nullptr, staged_s);
      i = j - 1;
      continue;
    }
    const double start = sg4::Engine::get_clock();
    double end = start;
    const auto finished = [&](std::size_t k, double fin) {
      const Flow& f = ph.simulated[k];
      end = std::max(end, fin);
      account({f.src, f.dst, f.bytes * scale}, start, fin);
    };
    if (ph.simulated.size() <= kMaxFlowsPerActor) {
      // The common case (folded phases hold a few flows): this actor starts them, no allocation.
      start_and_wait(ph.simulated, 0, ph.simulated.size(), scale, comms, finished);
    } else {
      const std::vector<double> finish = run_flows(ph.simulated, scale);
      for (std::size_t k = 0; k < finish.size(); ++k) finished(k, finish[k]);
    }
    for (const auto& f : ph.shadows) account({f.src, f.dst, f.bytes * scale}, start, end);
    const double delay = ph.delay_s(back_to_back) + longest_s(staged_s);
    if (delay > 0) sg4::this_actor::sleep_for(delay);
  }
  return sg4::Engine::get_clock() - t0;
}

std::vector<double> Runtime::run_flows(const Phase& flows, double scale) {
  std::vector<double> finish(flows.size(), 0.0);
  const auto run_slice = [this, &flows, &finish, scale](std::size_t from, std::size_t to) {
    std::vector<sg4::CommPtr> comms;
    comms.reserve(to - from);
    start_and_wait(flows, from, to, scale, comms, [&finish](std::size_t i, double fin) { finish[i] = fin; });
  };
  if (flows.size() <= kMaxFlowsPerActor) {
    run_slice(0, flows.size());
    return finish;
  }
  const sg4::SemaphorePtr done = sg4::Semaphore::create(0);
  int helpers = 0;
  for (std::size_t from = 0; from < flows.size(); from += kMaxFlowsPerActor, ++helpers) {
    const std::size_t to = std::min(flows.size(), from + kMaxFlowsPerActor);
    spawn_actor("flows", sg4::this_actor::get_host(), [&run_slice, from, to, done] {
      run_slice(from, to);
      done->release();
    });
  }
  for (int h = 0; h < helpers; ++h) done->acquire();  // run_slice and `finish` outlive the helpers
  return finish;
}

double Runtime::send(Message& msg, const FoldedPhase& transfer) {
  const double t0 = sg4::Engine::get_clock();
  std::vector<sg4::CommPtr> comms;
  for (const auto& f : transfer.simulated) comms.push_back(start_flow(f));
  sg4::Comm::wait_all(comms);
  double end = t0;
  for (std::size_t i = 0; i < comms.size(); ++i) {
    end = std::max(end, comms[i]->get_finish_time());
    account(transfer.simulated[i], t0, comms[i]->get_finish_time());
  }
  for (const auto& f : transfer.shadows) account(f, t0, end);
  if (const double d = send_staging_delay(transfer); d > 0) sg4::this_actor::sleep_for(d);
  msg.posted->release();
  return sg4::Engine::get_clock() - t0;
}

double Runtime::run_beside(double compute_s, const std::vector<FoldedPhase>& phases) {
  const double t0 = sg4::Engine::get_clock();
  sg4::ExecPtr exec;
  if (compute_s > 0) {
    ++result_.executions;
    exec = sg4::this_actor::exec_async(compute_s * kHostSpeedFlops);
  }
  run_phases(phases, 1.0);
  if (exec) exec->wait();
  return std::max(0.0, sg4::Engine::get_clock() - t0 - compute_s);
}

}  // namespace hetsim::sim
