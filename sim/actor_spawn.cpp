// SPDX-License-Identifier: Apache-2.0
// Actors created within the address-space limit (actor_spawn.hpp).
#include "actor_spawn.hpp"

#include <simgrid/s4u/Engine.hpp>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <new>
#include <stdexcept>
#include <utility>

namespace sg4 = simgrid::s4u;

namespace hetsim::sim {

namespace {

/// Heap the run may still need beside a new stack (its flows, comms and records grow as it goes).
constexpr std::size_t kHeadroomBytes = std::size_t{8} << 20;

/// Why spawn_actor stopped the current run ("" while it has not). One run per process at a time.
std::string& stop_reason() {
  static std::string reason;
  return reason;
}

/// The process's address-space limit in bytes (RLIMIT_AS), 0 when there is none.
std::size_t address_space_limit() {
  static const std::size_t limit = [] {
    rlimit l{};
    if (getrlimit(RLIMIT_AS, &l) != 0 || l.rlim_cur == RLIM_INFINITY) return std::size_t{0};
    return static_cast<std::size_t>(l.rlim_cur);
  }();
  return limit;
}

/// The process's mapped address space now (/proc/self/statm's first figure, in pages).
std::size_t mapped_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0;
  statm >> pages;
  return pages * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

std::string mib(std::size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

/// Ends the run from inside an actor: every other actor is killed (SimGrid unwinds their stacks),
/// then this one; run_engine reports the first reason.
[[noreturn]] void stop_run(std::string why) {
  if (stop_reason().empty()) stop_reason() = std::move(why);
  sg4::Actor::kill_all();
  sg4::this_actor::exit();
}

}  // namespace

sg4::ActorPtr spawn_actor(const std::string& name, sg4::Host* host, std::function<void()> code) {
  if (const std::size_t limit = address_space_limit(); limit > 0) {
    const std::size_t used = mapped_bytes();
    const std::size_t needed = (kActorStackKiB << 10) + kHeadroomBytes;
    if (used + needed > limit) {
      std::string why = "the simulation needs more address space than the process may map: " + mib(used) +
                        " mapped, " + mib(limit) + " allowed (ulimit -v), and each of its actors takes a " +
                        mib(kActorStackKiB << 10) +
                        " stack (expected a larger limit, or a smaller plan; `hetsim predict` answers without "
                        "simulating)";
      if (sg4::Actor::is_maestro()) throw std::runtime_error(why);  // before the run: nothing to stop
      stop_run(std::move(why));
    }
  }
  // An exception leaving an actor ends the process in SimGrid ("Uncaught exception", SIGABRT):
  // std::bad_alloc near the address-space limit did. It stops the run instead. SimGrid's own
  // unwinding of a killed actor (ForcefulKillException, no std::exception) passes through.
  return sg4::Actor::create(name, host, [code = std::move(code)] {
    try {
      code();
    } catch (const std::bad_alloc&) {
      stop_run("out of memory: the simulation needs more memory than the process could get (a larger `ulimit -v`, "
               "or a smaller plan; `hetsim predict` answers without simulating)");
    } catch (const std::exception& e) {
      stop_run(e.what());
    }
  });
}

void run_engine() {
  stop_reason().clear();
  sg4::Engine::get_instance()->run();
  if (!stop_reason().empty()) throw std::runtime_error(std::exchange(stop_reason(), std::string()));
}

}  // namespace hetsim::sim
