// SPDX-License-Identifier: Apache-2.0
// Report of a simulation (see sim_report.hpp).
#include "sim_report.hpp"

#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "predictor.hpp"

namespace hetsim::sim {
namespace {

/// Links listed one by one in Report::extra (the busiest first); the rest only count in the max.
constexpr std::size_t kLinksInReport = 8;

class Writer {
 public:
  void f64(double v) { raw(&v, sizeof v); }
  void i64(long long v) { raw(&v, sizeof v); }
  void str(const std::string& s) {
    i64(static_cast<long long>(s.size()));
    out_ += s;
  }
  std::string take() { return std::move(out_); }

 private:
  void raw(const void* p, std::size_t n) { out_.append(static_cast<const char*>(p), n); }
  std::string out_;
};

class Reader {
 public:
  explicit Reader(const std::string& in) : in_(in) {}
  double f64() {
    double v;
    raw(&v, sizeof v);
    return v;
  }
  long long i64() {
    long long v;
    raw(&v, sizeof v);
    return v;
  }
  std::string str() {
    const auto n = static_cast<std::size_t>(i64());
    if (pos_ + n > in_.size()) throw std::runtime_error("truncated report from the simulator process");
    std::string s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }

 private:
  void raw(void* p, std::size_t n) {
    if (pos_ + n > in_.size()) throw std::runtime_error("truncated report from the simulator process");
    std::memcpy(p, in_.data() + pos_, n);
    pos_ += n;
  }
  const std::string& in_;
  std::size_t pos_ = 0;
};

}  // namespace

std::string encode_report(const models::Report& r) {
  Writer w;
  w.str(r.engine);
  w.i64(r.feasible);
  w.str(r.infeasible_reason);
  for (double v : {r.iteration_time_s, r.samples_per_s, r.tokens_per_s, r.tflops_per_gpu, r.mfu, r.hfu,
                   r.memory_peak_bytes, r.cost_per_hour, r.cost_per_million_tokens})
    w.f64(v);
  w.i64(r.micro_batch);
  const auto& b = r.breakdown;
  for (double v : {b.compute_s, b.tp_comm_s, b.pp_comm_s, b.dp_comm_s, b.bubble_s, b.optimizer_s}) w.f64(v);
  w.i64(static_cast<long long>(r.stages.size()));
  for (const auto& s : r.stages) {
    w.i64(s.replica);
    w.i64(s.stage);
    w.str(s.gpu_type);
    w.i64(s.layers);
    w.i64(s.tp);
    for (double v : {s.forward_s, s.backward_s, s.memory_bytes, s.memory_capacity_bytes}) w.f64(v);
  }
  w.i64(static_cast<long long>(r.extra.size()));
  for (const auto& [k, v] : r.extra) {
    w.str(k);
    w.f64(v);
  }
  return w.take();
}

models::Report decode_report(const std::string& bytes) {
  Reader rd(bytes);
  models::Report r;
  r.engine = rd.str();
  r.feasible = rd.i64() != 0;
  r.infeasible_reason = rd.str();
  for (double* v : {&r.iteration_time_s, &r.samples_per_s, &r.tokens_per_s, &r.tflops_per_gpu, &r.mfu, &r.hfu,
                    &r.memory_peak_bytes, &r.cost_per_hour, &r.cost_per_million_tokens})
    *v = rd.f64();
  r.micro_batch = static_cast<int>(rd.i64());
  auto& b = r.breakdown;
  for (double* v : {&b.compute_s, &b.tp_comm_s, &b.pp_comm_s, &b.dp_comm_s, &b.bubble_s, &b.optimizer_s}) *v = rd.f64();
  const long long n = rd.i64();
  for (long long i = 0; i < n; ++i) {
    models::StageReport s;
    s.replica = static_cast<int>(rd.i64());
    s.stage = static_cast<int>(rd.i64());
    s.gpu_type = rd.str();
    s.layers = static_cast<int>(rd.i64());
    s.tp = static_cast<int>(rd.i64());
    for (double* v : {&s.forward_s, &s.backward_s, &s.memory_bytes, &s.memory_capacity_bytes}) *v = rd.f64();
    r.stages.push_back(std::move(s));
  }
  const long long ne = rd.i64();
  for (long long i = 0; i < ne; ++i) {
    std::string k = rd.str();
    r.extra[k] = rd.f64();
  }
  return r;
}

models::Report make_sim_report(const models::Report& analytic, const SimResult& sim) {
  models::Report r = analytic;
  r.engine = "sim";
  if (!sim.ok) {
    r.feasible = false;
    r.infeasible_reason = sim.error;
    r.notes.push_back("not simulated (the simulator refused or failed): the figures are the analytic model's");
    return r;
  }
  const double t = sim.iteration_time_s;
  // Throughput figures are work / time: rescale the cost model's by its time over the simulated one.
  const double scale = analytic.iteration_time_s > 0 && t > 0 ? analytic.iteration_time_s / t : 0;
  r.iteration_time_s = t;
  r.samples_per_s = analytic.samples_per_s * scale;
  r.tokens_per_s = analytic.tokens_per_s * scale;
  r.tflops_per_gpu = analytic.tflops_per_gpu * scale;
  r.mfu = analytic.mfu * scale;
  r.hfu = analytic.hfu * scale;
  // The nodes' price per hour stands; the egress the traffic between zones pays is per step, so
  // per hour it follows the simulated step time.
  if (const auto it = analytic.extra.find("egress_dollars_per_step"); it != analytic.extra.end() && t > 0 &&
                                                                      analytic.iteration_time_s > 0)
    r.cost_per_hour = analytic.cost_per_hour + it->second * 3600.0 * (1.0 / t - 1.0 / analytic.iteration_time_s);
  r.cost_per_million_tokens = models::cost_per_million_tokens(r.cost_per_hour, r.tokens_per_s);

  // Breakdown along the critical path, as the cost model's (predictor.cpp fill_report): the
  // replica whose passes end last sets the pipeline's time P, and of its stages the busiest sets
  // its pace (compute, TP, sends; bubble is the rest of P). Every stage then waits for the last
  // gradient sync before its optimizer step (actors.cpp finish_step), so the step ends the
  // slowest stage's update after it: optimizer is that update, dp comm the rest of the step
  // beyond P (the exposed syncs and ZeRO gathers). The stage that *ends* last is no guide: a DP
  // sync that waits for a slower replica ends every member at once (their wait is bubble, not
  // compute), and an overlapped weight gather moves the ends by each stage's own first forward.
  double passes_end = 0, optimizer_s = 0;
  for (const auto& st : sim.stages) {
    passes_end = std::max(passes_end, st.passes_end_s);
    optimizer_s = std::max(optimizer_s, st.optimizer_s);
  }
  std::vector<bool> pace_replica;
  for (const auto& st : sim.stages) {
    if (st.replica >= static_cast<int>(pace_replica.size())) pace_replica.resize(st.replica + 1, false);
    if (st.passes_end_s >= passes_end * (1 - 1e-9)) pace_replica[st.replica] = true;
  }
  const auto busy = [](const StageTiming& st) { return st.compute_s + st.tp_comm_s + st.pp_send_s + st.pass_dp_wait_s; };
  const StageTiming* crit = nullptr;
  for (const auto& st : sim.stages)
    if (pace_replica[st.replica] && (!crit || busy(st) > busy(*crit))) crit = &st;
  if (crit) {
    auto& b = r.breakdown;
    b.compute_s = crit->compute_s;
    b.tp_comm_s = crit->tp_comm_s;
    b.pp_comm_s = crit->pp_send_s;
    b.optimizer_s = optimizer_s;
    // A step that starts with the weights' gather (models::gathers_lead_the_step): the replica
    // starts late by its stages' longest wait for it, which its later stages wait as pipeline
    // input; it is DP time, as the cost model counts it (grad_sync_exposed_s).
    double replica_gather_wait_s = 0;
    for (const auto& st : sim.stages)
      if (st.replica == crit->replica) replica_gather_wait_s = std::max(replica_gather_wait_s, st.lead_gather_wait_s);
    b.dp_comm_s = crit->pass_dp_wait_s + std::max(0.0, replica_gather_wait_s - crit->lead_gather_wait_s) +
                  std::max(0.0, t - passes_end - optimizer_s);
    b.bubble_s = std::max(0.0, t - (b.compute_s + b.tp_comm_s + b.pp_comm_s + b.dp_comm_s + b.optimizer_s));
    if (b.bubble_s < 1e-9 * t) b.bubble_s = 0;  // rounding of the sum ("bubble 0.03 ns" on a plan without one)
    if (b.dp_comm_s < 1e-9 * t) b.dp_comm_s = 0;
  }
  r.extra.clear();
  if (const auto it = analytic.extra.find("egress_dollars_per_step"); it != analytic.extra.end()) r.extra.insert(*it);
  r.extra["sim_replicas_total"] = sim.replicas_total;
  r.extra["sim_replicas_simulated"] = sim.replicas_simulated;
  r.extra["sim_folded"] = sim.folded ? 1 : 0;
  r.extra["sim_flows"] = static_cast<double>(sim.flows);
  r.extra["sim_executions"] = static_cast<double>(sim.executions);
  std::vector<const LinkStat*> links;
  for (const auto& l : sim.links) links.push_back(&l);
  std::stable_sort(links.begin(), links.end(), [](const LinkStat* a, const LinkStat* b) {
    return a->utilisation != b->utilisation ? a->utilisation > b->utilisation : a->name < b->name;
  });
  r.extra["link_utilisation_max"] = links.empty() ? 0.0 : links.front()->utilisation;
  for (const auto* l : links) {
    const std::string key = "link_utilisation_max:" + l->kind;
    if (!r.extra.count(key)) r.extra[key] = l->utilisation;  // sorted: the first is the kind's max
  }
  for (std::size_t i = 0; i < links.size() && i < kLinksInReport; ++i)
    r.extra["link_utilisation:" + links[i]->name] = links[i]->utilisation;
  return r;
}

std::string simulation_size_problem(const models::Plan& plan) {
  long long passes = 0, laid_out_layers = 0;
  for (const models::Replica& rep : plan.replicas) {
    passes = std::max(passes, simulated_passes(plan, rep));
    for (const models::Stage& st : rep.stages) laid_out_layers += st.layers;
  }
  const std::string answer = "; `hetsim predict` answers without simulating)";
  if (passes > kMaxSimulatedPasses)
    return "a replica has " + std::to_string(passes) +
           " micro-batch passes (micro-batches x stages x interleave) to simulate, above the simulator's bound of " +
           std::to_string(kMaxSimulatedPasses) + " (expected fewer, larger micro-batches" + answer;
  if (laid_out_layers > kMaxLaidOutLayers)
    return std::to_string(plan.replicas.size()) + " replicas hold " + std::to_string(laid_out_layers) +
           " layers between them, whose work the simulator lays out before it runs, above its bound of " +
           std::to_string(kMaxLaidOutLayers) + " (about 2 GB) (expected fewer replicas" + answer;
  return "";
}

models::Report simulate_report(const models::Cluster& cluster, const models::Workload& workload, const models::Plan& plan,
                               const SimOptions& options, SimResult* result) {
  models::Report analytic = models::predict(cluster, workload, plan);
  // Nothing is simulated: the figures are the cost model's, and the Report says so.
  const auto not_simulated = [&](const std::string& why) {
    analytic.engine = "sim";
    analytic.notes.push_back("not simulated (" + why + "): the figures are the analytic model's");
    return analytic;
  };
  if (!analytic.feasible) return not_simulated("the plan is infeasible");
  if (const std::string problem = simulation_size_problem(plan); !problem.empty()) {
    analytic.feasible = false;
    analytic.infeasible_reason = problem;
    return not_simulated("too large for the simulator");
  }
  const models::PlanWork work = models::build_plan_work(cluster, workload, plan);
  SimOptions opt = options;
  if (opt.estimate_s <= 0) opt.estimate_s = analytic.iteration_time_s;  // what progress lines measure against
  SimResult sim = simulate_work(cluster, plan, work, opt);
  models::Report r = make_sim_report(analytic, sim);
  if (result) *result = std::move(sim);
  return r;
}

models::Report stopped_at_time_limit(double wall_s) {
  models::Report r;
  r.engine = "sim";
  r.feasible = false;
  char buf[96];
  std::snprintf(buf, sizeof buf, "stopped at the time limit, after %.3g s of wall time", wall_s);
  r.infeasible_reason = kSimulationFailed + std::string(buf);
  return r;
}

namespace {

/// Reads the child's whole output from `fd` until it closes it, or until `deadline`: false then.
bool read_until(int fd, std::chrono::steady_clock::time_point deadline, bool bounded, std::string& bytes) {
  char buf[65536];
  for (;;) {
    int timeout_ms = -1;
    if (bounded) {
      const double left_s = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
      if (left_s <= 0) return false;
      timeout_ms = static_cast<int>(std::min(std::ceil(left_s * 1000), 3.6e6));  // re-armed each hour
    }
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) throw std::runtime_error(std::string("simulator: poll: ") + std::strerror(errno));
    if (ready == 0) continue;  // the loop checks the deadline
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    bytes.append(buf, static_cast<std::size_t>(n));
  }
}

}  // namespace

models::Report simulate_report_in_child(const models::Cluster& cluster, const models::Workload& workload,
                                        const models::Plan& plan, const SimOptions& options, double wall_limit_s) {
  const auto start = std::chrono::steady_clock::now();
  // Past ~30 years the deadline would overflow the clock; such a bound is none.
  const bool bounded = wall_limit_s < 1e9;
  const auto deadline =
      bounded ? start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(std::max(0.0, wall_limit_s)))
              : start;
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error(std::string("simulator: pipe: ") + std::strerror(errno));
  std::fflush(nullptr);  // the child must not write the parent's buffered output again
  const pid_t parent = ::getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("simulator: fork: ") + std::strerror(errno));
  if (pid == 0) {
    // Ends with its parent: a killed `sweep --refine` left its simulation running to the end.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) std::_Exit(1);  // the parent died before the line above
    close(fds[0]);
    std::string bytes;
    int code = 0;
    try {
      bytes = encode_report(simulate_report(cluster, workload, plan, options));
    } catch (const std::exception& e) {
      models::Report failed;
      failed.engine = "sim";
      failed.feasible = false;
      failed.infeasible_reason = kSimulationFailed + std::string(e.what());
      bytes = encode_report(failed);
      code = 1;
    }
    std::size_t off = 0;
    while (off < bytes.size()) {
      const ssize_t n = write(fds[1], bytes.data() + off, bytes.size() - off);
      if (n <= 0) _exit(3);
      off += static_cast<std::size_t>(n);
    }
    close(fds[1]);
    _exit(code);
  }
  close(fds[1]);
  std::string bytes;
  bool finished = false;
  try {
    finished = read_until(fds[0], deadline, bounded, bytes);
  } catch (...) {
    ::kill(pid, SIGKILL);
    close(fds[0]);
    waitpid(pid, nullptr, 0);
    throw;
  }
  close(fds[0]);
  if (!finished) ::kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!finished) return stopped_at_time_limit(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  if (bytes.empty()) throw std::runtime_error("the simulator process ended without a report");
  return decode_report(bytes);
}

void hide_overlapped_gathers(std::vector<StageTiming>& stages) {
  double passes_end_s = 0;
  std::vector<double> replica_end_s;
  for (const auto& st : stages) {
    passes_end_s = std::max(passes_end_s, st.passes_end_s);
    if (st.replica >= static_cast<int>(replica_end_s.size())) replica_end_s.resize(st.replica + 1, 0.0);
    replica_end_s[st.replica] = std::max(replica_end_s[st.replica], st.passes_end_s);
  }
  for (auto& st : stages) {
    if (st.first_forward_s <= 0) continue;  // not overlapped, or no gather
    const double slack_s = passes_end_s - replica_end_s[st.replica];
    st.hidden_tail_s = std::min(st.gather_tail_s, st.first_forward_s + slack_s);
    st.end_s -= st.hidden_tail_s;
    st.dp_wait_s -= st.hidden_tail_s;
  }
}

}  // namespace hetsim::sim
