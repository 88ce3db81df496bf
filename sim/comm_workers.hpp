// SPDX-License-Identifier: Apache-2.0
// Comms started and waited for by a pool of helper actors, one comm each at a time, whose ends
// the calling actor takes one by one. An actor that waits for k comms in flight with
// Comm::wait_any_for pays O(k) each time one ends: SimGrid 3.32 registers the wait with every
// comm given, then unregisters it from each. The unfolded dataflow of a ring over hundreds of
// ranks keeps hundreds in flight (run_dataflow_steps); with the pool, 256 one-GPU replicas'
// `simulate --no-fold` went from 159 s to 6.4 s (same report, byte for byte). What is left grows
// with the comms in flight too: SimGrid 3.32 keeps every host-to-host comm in flight in one of
// the engine's lists and removes each finished one by a linear search (CommImpl::finish; only
// mailbox comms between actors on the two hosts would avoid it). This file calls SimGrid.
#pragma once
#include <simgrid/s4u.hpp>

#include <cstddef>
#include <memory>
#include <optional>

namespace hetsim::sim {

class CommWorkers {
 public:
  /// The helpers run on `host` (the caller's: they take no simulated time of their own).
  explicit CommWorkers(simgrid::s4u::Host* host);
  /// Stops the helpers; call it once every comm handed over has ended (next_ended).
  ~CommWorkers();
  CommWorkers(const CommWorkers&) = delete;
  CommWorkers& operator=(const CommWorkers&) = delete;

  /// Hands `comm` to an idle helper (a new one when none is idle), which starts it (unless
  /// `started`: it only waits for it) at the current simulated time and waits for its end,
  /// reported with `tag`.
  void run(simgrid::s4u::CommPtr comm, std::size_t tag, bool started = false);

  /// The tag of the next comm that has ended (in the order they ended), waiting for one up to
  /// `timeout_s` (< 0: without limit); nullopt when none ended within it.
  std::optional<std::size_t> next_ended(double timeout_s);

 private:
  struct Shared;
  std::shared_ptr<Shared> shared_;  ///< outlives this object while a helper still runs
  simgrid::s4u::Host* host_;
};

}  // namespace hetsim::sim
