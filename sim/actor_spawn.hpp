// SPDX-License-Identifier: Apache-2.0
// Creating the simulator's actors without SimGrid aborting the process. SimGrid maps a stack for
// every actor and, when the mapping fails, ends the process ("Failed to allocate stack", SIGABRT,
// a raw backtrace): under an address-space limit (`ulimit -v`) a 1,024-GPU simulation did so at
// 200 MB. Every actor is created through spawn_actor, which first checks that the limit leaves
// room for the stack; when it does not, the run is stopped and run_engine says why.
#pragma once
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Host.hpp>

#include <cstddef>
#include <functional>
#include <string>

namespace hetsim::sim {

/// Stack of each actor: the `contexts/stack-size` the engine is configured with (actors.cpp).
inline constexpr std::size_t kActorStackKiB = 1024;

/// sg4::Actor::create, once the address-space limit leaves room for the actor's stack and some
/// heap besides. When it does not: before the engine runs, throws std::runtime_error; inside
/// the run, kills every actor (the run ends) and leaves the reason for run_engine. An exception
/// that leaves `code` (std::bad_alloc) ends the run the same way.
simgrid::s4u::ActorPtr spawn_actor(const std::string& name, simgrid::s4u::Host* host, std::function<void()> code);

/// Engine::run(); throws std::runtime_error with the reason when spawn_actor stopped the run.
void run_engine();

}  // namespace hetsim::sim
