// SPDX-License-Identifier: Apache-2.0
// A pool of helper actors that run comms (see comm_workers.hpp).
#include "comm_workers.hpp"
#include "actor_spawn.hpp"

#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace hetsim::sim {

struct CommWorkers::Inbox::State {
  std::deque<std::size_t> ended;  // tags not yet taken
  sg4::SemaphorePtr count = sg4::Semaphore::create(0);

  void push(std::size_t tag) {
    ended.push_back(tag);
    count->release();
  }
};

CommWorkers::Inbox::Inbox() : state_(std::make_shared<State>()) {}

std::size_t CommWorkers::Inbox::next_ended() {
  state_->count->acquire();
  const std::size_t tag = state_->ended.front();
  state_->ended.pop_front();
  return tag;
}

void CommWorkers::Inbox::report(std::size_t tag) const { state_->push(tag); }

namespace {

enum class JobKind { kSendTo, kSend, kReceive, kSleep };

// What a helper is handed: send `bytes` to host `to` (a host-to-host comm) or through its own
// mailbox, receive from `source`, or sleep until `at_s`; all but a receive report to `inbox`.
struct Job {
  JobKind kind = JobKind::kSleep;
  sg4::Host* to = nullptr;
  double at_s = 0;
  std::uint64_t bytes = 0;
  sg4::Mailbox* source = nullptr;
  std::shared_ptr<sg4::CommPtr> cell;  // a send's comm, once started
  std::shared_ptr<CommWorkers::Inbox::State> inbox;
  std::size_t tag = 0;
};

}  // namespace

struct CommWorkers::Pool {
  struct Worker {
    sg4::Host* host;
    sg4::Mailbox* mailbox;  // where its sends go (one at a time: the receiver's match is its own)
    sg4::SemaphorePtr go;   // released when its job is there
    Job job;
  };
  std::deque<Worker> workers;  // a deque: a helper's Worker stays where it is as the pool grows
  std::unordered_map<sg4::Host*, std::vector<std::size_t>> idle;  // by host
  int host_to_host_in_flight = 0;

  /// An idle helper on `host` (a new one when there is none) given `job`; returns its index.
  std::size_t hand(sg4::Host* host, Job job, const std::shared_ptr<Pool>& self);
};

namespace {

int send_token = 0;  // what a send carries: nothing (the simulated size is its bytes)

}  // namespace

std::size_t CommWorkers::Pool::hand(sg4::Host* host, Job job, const std::shared_ptr<Pool>& self) {
  // Every SimGrid call below lets the other actors run, which may hand jobs too: nothing read
  // from the pool is kept across one.
  std::vector<std::size_t>& on_host = idle[host];
  if (!on_host.empty()) {
    const std::size_t w = on_host.back();
    on_host.pop_back();
    workers[w].job = std::move(job);
    workers[w].go->release();
    return w;
  }
  static int created = 0;  // names the helpers' mailboxes (one simulation per process)
  const std::string name = "comm-worker-" + std::to_string(created++);
  const std::size_t w = workers.size();
  workers.push_back(Worker{host, nullptr, nullptr, std::move(job)});  // not idle: its job is there
  workers[w].mailbox = sg4::Mailbox::by_name(name);
  workers[w].go = sg4::Semaphore::create(1);
  spawn_actor(name, host, [self, w] {
    Worker& me = self->workers[w];
    for (;;) {
      me.go->acquire();
      Job j = std::move(me.job);
      me.job = Job{};
      if (j.kind == JobKind::kSendTo) {
        *j.cell = sg4::Comm::sendto_async(me.host, j.to, j.bytes);
        (*j.cell)->wait();
      } else if (j.kind == JobKind::kSend) {
        *j.cell = me.mailbox->put_async(&send_token, j.bytes);
        (*j.cell)->wait();
      } else if (j.kind == JobKind::kReceive) {
        j.source->get<int>();
      } else {
        sg4::this_actor::sleep_until(j.at_s);
      }
      if (j.kind == JobKind::kSendTo) --self->host_to_host_in_flight;
      self->idle[me.host].push_back(w);
      if (j.inbox) j.inbox->push(j.tag);
    }
  })->daemonize();
  return w;
}

CommWorkers::CommWorkers() : pool_(std::make_shared<Pool>()) {}

std::shared_ptr<const sg4::CommPtr> CommWorkers::send(sg4::Host* from, sg4::Host* to, std::uint64_t bytes,
                                                      const Inbox& inbox, std::size_t tag) {
  auto cell = std::make_shared<sg4::CommPtr>();
  Job send;
  send.to = to;
  send.bytes = bytes;
  send.cell = cell;
  send.inbox = inbox.state_;
  send.tag = tag;
  if (pool_->host_to_host_in_flight < kHostToHostInFlight) {
    send.kind = JobKind::kSendTo;
    ++pool_->host_to_host_in_flight;
    pool_->hand(from, std::move(send), pool_);
    return cell;
  }
  send.kind = JobKind::kSend;
  const std::size_t sender = pool_->hand(from, std::move(send), pool_);
  Job receive;
  receive.kind = JobKind::kReceive;
  receive.source = pool_->workers[sender].mailbox;
  pool_->hand(to, std::move(receive), pool_);
  return cell;
}

void CommWorkers::wake_at(sg4::Host* host, double at_s, const Inbox& inbox, std::size_t tag) {
  Job j;
  j.kind = JobKind::kSleep;
  j.at_s = at_s;
  j.inbox = inbox.state_;
  j.tag = tag;
  pool_->hand(host, std::move(j), pool_);
}

}  // namespace hetsim::sim
