// SPDX-License-Identifier: Apache-2.0
// Repeated steps of a collective (a ring's 2(p-1) equal steps) run as a dataflow: a rank's
// flow of step k+1 starts as soon as every flow into it of step k has arrived, as NCCL's ring
// forwards what each rank has received (no barrier across the ring between steps), and once its
// own flow of step k is done (one connection per peer: step k+1's slices follow step k's). On
// equal hops this takes what step-by-step barriers take; on a ring with one slow-latency hop (a
// WAN link) the latency is paid about once per trip round the ring, not on every step, and on
// a ring with two slow hops each keeps sending while the other does (SimGrid's link sharing
// bounds the bandwidth of the flows that meet on a link). The ranks are those of the ring's hops
// (Flow::sender, Flow::receiver): a node crossing split over the members' NICs is still one hop,
// forwarded by the next node's first member, so a trip round the ring pays each crossing's
// latency once, as each of NCCL's channel rings does. This file calls SimGrid.
#pragma once
#include <simgrid/s4u.hpp>

#include <cstdint>
#include <functional>

#include "collective_flows.hpp"
#include "comm_workers.hpp"
#include "sim_topology.hpp"

namespace hetsim::sim {

/// Whether the steps of `step` run as a dataflow: every rank that sends in it also receives in
/// it (a ring's ranks do), and its flows' paths differ in latency (a ring over a slower hop,
/// such as a WAN link: only then do barriers between steps cost more than the dataflow; on
/// equal hops the caller keeps its step-by-step barriers, which time them alike).
/// `arrival_delay_s` (empty, or one per flow of `step`): what a flow's receiver waits after its
/// bytes are through (a host-staged hop's copies), counted with its path's latency.
bool dataflow_eligible(const Topology& topology, const Phase& step, const std::vector<double>& arrival_delay_s = {});

/// What a flow of the dataflow sends: from which host to which, how many simulated bytes.
struct FlowEnds {
  simgrid::s4u::Host* from = nullptr;
  simgrid::s4u::Host* to = nullptr;
  std::uint64_t bytes = 0;
};

/// Buckets of one collective each, run back to back as one dataflow: a rank starts bucket b's
/// first step once it has received all of bucket b-1's last (NCCL runs a rank's collectives in
/// order on its stream, each as soon as that rank is done with the one before, not when the
/// whole ring is) and bucket b is released. `wait_for_release(b)` returns once bucket b is
/// released; a helper actor of the run calls it for b = 0, 1, ... in order.
struct BucketGate {
  int steps_per_bucket = 1;
  int buckets = 1;
  std::function<void(int bucket)> wait_for_release;
};

/// Runs `steps` repetitions of the flows of `step` as a dataflow (see the header); `topology`
/// gives each flow's path latency and rate alone, when its next step follows its bytes. `ends`
/// gives one flow's hosts and simulated size, which `workers`' helper actors send (CommWorkers,
/// comm_workers.hpp); `finished` is called for each flow as it ends, with
/// its start and end times. With `gate`, `steps` is its buckets x steps_per_bucket. A flow's
/// receiver has its bytes `arrival_delay_s[i]` after they are through (empty: at once; a
/// host-staged hop's copies, Runtime::arrival_delays; its connection is free at once). Returns
/// when the last flow has ended and arrived.
void run_dataflow_steps(const Topology& topology, const Phase& step, int steps,
                        const std::function<FlowEnds(const Flow&)>& ends, CommWorkers& workers,
                        const std::function<void(const Flow&, double start_s, double end_s)>& finished,
                        const BucketGate* gate = nullptr, const std::vector<double>& arrival_delay_s = {});

}  // namespace hetsim::sim
