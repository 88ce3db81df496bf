// SPDX-License-Identifier: Apache-2.0
// Report writers: stable JSON (keys of DESIGN.md "Outputs") and a table for people.
#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "json_writer.hpp"
#include "units.hpp"

namespace hetsim::models {

double max_memory_ratio(const Report& report) {
  double ratio = 0;
  for (const StageReport& s : report.stages)
    if (s.memory_capacity_bytes > 0) ratio = std::max(ratio, s.memory_bytes / s.memory_capacity_bytes);
  return ratio;
}

double cost_per_million_tokens(double cost_per_hour, double tokens_per_s) {
  return tokens_per_s > 0 ? cost_per_hour / (tokens_per_s * 3600.0) * 1e6 : 0;
}

std::string to_json(const Report& r) {
  JsonOut j;
  j.begin_object();
  write_report_keys(j, r);
  j.end_object();
  return j.str();
}

void write_report_keys(JsonOut& j, const Report& r) {
  // A plan refused before it was priced (degrees that do not divide, more GPUs than the cluster
  // has) has no figures: null, not 0, which is a real value elsewhere (a $0/h plan's cost).
  const bool priced = r.feasible || !r.stages.empty();
  const auto figure = [&](const char* key, double v) {
    j.key(key);
    if (priced) j.value(v);
    else j.null();
  };
  j.key("engine").value(r.engine);
  j.key("feasible").value(r.feasible);
  j.key("infeasible_reason").value(r.infeasible_reason);
  figure("iteration_time_s", r.iteration_time_s);
  figure("samples_per_s", r.samples_per_s);
  figure("tokens_per_s", r.tokens_per_s);
  figure("tflops_per_gpu", r.tflops_per_gpu);
  figure("mfu", r.mfu);
  figure("hfu", r.hfu);
  figure("memory_peak_bytes", std::round(r.memory_peak_bytes));  // whole bytes (a model sum: 8946719129.6)
  figure("cost_per_hour", r.cost_per_hour);
  figure("cost_per_million_tokens", r.cost_per_million_tokens);
  j.key("micro_batch");
  if (r.micro_batch > 0) j.value(r.micro_batch);
  else j.null();
  j.key("breakdown").begin_object();
  figure("compute_s", r.breakdown.compute_s);
  figure("tp_comm_s", r.breakdown.tp_comm_s);
  figure("pp_comm_s", r.breakdown.pp_comm_s);
  figure("dp_comm_s", r.breakdown.dp_comm_s);
  figure("bubble_s", r.breakdown.bubble_s);
  figure("optimizer_s", r.breakdown.optimizer_s);
  j.end_object();
  j.key("stages").begin_array();
  for (const StageReport& s : r.stages) {
    j.begin_object();
    j.key("replica").value(s.replica);
    j.key("stage").value(s.stage);
    j.key("gpu_type").value(s.gpu_type);
    j.key("layers").value(s.layers);
    j.key("tp").value(s.tp);
    j.key("forward_s").value(s.forward_s);
    j.key("backward_s").value(s.backward_s);
    j.key("memory_bytes").value(std::round(s.memory_bytes));
    j.key("memory_capacity_bytes").value(std::round(s.memory_capacity_bytes));
    j.end_object();
  }
  j.end_array();
  // Always present, empty where not computed (an infeasible plan; stage_ops without --ops), so
  // that a script reads the same keys on every path.
  j.key("by_gpu_type").begin_array();
  for (const TypeUtilisation& u : r.by_gpu_type) {
    j.begin_object();
    j.key("gpu_type").value(u.gpu_type);
    j.key("gpus").value(u.gpus);
    j.key("tflops_per_gpu").value(u.tflops_per_gpu);
    j.key("mfu").value(u.mfu);
    j.end_object();
  }
  j.end_array();
  j.key("stage_ops").begin_array();
  for (const StageOps& g : r.stage_ops) {
    j.begin_object();
    j.key("stages").value(g.stages);
    j.key("stage_count").value(g.stage_count);
    j.key("gpu_type").value(g.gpu_type);
    j.key("layers").value(g.layers);
    j.key("tp").value(g.tp);
    j.key("forward_s").value(g.forward_s);
    j.key("backward_s").value(g.backward_s);
    j.key("send_forward_s").value(g.send_forward_s);
    j.key("send_backward_s").value(g.send_backward_s);
    j.key("ops").begin_array();
    for (const OpTime& op : g.ops) {
      j.begin_object();
      j.key("name").value(op.name);
      j.key("kind").value(op.kind);
      j.key("forward_s").value(op.forward_s);
      j.key("recompute_s").value(op.recompute_s);
      j.key("backward_s").value(op.backward_s);
      j.key("flop").value(op.flop);
      j.key("kernels").value(op.kernels);
      j.key("size_bytes").value(op.size_bytes);
      j.key("overlapped").value(op.overlapped);
      j.end_object();
    }
    j.end_array();
    j.end_object();
  }
  j.end_array();
  j.key("extra").begin_object();
  for (const auto& [k, v] : r.extra) j.key(k).value(v);
  j.end_object();
  j.key("notes").begin_array();
  for (const std::string& n : r.notes) j.value(n);
  j.end_array();
}

namespace {

std::string fixed(double v, int digits) {
  // Beyond 1e15 fixed notation only prints hundreds of meaningless digits (a cost per token over
  // a link of 1e-290 GB/s): scientific notation, three significant digits.
  if (std::fabs(v) >= 1e15) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
  }
  const int n = std::snprintf(nullptr, 0, "%.*f", digits, v);
  std::string out(static_cast<std::size_t>(std::max(n, 0)) + 1, '\0');
  std::snprintf(out.data(), out.size(), "%.*f", digits, v);
  out.resize(static_cast<std::size_t>(std::max(n, 0)));
  return out;
}

std::string pad(const std::string& s, std::size_t width, bool right) {
  if (s.size() >= width) return s;
  return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

/// predict --ops: one table per group of stages that run the same ops, longest op first; the rate
/// is the op's FLOPs (compute) or bytes per rank (collectives) over its time.
void stage_ops_table(std::ostringstream& o, const std::vector<StageOps>& groups) {
  for (const StageOps& g : groups) {
    o << "ops per micro-batch of " << g.stages << " (" << g.gpu_type << ", " << g.layers << " layers, tp " << g.tp
      << "): forward " << format_time(g.forward_s) << ", backward " << format_time(g.backward_s);
    if (g.send_forward_s > 0 || g.send_backward_s > 0)
      o << " (pipeline sends " << format_time(g.send_forward_s) << " and " << format_time(g.send_backward_s) << ")";
    o << '\n';
    std::size_t name_width = 22;
    for (const OpTime& op : g.ops) name_width = std::max(name_width, op.name.size() + (op.overlapped ? 4 : 3));
    o << "  " << pad("op", name_width, false) << pad("forward", 11, true) << pad("recompute", 11, true)
      << pad("backward", 11, true) << pad("total", 11, true) << pad("share", 8, true) << pad("rate", 15, true) << '\n';
    const double stage_s = g.forward_s + g.backward_s;
    auto cell = [](double s) { return pad(s > 0 ? format_time(s) : "-", 11, true); };
    for (const OpTime& op : g.ops) {
      const double t = op.total_s();
      std::string rate = "-";
      if (t > 0 && op.flop > 0) rate = format_flops(op.flop / t);
      else if (t > 0 && op.size_bytes > 0) rate = format_bandwidth(op.size_bytes / t);
      o << "  " << pad(op.name + (op.overlapped ? " (~)" : ""), name_width, false) << cell(op.forward_s)
        << cell(op.recompute_s) << cell(op.backward_s) << cell(t)
        << pad(stage_s > 0 ? fixed(100 * t / stage_s, 1) + "%" : "-", 8, true) << pad(rate, 15, true) << '\n';
    }
  }
  if (std::any_of(groups.begin(), groups.end(), [](const StageOps& g) {
        return std::any_of(g.ops.begin(), g.ops.end(), [](const OpTime& op) { return op.overlapped; });
      }))
    o << "  (~) runs beside a GEMM (tp_comm_overlap): the stage's time holds only what the GEMM does not hide of it\n";
}

/// On GPUs of several memory sizes the largest peak may sit on the roomiest part (141 GiB of an
/// MI300X's 192) while another stage is the one near its capacity: both are said, " (mi300x;
/// tightest: h100-sxm5-80gb 76.7 GiB of 80.0 GiB)" (s49 walkthrough: "141 GiB" read as on the
/// 80 GB part). Nothing when one stage is both, or the peak fits every GPU of the plan.
std::string memory_peak_detail(const Report& r) {
  const StageReport* peak = nullptr;
  const StageReport* tightest = nullptr;
  for (const StageReport& s : r.stages) {
    if (s.memory_capacity_bytes <= 0) continue;
    if (!peak || s.memory_bytes > peak->memory_bytes) peak = &s;
    if (!tightest || s.memory_bytes / s.memory_capacity_bytes > tightest->memory_bytes / tightest->memory_capacity_bytes)
      tightest = &s;
  }
  // Said when the peak is more than the tightest stage's GPU holds, so it cannot be read as its.
  if (!peak || !tightest || peak->gpu_type == tightest->gpu_type ||
      peak->memory_bytes <= tightest->memory_capacity_bytes)
    return {};
  return " (" + peak->gpu_type + "; tightest: " + tightest->gpu_type + " " + format_size(tightest->memory_bytes) +
         " of " + format_size(tightest->memory_capacity_bytes) + ")";
}

}  // namespace

std::string to_table(const Report& r) {
  std::ostringstream o;
  o << "engine                   " << r.engine << '\n';
  if (!r.feasible) o << "feasible                 no: " << r.infeasible_reason << '\n';
  // Refused before any figure was computed (a dtype a GPU lacks, a degree that does not divide):
  // the reason alone, not a report of zeros.
  if (!r.feasible && r.iteration_time_s <= 0 && r.stages.empty()) return o.str();
  o << "iteration time           " << format_time(r.iteration_time_s) << '\n';
  o << "samples/s                " << fixed(r.samples_per_s, 2) << '\n';
  o << "tokens/s                 " << fixed(r.tokens_per_s, 0) << '\n';
  // Three significant figures below 1 (CPU devices run at GFLOP/s: "0.0" said nothing).
  char tflops[32];
  if (r.tflops_per_gpu > 0 && r.tflops_per_gpu < 1) std::snprintf(tflops, sizeof tflops, "%.3g", r.tflops_per_gpu);
  o << "TFLOP/s per GPU (model)  " << (r.tflops_per_gpu > 0 && r.tflops_per_gpu < 1 ? std::string(tflops) : fixed(r.tflops_per_gpu, 1))
    << '\n';
  o << "MFU / HFU                " << fixed(100 * r.mfu, 1) << "% / " << fixed(100 * r.hfu, 1) << "%\n";
  if (r.by_gpu_type.size() > 1)  // the means above hide how each type fares against its own peak
    for (const TypeUtilisation& u : r.by_gpu_type)
      o << "  " << pad(u.gpu_type, 22, false) << " " << pad(std::to_string(u.gpus), 5, true) << " GPUs  "
        << pad(fixed(u.tflops_per_gpu, 1), 7, true) << " TFLOP/s  MFU " << fixed(100 * u.mfu, 1) << "%\n";
  o << "micro-batch              " << r.micro_batch << '\n';
  o << "memory peak per GPU      " << format_size(r.memory_peak_bytes) << memory_peak_detail(r) << '\n';
  o << "cost                     $" << fixed(r.cost_per_hour, 2) << "/h, "
    << (std::isfinite(r.cost_per_million_tokens) ? "$" + fixed(r.cost_per_million_tokens, 4) + " per million tokens"
                                                 : std::string("no price per token (it trains none)"))
    << '\n';
  const Breakdown& b = r.breakdown;
  o << "breakdown (critical path)\n";
  const std::pair<const char*, double> parts[] = {{"compute", b.compute_s},   {"tp comm", b.tp_comm_s},
                                                  {"pp comm", b.pp_comm_s},   {"dp comm", b.dp_comm_s},
                                                  {"bubble", b.bubble_s},     {"optimizer", b.optimizer_s}};
  for (const auto& [name, v] : parts) {
    const double share = r.iteration_time_s > 0 ? 100 * v / r.iteration_time_s : 0;
    o << "  " << pad(name, 10, false) << pad(format_time(v), 12, true) << pad(fixed(share, 1) + "%", 8, true) << '\n';
  }
  if (!r.stages.empty()) {
    // One line per stage of a run of consecutive replicas whose stages print alike ("0-127"):
    // a data-parallel plan of identical replicas would otherwise print dp copies of each line
    // (131,072 of them for a million-GPU what-if).
    std::size_t gpu_width = 18;  // as wide as the longest type (a TP group across types: "a+b")
    for (const StageReport& s : r.stages) gpu_width = std::max(gpu_width, s.gpu_type.size() + 2);
    auto stage_columns = [&](const StageReport& s) {
      return pad(std::to_string(s.stage), 6, false) + pad(s.gpu_type, gpu_width, false) +
             pad(std::to_string(s.layers), 7, true) + pad(std::to_string(s.tp), 4, true) +
             pad(format_time(s.forward_s), 12, true) + pad(format_time(s.backward_s), 12, true) +
             pad(format_size(s.memory_bytes), 12, true) + pad(format_size(s.memory_capacity_bytes), 12, true);
    };
    struct ReplicaRun {
      int first = 0, last = 0;
      std::vector<std::string> lines;
    };
    std::vector<ReplicaRun> runs;
    for (std::size_t i = 0; i < r.stages.size();) {
      ReplicaRun next{r.stages[i].replica, r.stages[i].replica, {}};
      for (; i < r.stages.size() && r.stages[i].replica == next.first; ++i) next.lines.push_back(stage_columns(r.stages[i]));
      if (!runs.empty() && runs.back().last + 1 == next.first && runs.back().lines == next.lines) runs.back().last = next.first;
      else runs.push_back(std::move(next));
    }
    auto label = [](const ReplicaRun& run) {
      return run.first == run.last ? std::to_string(run.first) : std::to_string(run.first) + "-" + std::to_string(run.last);
    };
    std::size_t replica_width = 8;
    for (const ReplicaRun& run : runs) replica_width = std::max(replica_width, label(run).size() + 2);
    o << "stages\n  " << pad("replica", replica_width, false) << pad("stage", 6, false) << pad("gpu", gpu_width, false)
      << pad("layers", 7, true) << pad("tp", 4, true) << pad("fwd/mb", 12, true) << pad("bwd/mb", 12, true)
      << pad("memory", 12, true) << pad("capacity", 12, true) << '\n';
    for (const ReplicaRun& run : runs)
      for (const std::string& line : run.lines) o << "  " << pad(label(run), replica_width, false) << line << '\n';
  }
  stage_ops_table(o, r.stage_ops);
  for (const std::string& n : r.notes) o << "note: " << n << '\n';
  return o.str();
}

}  // namespace hetsim::models
