// SPDX-License-Identifier: Apache-2.0
// Repeated collective steps as a dataflow (see phase_dataflow.hpp).
#include "phase_dataflow.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <queue>
#include <tuple>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace hetsim::sim {

bool dataflow_eligible(const Topology& topology, const Phase& step, const std::vector<double>& arrival_delay_s) {
  std::map<int, int> inflows;
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (std::size_t i = 0; i < step.size(); ++i) {
    const Flow& f = step[i];
    ++inflows[f.receiver()];
    const double l = topology.path_latency_s(f.src, f.dst) + (arrival_delay_s.empty() ? 0.0 : arrival_delay_s[i]);
    lo = std::min(lo, l);
    hi = std::max(hi, l);
  }
  for (const auto& f : step)
    if (inflows.count(f.sender()) == 0) return false;
  return !step.empty() && hi > lo * (1 + 1e-9);
}

void run_dataflow_steps(const Topology& topology, const Phase& step, int steps,
                        const std::function<sg4::CommPtr(const Flow&)>& start,
                        const std::function<void(const Flow&, double, double)>& finished, const BucketGate* gate,
                        const std::vector<double>& arrival_delay_s) {
  if (steps <= 0 || step.empty()) return;
  // Buckets released so far (all, without a gate), and the comm that ends at the next release.
  int released = gate ? 0 : steps;
  const int per_bucket = gate ? std::max(1, gate->steps_per_bucket) : steps;
  sg4::CommPtr release = gate ? gate->next_release() : nullptr;
  const auto flows = step.size();
  const double inf = std::numeric_limits<double>::infinity();
  // Per rank: the flows it sends on what it received (indices into `step`; a piece of a hop
  // split over several routes is its hop sender's, Flow::sender) and how many flows reach it in
  // one step (the pieces of its hops in, Flow::receiver).
  std::map<int, std::vector<std::size_t>> outflows;
  std::map<int, int> inflows;
  for (std::size_t i = 0; i < flows; ++i) {
    outflows[step[i].sender()].push_back(i);
    ++inflows[step[i].receiver()];
  }
  // A rank may send step k once every flow into it of step k-1 has arrived (may_send: how many
  // steps it may send so far).
  std::map<int, int> may_send;
  for (const Flow& f : step) may_send[f.sender()] = may_send[f.receiver()] = 1;
  // Per rank, the flows of each step that have reached it (a rank's senders run apart).
  std::map<int, std::vector<int>> arrived;
  for (const auto& [key, count] : inflows) arrived[key].assign(static_cast<std::size_t>(steps), 0);
  // A flow is one connection, which carries its steps in order: step k+1's slices go behind step
  // k's. SimGrid pays a comm's latency first and moves its bytes after, so step k+1 starts one
  // path latency before step k's bytes are through: its bytes then follow step k's instead of
  // sharing the link with them, which would delay the chunk the next rank waits for (a ring with
  // two WAN hops left each direction idle in turn), and on a latency-bound hop it starts at once.
  // When step k's bytes are through is estimated from what it has left at its path's rate alone;
  // on a shared link that is early, so the estimate is taken again when it comes (a few times:
  // each takes what is left), and step k+1 starts once about its latency's worth is left.
  struct FlowState {
    double latency_s = 0, rate_Bps = 0;
    int next_step = 0;          ///< the step it starts next
    sg4::CommPtr last;          ///< its last started step, while in flight
    double last_start_s = 0;
  };
  std::vector<FlowState> state(flows);
  for (std::size_t i = 0; i < flows; ++i) {
    state[i].latency_s = topology.path_latency_s(step[i].src, step[i].dst);
    state[i].rate_Bps = topology.path_bandwidth_Bps(step[i].src, step[i].dst);
  }
  // When flow f's last started step may be followed: one latency before its bytes are through.
  const auto follow_at_s = [](const FlowState& f, double now_s) {
    if (!f.last || !(f.rate_Bps > 0)) return now_s;
    const double latency_left_s = std::max(0.0, f.last_start_s + f.latency_s - now_s);
    return now_s + latency_left_s + f.last->get_remaining() / f.rate_Bps - f.latency_s;
  };
  struct InFlight {
    std::size_t flow;
    int step;
    double start_s;
  };
  std::vector<sg4::CommPtr> comms;
  std::vector<InFlight> meta;
  // A bucket's flow into a rank waits until that rank is done with the bucket before (all of its
  // last step received): the rank's next collective has not started to take it in before (the
  // connection's few buffer slots are small beside a bucket's chunk).
  const auto receiver_on_bucket = [&](std::size_t flow, int k) {
    const int bucket = k / per_bucket;
    return bucket == 0 || may_send[step[flow].receiver()] - 1 >= bucket * per_bucket;
  };
  std::map<int, std::vector<int>> senders_to;  // per rank, the ranks whose flows reach it
  for (const Flow& f : step) {
    auto& from = senders_to[f.receiver()];
    if (std::find(from.begin(), from.end(), f.sender()) == from.end()) from.push_back(f.sender());
  }
  // Starts every flow of `rank` whose next step it may send and whose connection is free for it;
  // returns the earliest moment a flow that may send waits for (inf: none).
  auto start_ready = [&](int rank) {
    double wake_s = inf;
    const double now_s = sg4::Engine::get_clock();
    for (std::size_t i : outflows[rank]) {
      FlowState& f = state[i];
      const int may = may_send[step[i].sender()];
      if (f.next_step >= steps || f.next_step >= may || f.next_step / per_bucket >= released ||
          !receiver_on_bucket(i, f.next_step))
        continue;
      // Close enough: within 2% of a step's latency and bytes (refining further would only
      // wake this actor again and again, ever closer, on a link shared many ways).
      const double slack_s = 0.02 * (f.latency_s + (f.rate_Bps > 0 ? step[i].bytes / f.rate_Bps : 0));
      const double at_s = follow_at_s(f, now_s);
      if (at_s > now_s + slack_s) {
        wake_s = std::min(wake_s, at_s);
        continue;
      }
      meta.push_back({i, f.next_step++, now_s});
      comms.push_back(start(step[i]));
      f.last = comms.back();
      f.last_start_s = now_s;
      if (f.next_step < steps && f.next_step < may && f.next_step / per_bucket < released &&
          receiver_on_bucket(i, f.next_step))
        wake_s = std::min(wake_s, follow_at_s(f, now_s));
    }
    return wake_s;
  };
  std::map<int, double> waiting;  // ranks with a flow that waits for its connection: until when
  const auto start_rank = [&](int rank) {
    const double wake_s = start_ready(rank);
    if (wake_s < inf) waiting[rank] = wake_s;
    else waiting.erase(rank);
  };
  for (const auto& [rank, unused] : outflows) start_rank(rank);
  // A flow's step has reached its receiver: it forwards what it received, step k+1 once all of
  // step k (and the steps before) is in.
  const auto arrive = [&](std::size_t flow, int k) {
    const Flow& f = step[flow];
    const int receiver = f.receiver();
    std::vector<int>& into = arrived[receiver];
    ++into[static_cast<std::size_t>(k)];
    int& allowed = may_send[receiver];
    const int buckets_done_before = (allowed - 1) / per_bucket;
    while (allowed < steps && into[static_cast<std::size_t>(allowed - 1)] == inflows[receiver]) ++allowed;
    start_rank(receiver);
    if (gate && (allowed - 1) / per_bucket > buckets_done_before)  // done with a bucket: its senders may go on
      for (int sender : senders_to[receiver]) start_rank(sender);
  };
  // Steps through the network whose receiver has them later (arrival_delay_s): when, flow, step.
  std::priority_queue<std::tuple<double, std::size_t, int>, std::vector<std::tuple<double, std::size_t, int>>,
                      std::greater<>>
      landing;
  std::vector<sg4::CommPtr> waits;  // the flows in flight and the next release
  while (!comms.empty() || !waiting.empty() || release || !landing.empty()) {
    double wake_s = landing.empty() ? inf : std::get<0>(landing.top());
    for (const auto& [rank, at_s] : waiting) wake_s = std::min(wake_s, at_s);
    const double timeout_s = wake_s < inf ? std::max(0.0, wake_s - sg4::Engine::get_clock()) : -1.0;
    waits.assign(comms.begin(), comms.end());
    if (release) waits.push_back(release);
    const ssize_t got = waits.empty() ? -1 : sg4::Comm::wait_any_for(waits, timeout_s);
    if (release && got == static_cast<ssize_t>(comms.size())) {  // the next bucket is released
      release = ++released < gate->buckets ? gate->next_release() : nullptr;
      for (const auto& [rank, unused] : outflows) start_rank(rank);
      continue;
    }
    if (got < 0) {  // a staged step has landed, or a connection is free for a waiting step
      if (waits.empty() && timeout_s > 0) sg4::this_actor::sleep_for(timeout_s);
      while (!landing.empty() && std::get<0>(landing.top()) <= sg4::Engine::get_clock() + 1e-9) {
        const auto [at_s, flow, k] = landing.top();
        landing.pop();
        arrive(flow, k);
      }
      const std::map<int, double> due = waiting;
      for (const auto& [rank, at_s] : due)
        if (at_s <= sg4::Engine::get_clock() + 1e-9) start_rank(rank);  // starts, or waits again
      continue;
    }
    const auto done = static_cast<std::size_t>(got);
    const sg4::CommPtr comms_done = comms[done];
    const InFlight m = meta[done];
    comms[done] = comms.back();
    comms.pop_back();
    meta[done] = meta.back();
    meta.pop_back();
    const Flow& f = step[m.flow];
    const double now_s = sg4::Engine::get_clock();
    finished(f, m.start_s, now_s);
    if (state[m.flow].last == comms_done) state[m.flow].last = nullptr;  // its connection is free
    const double delay_s = arrival_delay_s.empty() ? 0.0 : arrival_delay_s[m.flow];
    if (delay_s > 0)
      landing.emplace(now_s + delay_s, m.flow, m.step);
    else
      arrive(m.flow, m.step);
    if (f.sender() != f.receiver()) start_rank(f.sender());
  }
}

}  // namespace hetsim::sim
