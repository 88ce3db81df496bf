// SPDX-License-Identifier: Apache-2.0
// Simulator scale benchmark: wall time, peak memory and simulated events per second of one
// training step. One case per process (SimGrid keeps one Engine per process):
//   sim_scale_bench gpt3-175b-1024     GPT-3 175B on 1024 A100s, TP8 PP8 DP16, 1F1B, 96 micro-batches
//   sim_scale_bench llama3-405b-16384  Llama-3-405B on 16,384 H100s, TP8 PP16 DP128, 16 micro-batches
// Targets (the issue): <= 10 s and <= 60 s wall, < 4 GiB. Run by bench/sim_bench.sh.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <variant>

#include "catalog.hpp"
#include "input_loader.hpp"
#include "predictor.hpp"
#include "simulator.hpp"

namespace {

using namespace hetsim;

struct Case {
  const char* name;
  const char* cluster_yaml;
  const char* workload_yaml;
  int tp, pp, dp, micro;
  models::Recompute recompute;
  bool sequence_parallel;
  int zero;
};

// DGX A100 (NVIDIA DGX A100 datasheet 2020: 8x A100 80GB, NVSwitch 600 GB/s bidirectional per
// GPU, 8x 200 Gb/s HDR InfiniBand) and DGX H100 (DGX H100 datasheet 2022: NVLink 900 GB/s
// bidirectional per GPU, 8x 400 Gb/s NDR), on non-blocking fat trees.
constexpr const char* kA100Cluster = R"(kind: cluster
name: selene-like-1024
node_types:
  dgx-a100:
    gpu: a100-sxm4-80gb
    gpus: 8
    intra: {kind: nvswitch, bandwidth: "300GB/s", latency: "2us"}
    nics: {count: 8, bandwidth: "200Gbps", kind: infiniband, latency: "2us"}
zones:
  - name: dc
    fabric: {kind: fat-tree, oversubscription: 1, latency: "5us"}
    nodes: [{type: dgx-a100, count: 128}]
)";
constexpr const char* kH100Cluster = R"(kind: cluster
name: h100-16k
node_types:
  dgx-h100:
    gpu: h100-sxm5-80gb
    gpus: 8
    intra: {kind: nvswitch, bandwidth: "450GB/s", latency: "2us"}
    nics: {count: 8, bandwidth: "400Gbps", kind: infiniband, latency: "2us"}
zones:
  - name: dc
    fabric: {kind: fat-tree, oversubscription: 1, latency: "5us"}
    nodes: [{type: dgx-h100, count: 2048}]
)";
// GPT-3 175B (Brown et al. 2020, Table 2.1); batch 1536 as in Narayanan et al. SC'21 Table 1.
constexpr const char* kGpt3 = R"(kind: workload
name: gpt3-175b
model: {layers: 96, hidden: 12288, heads: 96, vocab: 51200, seq_len: 2048}
training: {global_batch: 1536, dtype: fp16}
)";
// Llama 3 405B (Llama Team, "The Llama 3 Herd of Models", 2024, Table 3): 126 layers, model
// dim 16384, FFN 53248, 128 heads, 8 KV heads, vocab 128000 (+256 reserved), seq 8192;
// 2048 sequences of 8192 tokens = 16M tokens per step (their §3.4.1).
constexpr const char* kLlama3 = R"(kind: workload
name: llama3-405b
model: {layers: 126, hidden: 16384, heads: 128, kv_heads: 8, ffn_hidden: 53248, vocab: 128256, seq_len: 8192,
        activation: swiglu, tied_embeddings: false}
training: {global_batch: 2048, dtype: bf16, flash_attention: true}
)";

const Case kCases[] = {
    {"gpt3-175b-1024", kA100Cluster, kGpt3, 8, 8, 16, 1, models::Recompute::kFull, false, 0},
    {"llama3-405b-16384", kH100Cluster, kLlama3, 8, 16, 128, 1, models::Recompute::kFull, true, 1},
};

}  // namespace

int main(int argc, char** argv) {
  const bool no_fold = argc == 3 && std::strcmp(argv[2], "--no-fold") == 0;
  if (argc != 2 && !no_fold) {
    std::fprintf(stderr, "usage: %s gpt3-175b-1024 | llama3-405b-16384 [--no-fold]\n", argv[0]);
    return 2;
  }
  const Case* c = nullptr;
  for (const auto& k : kCases)
    if (std::strcmp(argv[1], k.name) == 0) c = &k;
  if (!c) {
    std::fprintf(stderr, "unknown case '%s'\n", argv[1]);
    return 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const auto cluster = models::parse_cluster(c->cluster_yaml, models::Catalog::builtin(), c->name);
  const auto workload = models::parse_workload(c->workload_yaml, c->name);
  models::UniformPlanOptions u;
  u.micro_batch = c->micro;
  u.recompute = c->recompute;
  u.sequence_parallel = c->sequence_parallel;
  u.zero = c->zero;
  auto made = models::make_uniform_plan(cluster, workload, c->tp, c->pp, c->dp, u);
  if (auto* bad = std::get_if<models::Infeasible>(&made)) {
    std::fprintf(stderr, "plan: %s\n", bad->reason.c_str());
    return 1;
  }
  const auto& plan = std::get<models::Plan>(made);
  const models::Report analytic = models::predict(cluster, workload, plan);
  if (!analytic.feasible) std::fprintf(stderr, "note: the cost model finds the plan infeasible: %s\n", analytic.infeasible_reason.c_str());
  const models::PlanWork work = models::build_plan_work(cluster, workload, plan);
  const auto t1 = std::chrono::steady_clock::now();
  sim::SimOptions options;
  options.fold = !no_fold;
  const sim::SimResult r = sim::simulate_work(cluster, plan, work, options);
  const auto t2 = std::chrono::steady_clock::now();
  if (!r.ok) {
    std::fprintf(stderr, "simulation failed: %s\n", r.error.c_str());
    return 1;
  }
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const double sim_s = std::chrono::duration<double>(t2 - t1).count();
  const double total_s = std::chrono::duration<double>(t2 - t0).count();
  const long long events = r.flows + r.executions;
  std::printf(
      "{\"case\": \"%s%s\", \"gpus\": %d, \"micro_batches\": %d, \"feasible\": %s, \"analytic_s\": %.6f, \"simulated_s\": %.6f,\n"
      " \"replicas_simulated\": %d, \"replicas_total\": %d, \"flows\": %lld, \"executions\": %lld,\n"
      " \"wall_total_s\": %.3f, \"wall_simulation_s\": %.3f, \"events_per_s\": %.0f, \"peak_rss_mib\": %.1f}\n",
      c->name, no_fold ? " (unfolded)" : "", plan.gpu_count(), plan.replicas[0].micro_batches, analytic.feasible ? "true" : "false",
      analytic.iteration_time_s, r.iteration_time_s, r.replicas_simulated, r.replicas_total, r.flows, r.executions,
      total_s, sim_s, events / sim_s, ru.ru_maxrss / 1024.0);
  return 0;
}
