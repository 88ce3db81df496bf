// SPDX-License-Identifier: Apache-2.0
// What the schedule actors (actors.cpp) share while a step is simulated: the messages between
// pipeline stages, the DP components' semaphores, the flows they start and the link accounting.
#pragma once
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "busy_histogram.hpp"
#include "collective_flows.hpp"
#include "comm_workers.hpp"
#include "phase_dataflow.hpp"
#include "platform_builder.hpp"
#include "simulator.hpp"
#include "trace_writer.hpp"

namespace hetsim::sim {

namespace sg4 = simgrid::s4u;

inline std::uint64_t flow_size(double bytes) { return static_cast<std::uint64_t>(std::llround(std::max(bytes, 1.0))); }

struct Message {
  sg4::SemaphorePtr posted = sg4::Semaphore::create(0);  // released once the data has arrived
};

struct EmbeddingRt {
  sg4::SemaphorePtr last_ready = sg4::Semaphore::create(0);
  sg4::SemaphorePtr done = sg4::Semaphore::create(0);
  double start_s = 0;  ///< when the all-reduce began (the first stage had drained)
};

/// A DP sync class's state (sim_layout.hpp DpSyncClass): its buckets, each released by every
/// member actor once its gradients are complete there, and the end of its reduction.
struct SyncClassRt {
  int buckets = 1;
  std::vector<sg4::SemaphorePtr> bucket_ready;
  sg4::SemaphorePtr grads_done = sg4::Semaphore::create(0);
  sg4::SemaphorePtr optimizer_done = sg4::Semaphore::create(0);  ///< one release per member actor
  sg4::SemaphorePtr params_done = sg4::Semaphore::create(0);     ///< one release per member actor
};

struct ComponentRt {
  std::vector<SyncClassRt> classes;  ///< as DpComponent::classes
};

/// The state the actors of one simulated step share, and the flows they start through it.
class Runtime {
 public:
  /// `step_estimate_s`: the step time expected (the cost model's), which sizes the trace's link
  /// histograms' first bins (0: a default; they widen as needed).
  Runtime(const Topology& topo, const Platform& platform, SimResult& result, bool trace, double step_estimate_s = 0)
      : topo_(topo), platform_(platform), result_(result), trace_(trace) {
    link_bytes_.assign(topo.get_links().size(), 0.0);
    if (trace_)
      link_busy_.assign(topo.get_links().size(),
                        BusyHistogram(step_estimate_s > 0 ? step_estimate_s / BusyHistogram::kFineBins : 1e-3));
  }

  /// What `f` sends (counted as a simulated flow): start_flow's comm, or run_dataflow_steps'
  /// through comm_workers_.
  FlowEnds flow_ends(const Flow& f) {
    ++result_.flows;
    return {platform_.host(f.src), platform_.host(f.dst), flow_size(f.bytes)};
  }
  sg4::CommPtr start_flow(const Flow& f) {
    const FlowEnds e = flow_ends(f);
    return sg4::Comm::sendto_async(e.from, e.to, e.bytes);
  }

  /// Host-staged (AMD<->NVIDIA) flows among `flows`: the two copy setups, plus the time the
  /// slower PCIe copy adds over the network transfer (Comm::set_rate is not applied to
  /// host-to-host comms in SimGrid 3.32, so the cap is a wait after the flow; exact alone).
  double staging_delay(const Phase& flows) const;
  /// The same per flow (0 for a flow that is not staged): what its receiver waits after its
  /// bytes are through (run_dataflow_steps' arrival delays); empty when none is staged.
  /// `scale`: the share of each flow's bytes that runs (an overlapped sync's bucket).
  std::vector<double> arrival_delays(const Phase& flows, double scale = 1.0) const;
  /// A pipeline send's staging wait: as staging_delay, over the flows it simulates and those it
  /// stands for, with the flows into one GPU sharing its host link (a receiver of lower TP than
  /// its sender copies several slices; models::staged_send_path prices the same).
  double send_staging_delay(const FoldedPhase& transfer) const;

  /// Link accounting of a finished flow (and the flows it stands for).
  void account(const Flow& f, double start_s, double end_s) {
    for (int l : topo_.path(f.src, f.dst)) {
      link_bytes_[l] += f.bytes;
      if (trace_) link_busy_[l].add(start_s, end_s);
    }
  }

  /// Starts `flows` (bytes times `scale`) at once and waits for them all; returns each one's
  /// finish time. More than kMaxFlowsPerActor are started by helper actors on this host, at
  /// the same simulated time, this actor waiting until the last has arrived.
  std::vector<double> run_flows(const Phase& flows, double scale);

  /// Starts flows [from, to) of `flows` (bytes times `scale`) from this actor, waits for them
  /// all, and calls on_finish(i, finish_s) for each; `comms` is the caller's scratch (run_phases
  /// reuses one across phases: no allocation per phase). At most kMaxFlowsPerActor of them.
  template <class OnFinish>
  void start_and_wait(const Phase& flows, std::size_t from, std::size_t to, double scale,
                      std::vector<sg4::CommPtr>& comms, OnFinish&& on_finish) {
    comms.clear();
    for (std::size_t i = from; i < to; ++i) comms.push_back(start_flow({flows[i].src, flows[i].dst, flows[i].bytes * scale}));
    result_.max_flows_per_actor = std::max(result_.max_flows_per_actor, static_cast<long long>(to - from));
    sg4::Comm::wait_all(comms);
    for (std::size_t i = from; i < to; ++i) on_finish(i, comms[i - from]->get_finish_time());
  }

  /// Runs a collective's phases one after the other, bytes scaled by `scale`, after the
  /// collective's launch cost (models::kCollectiveLaunch_s, the cost model's figure); returns
  /// the time spent.
  /// `back_to_back`: the run follows the one before at once (FoldedPhase::delay_s).
  double run_phases(const std::vector<FoldedPhase>& phases, double scale, bool launch = true, bool back_to_back = false);

  /// Whether a collective's phases are one run of equal steps that run as a dataflow (a ring's
  /// unmerged steps on hops of unequal latency: run_phases' dataflow case, and nothing else).
  bool one_dataflow_run(const std::vector<FoldedPhase>& phases) const;
  /// `buckets` such collectives (one_dataflow_run), each 1/buckets of the bytes, back to back as
  /// one dataflow gated by the buckets' releases (BucketGate, phase_dataflow.hpp): a helper actor
  /// on this actor's host calls `wait_for_release(k)` for k = 0, 1, ... and reports each release
  /// to the dataflow.
  void run_bucketed_dataflow(const std::vector<FoldedPhase>& phases, int buckets,
                             const std::function<void(int bucket)>& wait_for_release);

  Message& message(int replica, int stage, bool forward, int chunk, int mb) {
    auto& slot = messages_[{replica, stage, forward ? 0 : 1, chunk, mb}];
    if (!slot) slot = std::make_unique<Message>();
    return *slot;
  }

  /// Sends a pipeline transfer and waits until it has arrived (Megatron-LM's p2p send/recv
  /// waits on its requests, and the cost model adds the send to the sender's pass time);
  /// then the receiver may take it. Returns the time spent.
  double send(Message& msg, const FoldedPhase& transfer);

  /// Starts a pipeline transfer beside the sender's compute (Plan::overlap_p2p_comm: Megatron-Core
  /// posts isend/irecv on their own stream and goes on with the next chunk): a helper actor on
  /// the sender's host moves it and posts the message when it has arrived.
  void send_beside(Message& msg, const FoldedPhase& transfer) {
    sg4::Actor::create("p2p", sg4::this_actor::get_host(), [this, &msg, &transfer] { send(msg, transfer); });
  }

  /// Waits until the message has arrived; returns the wait.
  double receive(Message& msg) {
    const double t0 = sg4::Engine::get_clock();
    msg.posted->acquire();
    return sg4::Engine::get_clock() - t0;
  }

  void span(int actor, std::string name, const char* category, double start_s, double end_s) {
    if (trace_ && end_s > start_s) spans_.push_back({actor, std::move(name), category, start_s, end_s});
  }

  void execute(double seconds) {
    if (seconds <= 0) return;
    ++result_.executions;
    sg4::this_actor::execute(seconds * kHostSpeedFlops);
  }

  /// A GEMM and the collective beside it at once (models::Op::overlapped): the compute runs as
  /// an asynchronous execution while this actor moves the collective's flows; returns the time
  /// the pair took beyond the compute (the collective's exposed part).
  double run_beside(double compute_s, const std::vector<FoldedPhase>& phases);

  const Topology& topo_;
  const Platform& platform_;
  SimResult& result_;
  bool trace_;
  std::vector<double> link_bytes_;
  std::vector<BusyHistogram> link_busy_;  ///< per link, with a trace: when it carried traffic
  std::map<std::tuple<int, int, int, int, int>, std::unique_ptr<Message>> messages_;
  std::vector<ComponentRt> components_;
  std::vector<EmbeddingRt> embeddings_;
  /// Every stage actor waits here before its optimizer step (finish_step): the step's gradient
  /// norm is reduced over every GPU first, so no update starts before every sync has ended.
  sg4::BarrierPtr step_barrier_;
  std::vector<TraceSpan> spans_;  // track = actor index until finish()
  CommWorkers comm_workers_;      ///< the helper actors that run the unfolded dataflows' comms
};

}  // namespace hetsim::sim
