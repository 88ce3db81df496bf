// SPDX-License-Identifier: Apache-2.0
// A pool of helper actors that start and wait for comms (see comm_workers.hpp).
#include "comm_workers.hpp"

#include <deque>
#include <exception>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace hetsim::sim {

struct CommWorkers::Shared {
  struct Job {
    sg4::CommPtr comm;
    std::size_t tag = 0;
    bool started = false;
  };
  std::vector<Job> jobs;                // per helper: the comm handed to it
  std::vector<sg4::SemaphorePtr> go;    // per helper: released when its job (or the stop) is there
  std::vector<std::size_t> idle;        // helpers without a job
  std::deque<std::size_t> ended;        // tags of the comms that ended, not yet taken
  sg4::SemaphorePtr ended_count = sg4::Semaphore::create(0);
  bool stopping = false;
};

CommWorkers::CommWorkers(sg4::Host* host) : shared_(std::make_shared<Shared>()), host_(host) {}

CommWorkers::~CommWorkers() {
  shared_->stopping = true;
  // Unwinding a killed actor (SimGrid's ForcefulKillException) allows no simcall: the helpers,
  // daemons, end with the simulation then.
  if (std::uncaught_exceptions() > 0) return;
  for (const sg4::SemaphorePtr& go : shared_->go) go->release();
}

void CommWorkers::run(sg4::CommPtr comm, std::size_t tag, bool started) {
  Shared& s = *shared_;
  if (s.idle.empty()) {
    const std::size_t w = s.jobs.size();
    s.jobs.emplace_back();
    s.go.push_back(sg4::Semaphore::create(0));
    s.idle.push_back(w);
    const std::shared_ptr<Shared> shared = shared_;
    sg4::Actor::create("comm-worker-" + std::to_string(w), host_, [shared, w] {
      for (;;) {
        shared->go[w]->acquire();
        if (shared->stopping) return;
        Shared::Job job = std::move(shared->jobs[w]);
        shared->jobs[w] = Shared::Job{};
        if (!job.started) job.comm->start();
        job.comm->wait();
        shared->ended.push_back(job.tag);
        shared->idle.push_back(w);
        shared->ended_count->release();
      }
    })->daemonize();
  }
  const std::size_t w = s.idle.back();
  s.idle.pop_back();
  s.jobs[w] = Shared::Job{std::move(comm), tag, started};
  s.go[w]->release();
}

std::optional<std::size_t> CommWorkers::next_ended(double timeout_s) {
  Shared& s = *shared_;
  if (timeout_s < 0)
    s.ended_count->acquire();
  else if (s.ended_count->acquire_timeout(timeout_s))
    return std::nullopt;  // timed out
  const std::size_t tag = s.ended.front();
  s.ended.pop_front();
  return tag;
}

}  // namespace hetsim::sim
