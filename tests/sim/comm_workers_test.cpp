// SPDX-License-Identifier: Apache-2.0
// The pool of helper actors that starts and waits for the unfolded dataflow's comms
// (sim/comm_workers.hpp): each comm's end is reported with its tag, in the order the comms end
// and at the simulated time they end; a wait with a timeout gives nothing when none ends within
// it; an idle helper takes the next comm. Each run is a SimGrid simulation of its own, in a
// child process (one Engine per process).
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
// second (1 GB left) at 5 s sharing by halves, the third at 6 s alone; a fourth of 1 GB handed
// over after them ends at 7 s. The first wait, 2 s long, ends with none.
void run_comms_and_exit() {
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
  sg4::Link* link = zone->create_link("link", 1e9)->set_latency(0)->seal();
  zone->add_route(a->get_netpoint(), b->get_netpoint(), nullptr, nullptr, {sg4::LinkInRoute(link)}, true);
  zone->seal();

  std::vector<Ended> ended;
  bool first_wait_timed_out = false;
  sg4::Actor::create("caller", a, [&] {
    CommWorkers workers(a);
    for (std::size_t i = 0; i < 3; ++i)
      workers.run(sg4::Comm::sendto_init(a, b)->set_payload_size((i + 1) * 1'000'000'000ULL), 10 + i);
    first_wait_timed_out = !workers.next_ended(2.0).has_value();
    for (int k = 0; k < 3; ++k) ended.push_back({*workers.next_ended(-1), sg4::Engine::get_clock()});
    workers.run(sg4::Comm::sendto_init(a, b)->set_payload_size(1'000'000'000ULL), 99);
    ended.push_back({*workers.next_ended(-1), sg4::Engine::get_clock()});
  });
  engine.run();

  const std::vector<Ended> expected = {{10, 3.0}, {11, 5.0}, {12, 6.0}, {99, 7.0}};
  bool ok = first_wait_timed_out && ended.size() == expected.size();
  for (std::size_t i = 0; ok && i < expected.size(); ++i)
    ok = ended[i].tag == expected[i].tag && std::abs(ended[i].at_s - expected[i].at_s) < 1e-9;
  std::fprintf(stderr, "first wait timed out: %d; ended:", first_wait_timed_out ? 1 : 0);
  for (const Ended& e : ended) std::fprintf(stderr, " tag %zu at %.9f s;", e.tag, e.at_s);
  std::fprintf(stderr, "\n");
  std::exit(ok ? 0 : 1);
}

TEST(CommWorkers, ReportsEachCommsEndInOrderWithItsTag) {
  EXPECT_EXIT(run_comms_and_exit(), ::testing::ExitedWithCode(0), "first wait timed out: 1");
}

}  // namespace
}  // namespace hetsim::sim
