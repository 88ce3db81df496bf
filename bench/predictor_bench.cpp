// SPDX-License-Identifier: Apache-2.0
// Plan evaluations per second of the analytic predictor: GPT-3 175B on 1024 A100s (TP8 PP8
// DP16) and a 3-type heterogeneous plan. Every iteration evaluates a distinct plan (the
// micro-batch size and the layer split change), so no result can be reused between evaluations.
// Also the pipeline makespan alone for GPT-3's stage pattern (equal stages but the first and last).
#include <benchmark/benchmark.h>

#include <vector>

#include "pipeline_time.hpp"
#include "predictor.hpp"

namespace hetsim::models {
namespace {

GpuType gpu(const std::string& name, double peak, double mem, double bw) {
  GpuType g;
  g.name = name;
  g.peak_flops = {{Dtype::kBf16, peak}, {Dtype::kFp16, peak}};
  g.memory_bytes = mem;
  g.memory_bandwidth_Bps = bw;
  g.efficiency = {0.76, 1e9, 0.8, 5e-6};
  return g;
}

NodeType node(const std::string& name, const GpuType& g, double intra, double nic) {
  NodeType nt;
  nt.name = name;
  nt.gpu = g;
  nt.gpus_per_node = 8;
  nt.intra = {IntraFabricKind::kNvswitch, intra, 2e-6};
  nt.nics = {8, nic, 1e-6, NicKind::kInfiniband, true};
  nt.host_link_Bps = 32e9;
  nt.price_per_hour = 32;
  return nt;
}

Cluster cluster(const std::vector<NodeType>& types, const std::vector<int>& counts) {
  Cluster c;
  c.name = "bench";
  c.node_types = types;
  Zone z;
  z.name = "z";
  z.fabric.latency_s = 5e-6;
  for (std::size_t i = 0; i < counts.size(); ++i) z.groups.push_back({static_cast<int>(i), counts[i]});
  c.zones.push_back(z);
  c.finalize();
  return c;
}

Workload gpt3() {
  Workload w;
  w.name = "gpt3-175b";
  w.model.layers = 96;
  w.model.hidden = 12288;
  w.model.heads = 96;
  w.model.kv_heads = 96;
  w.model.ffn_hidden = 4 * 12288;
  w.model.seq_len = 2048;
  w.model.vocab = 51200;
  w.training.global_batch = 1536;
  w.training.dtype = Dtype::kBf16;
  return w;
}

void BM_Gpt3On1024A100(benchmark::State& state) {
  const Cluster c = cluster({node("dgx-a100", gpu("a100", 312e12, 80 * 1073741824.0, 2039e9), 300e9, 25e9)}, {128});
  const Workload w = gpt3();
  // Distinct plans: micro-batch 1, 2, 3, 4, 6, 8 (divisors of the per-replica batch 96).
  std::vector<Plan> plans;
  for (int micro : {1, 2, 3, 4, 6, 8}) {
    UniformPlanOptions o;
    o.micro_batch = micro;
    o.recompute = Recompute::kSelective;
    o.sequence_parallel = true;
    o.zero = 1;
    plans.push_back(std::get<Plan>(make_uniform_plan(c, w, 8, 8, 16, o)));
  }
  std::size_t i = 0;
  for (auto _ : state) {
    Report r = predict(c, w, plans[i++ % plans.size()]);
    benchmark::DoNotOptimize(r.iteration_time_s);
  }
  state.counters["plans_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Gpt3On1024A100);

void BM_ThreeTypeHeterogeneous(benchmark::State& state) {
  // 8 H100 + 8 A100 + 16 V100-class GPUs: 4 replicas of 2 stages with unequal layer splits.
  const Cluster c = cluster({node("h100", gpu("h100", 989e12, 80 * 1073741824.0, 3350e9), 450e9, 50e9),
                             node("a100", gpu("a100", 312e12, 80 * 1073741824.0, 2039e9), 300e9, 25e9),
                             node("v100", gpu("v100", 125e12, 32 * 1073741824.0, 900e9), 150e9, 12.5e9)},
                            {1, 1, 2});
  Workload w = gpt3();
  w.model.layers = 32;
  w.model.hidden = 4096;
  w.model.heads = 32;
  w.model.ffn_hidden = 16384;
  w.training.dtype = Dtype::kFp16;
  w.training.global_batch = 256;
  std::vector<Plan> plans;
  for (int split = 12; split <= 20; ++split) {
    Plan p;
    p.micro_batch = 1;
    p.recompute = Recompute::kFull;
    for (int r = 0; r < 4; ++r) {
      Replica rep;
      rep.micro_batches = r < 2 ? 80 : 48;
      Stage a, b;
      a.layers = split;
      b.layers = 32 - split;
      const int fast_base = r < 2 ? 4 * r : 8 + 4 * (r - 2);  // H100 pairs, then A100 pairs
      a.gpus = {fast_base, fast_base + 1, fast_base + 2, fast_base + 3};
      for (int g = 0; g < 4; ++g) b.gpus.push_back(16 + 4 * r + g);  // V100s
      rep.stages = {a, b};
      p.replicas.push_back(rep);
    }
    plans.push_back(p);
  }
  std::size_t i = 0;
  for (auto _ : state) {
    Report r = predict(c, w, plans[i++ % plans.size()]);
    benchmark::DoNotOptimize(r.iteration_time_s);
  }
  state.counters["plans_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ThreeTypeHeterogeneous);

void BM_PipelineTimeUnequalEnds(benchmark::State& state) {
  // 8 stages, the first with the embedding and the last with the LM head slower than the six
  // equal middle ones (no closed form applies: the exact 1F1B recurrence runs); the micro-batch
  // counts of the GPT-3 benchmark's plans in turn.
  std::vector<StageTimes> stages(8, StageTimes{10e-3, 20e-3});
  stages.front() = {10.4e-3, 20.9e-3};
  stages.back() = {12.5e-3, 24.1e-3};
  const int micro_batches[] = {96, 48, 32, 24, 16, 12};
  std::size_t i = 0;
  for (auto _ : state) {
    const double t = pipeline_time(stages, micro_batches[i++ % 6], 1);
    benchmark::DoNotOptimize(t);
  }
}
BENCHMARK(BM_PipelineTimeUnequalEnds);

void BM_PipelineTimeInterleavedUnequalEnds(benchmark::State& state) {
  // The same stages interleaved (two chunks a stage): the schedule's event graph runs
  // (interleaved_makespan, O(p m v)), at `state.range(0)` micro-batches.
  std::vector<StageTimes> stages(8, StageTimes{10e-3, 20e-3});
  stages.front() = {10.4e-3, 20.9e-3};
  stages.back() = {12.5e-3, 24.1e-3};
  const int m = static_cast<int>(state.range(0));
  for (auto _ : state) {
    const double t = pipeline_time(stages, m, 2, Schedule::kInterleaved);
    benchmark::DoNotOptimize(t);
  }
}
BENCHMARK(BM_PipelineTimeInterleavedUnequalEnds)->Arg(16)->Arg(96)->Arg(1024);

}  // namespace
}  // namespace hetsim::models
