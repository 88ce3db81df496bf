// SPDX-License-Identifier: Apache-2.0
// Repeated collective steps as a dataflow (see phase_dataflow.hpp).
#include "phase_dataflow.hpp"
#include "actor_spawn.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <map>
#include <set>
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

namespace {

/// One run of run_dataflow_steps: the ranks' progress and the flows' connections (see the header).
class DataflowRun {
 public:
  DataflowRun(const Topology& topology, const Phase& step, int steps,
              const std::function<FlowEnds(const Flow&)>& ends, CommWorkers& workers,
              const std::function<void(const Flow&, double, double)>& finished, const BucketGate* gate,
              const std::vector<double>& arrival_delay_s)
      : step_(step), steps_(steps), ends_(ends), workers_(workers), finished_(finished), gate_(gate),
        arrival_delay_s_(arrival_delay_s), released_(gate ? 0 : steps),
        per_bucket_(gate ? std::max(1, gate->steps_per_bucket) : steps), state_(step.size()) {
    for (std::size_t i = 0; i < step.size(); ++i) {
      const Flow& f = step[i];
      outflows_[f.sender()].push_back(i);
      ++inflows_[f.receiver()];
      may_send_[f.sender()] = may_send_[f.receiver()] = 1;
      auto& from = senders_to_[f.receiver()];
      if (std::find(from.begin(), from.end(), f.sender()) == from.end()) from.push_back(f.sender());
      state_[i].latency_s = topology.path_latency_s(f.src, f.dst);
      state_[i].rate_Bps = topology.path_bandwidth_Bps(f.src, f.dst);
    }
    for (const auto& [rank, count] : inflows_) arrived_[rank].assign(static_cast<std::size_t>(steps), 0);
    if (gate_) report_releases();
  }

  void run() {
    for (const auto& [rank, unused] : outflows_) start_rank(rank);
    while (in_flight_.size() > free_tags_.size() || !waiting_.empty() || (gate_ && released_ < gate_->buckets) ||
           !landing_.empty()) {
      double wake_s = landing_.empty() ? kNever : std::get<0>(landing_.top());
      for (const auto& [rank, at_s] : waiting_) wake_s = std::min(wake_s, at_s);
      if (wake_s < kNever && (timers_.empty() || wake_s < *timers_.begin())) {
        timers_.insert(wake_s);
        workers_.wake_at(sg4::this_actor::get_host(), wake_s, inbox_, kTimerTag);
      }
      const std::size_t ended = inbox_.next_ended();
      if (ended == kTimerTag) {  // a staged step has landed, or a connection is free for a waiting step
        timers_.erase(timers_.begin());  // they ring in time order
        wake_due();
      } else if (ended == kReleaseTag) {  // the next bucket is released
        ++released_;
        for (const auto& [rank, unused] : outflows_) start_rank(rank);
      } else {
        flow_done(ended);
      }
    }
  }

 private:
  static constexpr double kNever = std::numeric_limits<double>::infinity();
  static constexpr std::size_t kReleaseTag = static_cast<std::size_t>(-1);  ///< the next bucket's release
  static constexpr std::size_t kTimerTag = static_cast<std::size_t>(-2);    ///< a wake_at of timers_

  /// A helper actor on this host waits for each bucket's release in turn and reports it to
  /// inbox_ (the run ends only after the last, so nothing it holds is gone before it is done).
  void report_releases() {
    spawn_actor("bucket-releases", sg4::this_actor::get_host(),
                       [wait = gate_->wait_for_release, buckets = gate_->buckets, inbox = inbox_] {
                         for (int b = 0; b < buckets; ++b) {
                           wait(b);
                           inbox.report(kReleaseTag);
                         }
                       });
  }

  // A flow is one connection, which carries its steps in order: step k+1's slices go behind step
  // k's. SimGrid pays a comm's latency first and moves its bytes after, so step k+1 starts one
  // path latency before step k's bytes are through: its bytes then follow step k's instead of
  // sharing the link with them, which would delay the chunk the next rank waits for (a ring with
  // two WAN hops left each direction idle in turn), and on a latency-bound hop it starts at once.
  // When step k's bytes are through is estimated from what it has left at its path's rate alone;
  // on a shared link that is early, so the estimate is taken again when it comes (a few times:
  // each takes what is left), and step k+1 starts once about its latency's worth is left.
  using CommCell = std::shared_ptr<const sg4::CommPtr>;  ///< CommWorkers::send's
  struct FlowState {
    double latency_s = 0, rate_Bps = 0, bytes = 0;
    int next_step = 0;  ///< the step it starts next
    CommCell last;      ///< its last started step, while in flight
    double last_start_s = 0;
  };
  struct InFlight {
    std::size_t flow = 0;
    int step = 0;
    double start_s = 0;
    CommCell comm;
  };

  /// When flow f's last started step may be followed: one latency before its bytes are through
  /// (all of them still, before its helper has started it).
  static double follow_at_s(const FlowState& f, double now_s) {
    if (!f.last || !(f.rate_Bps > 0)) return now_s;
    const double latency_left_s = std::max(0.0, f.last_start_s + f.latency_s - now_s);
    const double remaining = *f.last ? (*f.last)->get_remaining() : f.bytes;
    return now_s + latency_left_s + remaining / f.rate_Bps - f.latency_s;
  }

  /// Whether flow `i` may send step k as far as the data goes: its sender has step k-1 in (a
  /// rank forwards what it received), bucket k / per_bucket is released, and its receiver is done
  /// with the bucket before (all of its last step received): the rank's next collective has not
  /// started to take it in before (the connection's few buffer slots are small beside a bucket's
  /// chunk).
  bool may_send_step(std::size_t i, int k) {
    if (k >= steps_ || k >= may_send_[step_[i].sender()] || k / per_bucket_ >= released_) return false;
    const int bucket = k / per_bucket_;
    return bucket == 0 || may_send_[step_[i].receiver()] - 1 >= bucket * per_bucket_;
  }

  /// Starts every flow of `rank` whose next step it may send and whose connection is free for it;
  /// returns the earliest moment a flow that may send waits for (kNever: none).
  double start_ready(int rank) {
    double wake_s = kNever;
    const double now_s = sg4::Engine::get_clock();
    for (std::size_t i : outflows_[rank]) {
      FlowState& f = state_[i];
      if (!may_send_step(i, f.next_step)) continue;
      // Close enough: within 2% of a step's latency and bytes (refining further would only
      // wake this actor again and again, ever closer, on a link shared many ways).
      const double slack_s = 0.02 * (f.latency_s + (f.rate_Bps > 0 ? step_[i].bytes / f.rate_Bps : 0));
      const double at_s = follow_at_s(f, now_s);
      if (at_s > now_s + slack_s) {
        wake_s = std::min(wake_s, at_s);
        continue;
      }
      const FlowEnds e = ends_(step_[i]);
      f.bytes = static_cast<double>(e.bytes);
      f.last_start_s = now_s;
      std::size_t tag = in_flight_.size();
      if (free_tags_.empty()) {
        in_flight_.emplace_back();
      } else {
        tag = free_tags_.back();
        free_tags_.pop_back();
      }
      f.last = workers_.send(e.from, e.to, e.bytes, inbox_, tag);
      in_flight_[tag] = InFlight{i, f.next_step++, now_s, f.last};
      if (may_send_step(i, f.next_step)) wake_s = std::min(wake_s, follow_at_s(f, now_s));
    }
    return wake_s;
  }

  void start_rank(int rank) {
    const double wake_s = start_ready(rank);
    if (wake_s < kNever) waiting_[rank] = wake_s;
    else waiting_.erase(rank);
  }

  /// A flow's step has reached its receiver: it forwards what it received, step k+1 once all of
  /// step k (and the steps before) is in.
  void arrive(std::size_t flow, int k) {
    const int receiver = step_[flow].receiver();
    std::vector<int>& into = arrived_[receiver];
    ++into[static_cast<std::size_t>(k)];
    int& allowed = may_send_[receiver];
    const int buckets_done_before = (allowed - 1) / per_bucket_;
    while (allowed < steps_ && into[static_cast<std::size_t>(allowed - 1)] == inflows_[receiver]) ++allowed;
    start_rank(receiver);
    if (gate_ && (allowed - 1) / per_bucket_ > buckets_done_before)  // done with a bucket: its senders may go on
      for (int sender : senders_to_[receiver]) start_rank(sender);
  }

  /// The comm of in_flight_[tag] has ended.
  void flow_done(std::size_t tag) {
    const InFlight m = std::move(in_flight_[tag]);
    in_flight_[tag] = InFlight{};
    free_tags_.push_back(tag);
    const Flow& f = step_[m.flow];
    const double now_s = sg4::Engine::get_clock();
    finished_(f, m.start_s, now_s);
    if (state_[m.flow].last == m.comm) state_[m.flow].last = nullptr;  // its connection is free
    const double delay_s = arrival_delay_s_.empty() ? 0.0 : arrival_delay_s_[m.flow];
    if (delay_s > 0)
      landing_.emplace(now_s + delay_s, m.flow, m.step);
    else
      arrive(m.flow, m.step);
    if (f.sender() != f.receiver()) start_rank(f.sender());
  }

  /// Staged steps that have landed, and ranks whose waiting flow's connection is now free.
  void wake_due() {
    while (!landing_.empty() && std::get<0>(landing_.top()) <= sg4::Engine::get_clock() + 1e-9) {
      const auto [at_s, flow, k] = landing_.top();
      landing_.pop();
      arrive(flow, k);
    }
    const std::map<int, double> due = waiting_;
    for (const auto& [rank, at_s] : due)
      if (at_s <= sg4::Engine::get_clock() + 1e-9) start_rank(rank);  // starts, or waits again
  }

  const Phase& step_;
  const int steps_;
  const std::function<FlowEnds(const Flow&)>& ends_;
  CommWorkers& workers_;
  CommWorkers::Inbox inbox_;  ///< where workers_ reports this run's comms and timers
  std::multiset<double> timers_;  ///< when the wake_at calls not yet rung ring
  const std::function<void(const Flow&, double, double)>& finished_;
  const BucketGate* gate_;
  const std::vector<double>& arrival_delay_s_;
  int released_;          ///< buckets released so far (all, without a gate)
  const int per_bucket_;  ///< steps of a bucket
  // Per rank: the flows it sends on what it received (indices into `step`; a piece of a hop
  // split over several routes is its hop sender's, Flow::sender), how many flows reach it in one
  // step (the pieces of its hops in, Flow::receiver), how many steps it may send so far (step k
  // once every flow into it of step k-1 has arrived), the flows of each step that have reached it
  // (a rank's senders run apart), and the ranks whose flows reach it.
  std::map<int, std::vector<std::size_t>> outflows_;
  std::map<int, int> inflows_, may_send_;
  std::map<int, std::vector<int>> arrived_, senders_to_;
  std::vector<FlowState> state_;
  std::vector<InFlight> in_flight_;  ///< the flows' comms workers_ runs, by tag (free_tags_: ended)
  std::vector<std::size_t> free_tags_;
  std::map<int, double> waiting_;    ///< ranks with a flow that waits for its connection: until when
  /// Steps through the network whose receiver has them later (arrival_delay_s): when, flow, step.
  std::priority_queue<std::tuple<double, std::size_t, int>, std::vector<std::tuple<double, std::size_t, int>>,
                      std::greater<>>
      landing_;
};

}  // namespace

void run_dataflow_steps(const Topology& topology, const Phase& step, int steps,
                        const std::function<FlowEnds(const Flow&)>& ends, CommWorkers& workers,
                        const std::function<void(const Flow&, double, double)>& finished, const BucketGate* gate,
                        const std::vector<double>& arrival_delay_s) {
  if (steps <= 0 || step.empty()) return;
  DataflowRun(topology, step, steps, ends, workers, finished, gate, arrival_delay_s).run();
}

}  // namespace hetsim::sim
