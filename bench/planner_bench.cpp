// SPDX-License-Identifier: Apache-2.0
// Planner search time on three-type clusters (targets: <= 2 s for 64 GPUs, <= 30 s for 1024
// GPUs with GPT-3 175B; AMP reports ~500 s for its search, Sailor seconds), on one thread
// (/1) and on one per CPU the process may use (/0), side by side.
//   ./build/bench/hetsim_planner_bench --benchmark_filter=Plan
#include <benchmark/benchmark.h>

#include <string>

#include "catalog.hpp"
#include "input_loader.hpp"
#include "planner.hpp"

namespace hetsim::models {
namespace {

/// One zone of H100, A100 and MI300X nodes (8 GPUs each), about a third of `gpus` each.
/// Node figures as in clusters/h100-mi300x.yaml and clusters/mixed-a100-v100.yaml.
Cluster three_type_cluster(int gpus) {
  const int nodes = gpus / 8;
  const int third = nodes / 3;
  const std::string yaml = R"(kind: cluster
name: bench-three-types-)" + std::to_string(gpus) + R"(
node_types:
  hgx-h100:
    gpu: h100-sxm5-80gb
    gpus: 8
    intra: {kind: nvswitch, bandwidth: "450GB/s", latency: "2us"}
    nics: {count: 8, bandwidth: "400Gbps", kind: infiniband, latency: "2us", gpu_direct: true}
    host_link: "63GB/s"
    price: "$23.92/h"
  dgx-a100:
    gpu: a100-sxm4-80gb
    gpus: 8
    intra: {kind: nvswitch, bandwidth: "300GB/s", latency: "2us"}
    nics: {count: 8, bandwidth: "200Gbps", kind: infiniband, latency: "2us", gpu_direct: true}
    host_link: "32GB/s"
    price: "$14.32/h"
  mi300x-platform:
    gpu: mi300x
    gpus: 8
    intra: {kind: xgmi, bandwidth: "448GB/s", latency: "2us"}
    nics: {count: 8, bandwidth: "400Gbps", kind: roce, latency: "2us", gpu_direct: true}
    host_link: "63GB/s"
    price: "$14.80/h"
zones:
  - name: dc
    fabric: {kind: fat-tree, oversubscription: 1, latency: "5us"}
    nodes:
      - {type: hgx-h100, count: )" + std::to_string(third) + R"(}
      - {type: dgx-a100, count: )" + std::to_string(third) + R"(}
      - {type: mi300x-platform, count: )" + std::to_string(nodes - 2 * third) + R"(}
)";
  return parse_cluster(yaml, Catalog::builtin(), "bench-three-types");
}

void run(benchmark::State& state, int gpus, const char* workload) {
  const Cluster cluster = three_type_cluster(gpus);
  const Workload w = load_workload(std::string(HETSIM_SOURCE_DIR) + "/workloads/" + workload + ".yaml");
  PlannerOptions options;
  options.threads = static_cast<int>(state.range(0));
  PlannerResult r;
  for (auto _ : state) {
    r = plan_training(cluster, w, options);
    benchmark::DoNotOptimize(r.top.data());
  }
  state.counters["gpus"] = cluster.gpu_count();
  state.counters["plans_evaluated"] = static_cast<double>(r.plans_evaluated);
  state.counters["plans_pruned"] = static_cast<double>(r.plans_pruned);
  state.counters["search_time_s"] = r.search_time_s;
  state.counters["best_tokens_per_s"] = r.top.empty() ? 0.0 : r.top.front().report.tokens_per_s;
  if (r.top.empty()) state.SkipWithError(("no plan: " + r.reason).c_str());
}

void BM_Plan64Gpus3Types_Gpt3_6_7b(benchmark::State& s) { run(s, 64, "gpt3-6.7b"); }
void BM_Plan64Gpus3Types_Gpt3_175b(benchmark::State& s) { run(s, 64, "gpt3-175b"); }
void BM_Plan1024Gpus3Types_Gpt3_175b(benchmark::State& s) { run(s, 1024, "gpt3-175b"); }

BENCHMARK(BM_Plan64Gpus3Types_Gpt3_6_7b)->Unit(benchmark::kMillisecond)->Iterations(3)->Arg(1)->Arg(0)->UseRealTime();
BENCHMARK(BM_Plan64Gpus3Types_Gpt3_175b)->Unit(benchmark::kMillisecond)->Iterations(3)->Arg(1)->Arg(0)->UseRealTime();
BENCHMARK(BM_Plan1024Gpus3Types_Gpt3_175b)->Unit(benchmark::kSecond)->Iterations(1)->Arg(1)->Arg(0)->UseRealTime();

}  // namespace
}  // namespace hetsim::models

BENCHMARK_MAIN();
