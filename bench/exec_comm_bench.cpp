// SPDX-License-Identifier: Apache-2.0
// The in-process transport (threads as ranks, exec/comm/in_process_communicator.hpp): one ring
// all-reduce of 64K floats over N ranks. A ring takes 2(N-1) steps, each a send and a receive
// per rank (Patarasuk & Yuan, JPDC 2009), so with wake-ups per message the time per all-reduce
// grows about as N on a fixed number of cores; it grew as N^2 while every message woke every
// waiting rank (one shared condition variable), which made 128-rank runs of a tiny model on two
// cores take 23 s a step instead of 4 s.
#include <benchmark/benchmark.h>

#include <vector>

#include "comm/in_process_communicator.hpp"

namespace {

using namespace hetsim;

void in_process_all_reduce(benchmark::State& state) {
  const int ranks = static_cast<int>(state.range(0));
  const std::size_t count = 64 * 1024;
  exec::Group all;
  for (int r = 0; r < ranks; ++r) all.ranks.push_back(r);
  for (auto _ : state) {
    exec::InProcessWorld::run(ranks, [&](exec::Communicator& comm) {
      std::vector<float> buf(count, 1.0f);
      comm.all_reduce(buf.data(), count, all);
      benchmark::DoNotOptimize(buf.data());
    });
  }
  state.counters["ranks"] = ranks;
}

}  // namespace

BENCHMARK(in_process_all_reduce)->Arg(8)->Arg(32)->Arg(128)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
