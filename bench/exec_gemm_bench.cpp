// SPDX-License-Identifier: Apache-2.0
// GEMM throughput of every CPU device type on the same square fp32 GEMMs (the two types must
// differ by >= 1.5x), through the Backend interface the runner uses. Counter: GFLOP/s = 2mnk/t.
#include <benchmark/benchmark.h>

#include <vector>

#include "backend.hpp"

namespace {

void gemm_bench(benchmark::State& state, const std::string& device_type) {
  const int n = static_cast<int>(state.range(0));
  auto backend = hetsim::exec::make_backend(device_type);
  const std::size_t count = static_cast<std::size_t>(n) * n;
  // Two sets of operands, rotated, so that consecutive GEMMs do not reuse a warm C (CUTLASS habit).
  std::vector<hetsim::exec::DeviceArray<float>> a, b, c;
  for (int i = 0; i < 2; ++i) {
    a.emplace_back(*backend, count);
    b.emplace_back(*backend, count);
    c.emplace_back(*backend, count);
    backend->fill(a.back().get(), count, 0.5f);
    backend->fill(b.back().get(), count, 0.25f);
    backend->fill(c.back().get(), count, 0.0f);
  }
  backend->gemm(hetsim::exec::Trans::kNo, hetsim::exec::Trans::kNo, n, n, n, 1.0f, a[0].get(), n, b[0].get(), n, 0.0f,
                c[0].get(), n);  // warm-up, outside the timed loop
  int i = 0;
  for (auto _ : state) {
    backend->gemm(hetsim::exec::Trans::kNo, hetsim::exec::Trans::kNo, n, n, n, 1.0f, a[i].get(), n, b[i].get(), n, 0.0f,
                  c[i].get(), n);
    backend->synchronize();
    i ^= 1;
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * n * n * n * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK_CAPTURE(gemm_bench, cpu_avx2, std::string("cpu-avx2"))->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(gemm_bench, cpu_scalar, std::string("cpu-scalar"))->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
