// SPDX-License-Identifier: Apache-2.0
// Comms run by a pool of helper actors, each on one host and with one comm at a time, whose
// ends each caller takes one by one from its own inbox. Two costs of SimGrid 3.32 grow with the
// comms in flight, and the unfolded dataflow of a ring over hundreds of ranks keeps hundreds to
// thousands in flight (run_dataflow_steps): an actor that waits for k comms with
// Comm::wait_any_for registers with, then unregisters from, all k every time one ends; and every
// host-to-host comm (Comm::sendto_async) in flight is kept in one list of the engine's, which
// CommImpl::finish searches linearly for every comm that ends. The helpers remove the first; the
// second goes where more than kHostToHostInFlight are in flight: further comms are mailbox comms
// between a helper on the sending host and one on the receiving host (kept in their own lists,
// of one each), which cost two actors a comm instead of one. `simulate --no-fold`: 256 one-GPU
// replicas of GPT-3 1.3B, 159 s -> 6.2 s, the same report byte for byte (11.6 s with mailbox
// comms only); 192 one-GPU H100 and MI300X replicas of GPT-3 6.7B, 95 s with host-to-host comms
// only, 63 s (78 s with mailbox comms only), the same report; the planner's bench1024 GPT-3 6.7B
// plan (688 replicas, ~3,400 comms in flight in a run) had not ended in 15 min, now 10.3 min.
// This file calls SimGrid.
#pragma once
#include <simgrid/s4u.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace hetsim::sim {

class CommWorkers {
 public:
  /// Host-to-host comms in flight beyond which sends are mailbox comms (see the header).
  static constexpr int kHostToHostInFlight = 1024;

  /// Where the comms one caller hands over report their ends (their tags), in the order they end.
  class Inbox {
   public:
    Inbox();
    /// The next tag, waiting for it. (No timeout: SimGrid 3.32's Semaphore::acquire_timeout can
    /// answer a later acquire of the same actor when a release and the timeout meet; wake_at
    /// is the timeout.)
    std::size_t next_ended();
    /// Reports `tag` now, from whatever actor calls it (one that waits for something else).
    void report(std::size_t tag) const;

    struct State;  ///< defined in comm_workers.cpp

   private:
    friend class CommWorkers;
    std::shared_ptr<State> state_;  ///< outlives the inbox while a helper still holds one of its comms
  };

  CommWorkers();

  /// Sends `bytes` from `from` to `to`, from the current simulated time (once the caller yields),
  /// and reports the end to `inbox` with `tag`. Returns the cell where the comm is put once
  /// started (empty before: its remaining bytes are then all of them).
  std::shared_ptr<const simgrid::s4u::CommPtr> send(simgrid::s4u::Host* from, simgrid::s4u::Host* to,
                                                    std::uint64_t bytes, const Inbox& inbox, std::size_t tag);
  /// Reports `tag` to `inbox` at simulated time `at_s` (a helper on `host` sleeps until then).
  void wake_at(simgrid::s4u::Host* host, double at_s, const Inbox& inbox, std::size_t tag);

 private:
  struct Pool;
  std::shared_ptr<Pool> pool_;  ///< the helpers (daemons: they end with the simulation) hold it too
};

}  // namespace hetsim::sim
