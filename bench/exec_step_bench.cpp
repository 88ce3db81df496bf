// SPDX-License-Identifier: Apache-2.0
// A training step of a 4-layer, hidden-1024 GPT on one cpu-avx2 rank: achieved model FLOP/s
// against the backend's large-GEMM FLOP/s (target >= 50%), and the runner overhead: step time
// not covered by any timed op (target <= 5%).
#include <benchmark/benchmark.h>

#include <algorithm>

#include "backend.hpp"
#include "runner/run.hpp"

namespace {

using namespace hetsim;

double large_gemm_flops(const std::string& device_type) {
  auto backend = exec::make_backend(device_type);
  const int n = 2048;
  const std::size_t count = static_cast<std::size_t>(n) * n;
  exec::DeviceArray<float> a(*backend, count), b(*backend, count), c(*backend, count);
  backend->fill(a.get(), count, 0.5f);
  backend->fill(b.get(), count, 0.25f);
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const double t0 = exec::Communicator::now_s();
    backend->gemm(exec::Trans::kNo, exec::Trans::kNo, n, n, n, 1.0f, a.get(), n, b.get(), n, 0.0f, c.get(), n);
    const double t = exec::Communicator::now_s() - t0;
    best = std::max(best, 2.0 * n * n * static_cast<double>(n) / t);
  }
  return best;
}

exec::RunSpec step_spec(int steps) {
  exec::RunSpec s;
  models::NodeType t;
  t.name = "cpu-node";
  t.gpu.name = "cpu-avx2";
  t.gpu.vendor = models::Vendor::kCpu;
  t.gpus_per_node = 1;
  s.cluster.node_types.push_back(t);
  s.cluster.zones.push_back({"local", {}, {{0, 1}}});
  s.cluster.finalize();
  auto& m = s.workload.model;
  m.layers = 4;
  m.hidden = 1024;
  m.heads = 16;
  m.kv_heads = 16;
  m.ffn_hidden = 4096;
  m.vocab = 8192;
  m.seq_len = 256;
  m.tied_embeddings = true;
  s.workload.training.dtype = models::Dtype::kFp32;  // the execution engine trains in FP32 (exec/README.md)
  s.workload.training.global_batch = 4;
  s.plan.micro_batch = 2;
  models::Replica r;
  r.micro_batches = 2;
  r.stages.push_back({4, {0}});
  s.plan.replicas.push_back(r);
  s.steps = steps;
  return s;
}

void training_step(benchmark::State& state) {
  const double gemm = large_gemm_flops("cpu-avx2");
  const exec::RunSpec spec = step_spec(static_cast<int>(state.range(0)));
  exec::RunOutcome out;
  for (auto _ : state) out = exec::run_in_process(spec);
  const auto& r = out.report;
  const double model_flops_per_s = spec.workload.model.flops_per_token() * r.tokens_per_s;
  state.counters["step_s"] = r.iteration_time_s;
  state.counters["model_GFLOP/s"] = model_flops_per_s / 1e9;
  state.counters["large_gemm_GFLOP/s"] = gemm / 1e9;
  state.counters["fraction_of_gemm"] = model_flops_per_s / gemm;
  state.counters["runner_overhead"] = r.extra.at("runner_overhead_fraction");
}

}  // namespace

// Arg = steps per run (the first is warm-up and not measured).
BENCHMARK(training_step)->Arg(3)->Iterations(1)->Unit(benchmark::kSecond);

BENCHMARK_MAIN();
