// SPDX-License-Identifier: Apache-2.0
// The pool of helper actors that runs the unfolded dataflow's comms (sim/comm_workers.hpp): each
// comm's end is reported to its caller's inbox with its tag, in the order the comms end and at the
// simulated time they end, whether it is a host-to-host comm or (past kHostToHostInFlight in
// flight) a mailbox comm; a wake_at rings at its time; an idle helper takes the next job. Each run
// is a SimGrid simulation of its own, in a child process (one Engine per process).
#include <gtest/gtest.h>
#include <xbt/log.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "comm_workers.hpp"

namespace sg4 = simgrid::s4u;

namespace hetsim::sim {
namespace {

struct Ended {
  std::size_t tag;
  double at_s;
};

// Two hosts joined by one 1 GB/s link without latency (CM02, as the simulator runs it). Comms
// of 1, 2 and 3 GB started together share the link a third each: the first ends at 3 s, the
// second (1 GB left) at 5 s sharing by halves, the third at 6 s alone; a wake_at(2 s) rings
// first; a fourth comm of 1 GB handed over after them ends at 7 s. `background` host-to-host
// comms from a third host c to b over a link of their own, started first and still in flight
// when the test ends, take nothing from a's link; with kHostToHostInFlight of them, the comms
// timed are mailbox comms.
void run_comms_and_exit(int background) {
  int argc = 1;
  char arg0[] = "comm_workers_test";
  char* argv[] = {arg0, nullptr};
  xbt_log_control_set("root.thres:critical");
  sg4::Engine engine(&argc, argv);
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:0");
  auto* zone = sg4::create_full_zone("zone");
  sg4::Host* a = zone->create_host("a", 1e9)->seal();
  sg4::Host* b = zone->create_host("b", 1e9)->seal();
  sg4::Host* c = zone->create_host("c", 1e9)->seal();
  sg4::Link* link = zone->create_link("link", 1e9)->set_latency(0)->seal();
  sg4::Link* other = zone->create_link("other", 1e9)->set_latency(0)->seal();
  zone->add_route(a->get_netpoint(), b->get_netpoint(), nullptr, nullptr, {sg4::LinkInRoute(link)}, true);
  zone->add_route(c->get_netpoint(), b->get_netpoint(), nullptr, nullptr, {sg4::LinkInRoute(other)}, true);
  zone->seal();

  std::vector<Ended> ended;
  sg4::Actor::create("caller", a, [&] {
    CommWorkers workers;
    CommWorkers::Inbox background_inbox, inbox;
    for (int k = 0; k < background; ++k) workers.send(c, b, 1'000'000'000'000ULL, background_inbox, 0);
    for (std::size_t i = 0; i < 3; ++i) workers.send(a, b, (i + 1) * 1'000'000'000ULL, inbox, 10 + i);
    workers.wake_at(a, 2.0, inbox, 1);
    for (int k = 0; k < 4; ++k) ended.push_back({inbox.next_ended(), sg4::Engine::get_clock()});
    workers.send(a, b, 1'000'000'000ULL, inbox, 99);
    ended.push_back({inbox.next_ended(), sg4::Engine::get_clock()});
  });
  engine.run();

  const std::vector<Ended> expected = {{1, 2.0}, {10, 3.0}, {11, 5.0}, {12, 6.0}, {99, 7.0}};
  bool ok = ended.size() == expected.size();
  for (std::size_t i = 0; ok && i < expected.size(); ++i)
    ok = ended[i].tag == expected[i].tag && std::abs(ended[i].at_s - expected[i].at_s) < 1e-9;
  std::fprintf(stderr, "ended:");
  for (const Ended& e : ended) std::fprintf(stderr, " tag %zu at %.9f s;", e.tag, e.at_s);
  std::fprintf(stderr, "\n");
  std::exit(ok ? 0 : 1);
}

TEST(CommWorkers, ReportsEachHostToHostCommsEndInOrderWithItsTag) {
  EXPECT_EXIT(run_comms_and_exit(0), ::testing::ExitedWithCode(0), "tag 99 at 7.0");
}

TEST(CommWorkers, ReportsEachMailboxCommsEndInOrderWithItsTag) {
  EXPECT_EXIT(run_comms_and_exit(CommWorkers::kHostToHostInFlight), ::testing::ExitedWithCode(0), "tag 99 at 7.0");
}

}  // namespace
}  // namespace hetsim::sim
