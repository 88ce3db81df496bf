// SPDX-License-Identifier: Apache-2.0
// The schedule actors (one of the few files that call SimGrid): one actor per simulated
// pipeline stage replays its passes exactly as the plan's schedule orders them. The TP ranks
// of a stage run the same ops in lockstep, so one actor drives them all: its executions are
// the ranks' compute, and it launches every rank's flows (TP collectives, PP transfers),
// folding those that share no link (collective_flows.hpp). One DP actor per DP component
// runs the gradient sync, bucket by bucket when the plan overlaps it with backward.
#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include <algorithm>
#include <signal.h>  // sigaction (POSIX)
#include <chrono>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <limits>

#include "grad_sync_actors.hpp"
#include "actor_spawn.hpp"
#include "phase_dataflow.hpp"
#include "sim_runtime.hpp"
#include "pipeline_schedule.hpp"
#include "platform_builder.hpp"
#include "sim_layout.hpp"
#include "sim_progress.hpp"
#include "stage_flows.hpp"
#include "simulator.hpp"
#include "comm_cost.hpp"
#include "step_cost.hpp"
#include "trace_writer.hpp"

namespace sg4 = simgrid::s4u;

namespace hetsim::sim {
namespace {
using models::PassStep;

// One SimGrid Engine per process (TOOLCHAIN.md §4: a second Engine does not reset the clock).
sg4::Engine& make_engine() {
  static bool created = false;
  if (created) throw std::logic_error("hetsim::sim: one simulation per process (SimGrid keeps one Engine)");
  created = true;
  static int argc = 1;
  static char arg0[] = "hetsim";
  static char* argv[] = {arg0, nullptr};
  xbt_log_control_set("root.thres:critical");
  // SimGrid's Engine installs a SIGINT handler that exits with status 1, the status of an
  // infeasible plan, and without a word: Ctrl-C keeps ending the process by the signal (and
  // removing the temporaries, models/atomic_file.cpp), as in every other verb.
  struct sigaction before_engine {};
  sigaction(SIGINT, nullptr, &before_engine);
  static sg4::Engine engine(&argc, argv);
  sigaction(SIGINT, &before_engine, nullptr);
  // CM02 without cross-traffic and without the TCP window bound: a flow alone takes exactly
  // latency + size/bandwidth, the figures both engines start from (DESIGN "Simulator").
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:0");
  // 1 MiB stacks for the actors instead of SimGrid's 8 MiB: a run has ~4 actors a rank, whose code
  // recurses little; at 8 MiB, 128 unfolded ranks reserved 4 GB of address space and a capped
  // process (ulimit -v) aborted in SimGrid with a raw backtrace.
  sg4::Engine::set_config("contexts/stack-size:" + std::to_string(kActorStackKiB));
  return engine;
}


/// The run's inputs, layout and cached flows (StageFlows), and the Runtime the actors drive.
struct World : StageFlows {
  Runtime& rt;
};

std::string pass_label(const PassStep& ps, int chunks) {
  std::string s(ps.forward ? "F" : "B");
  s += std::to_string(ps.micro_batch);
  if (chunks > 1) {
    s += '.';
    s += std::to_string(ps.chunk);
  }
  return s;
}

/// The ZeRO-1/2 weight all-gathers of actor a's stage: each of its sync classes' that has them.
std::vector<SyncClassRt*> gather_classes(const World& w, int a, ComponentRt* comp) {
  std::vector<SyncClassRt*> gathers;
  if (comp == nullptr) return gathers;
  const auto& classes = w.lay.components[w.lay.actors[a].component].classes;
  for (std::size_t k = 0; k < classes.size(); ++k)
    if (!classes[k].param_phases.empty() && classes[k].member_index(a) >= 0) gathers.push_back(&comp->classes[k]);
  return gathers;
}

/// The end of a stage's step, after its last pass: the wait for its DP gradient sync, the
/// tied-embedding all-reduce, the optimizer step and, with ZeRO, the parameter all-gather (unless
/// the step began with it: models::gathers_lead_the_step, StageActor::wait_for_gathers).
void finish_step(World& w, int a, ComponentRt* comp, BucketReleases& buckets, StageTiming& timing) {
  auto& rt = w.rt;
  double t0 = sg4::Engine::get_clock();
  timing.passes_end_s = t0;
  timing.pass_dp_wait_s = timing.dp_wait_s;
  const auto& spec = w.lay.actors[a];
  const auto& sw = w.work.replicas[spec.replica][spec.stage];
  if (comp != nullptr) {
    if (!w.plan.overlap_grad_sync) buckets.release_rest();
    buckets.wait_for_grads();
    timing.dp_wait_s += sg4::Engine::get_clock() - t0;
    rt.span(a, "dp grad sync", "dp", t0, sg4::Engine::get_clock());
  }
  const int e = w.lay.embedding_of_actor[a];
  if (e >= 0) {
    // The first stage runs the embedding all-reduce once the last stage has synced too.
    const double t1 = sg4::Engine::get_clock();
    auto& emb = rt.embeddings_[e];
    if (w.lay.embeddings[e].first_actor == a) {
      emb.last_ready->acquire();
      emb.start_s = sg4::Engine::get_clock();
      rt.run_phases(w.lay.embeddings[e].phases, 1.0);
      emb.done->release();
    } else {
      emb.last_ready->release();
      emb.done->acquire();
    }
    // Only the all-reduce itself is DP time: the last stage's wait for the first stage to drain
    // its pipeline is bubble (the breakdown's rest), as the cost model counts it.
    const double sync_start = std::max(t1, emb.start_s);
    timing.dp_wait_s += sg4::Engine::get_clock() - sync_start;
    rt.span(a, "embedding grad sync", "dp", sync_start, sg4::Engine::get_clock());
  }
  // The optimizer step starts on every GPU at once, after the last gradient sync: Megatron-LM's
  // optimizer.step() all-reduces the gradient norm for clipping (clip_grad, default 1.0; and the
  // fp16 found-inf flag) over the model-parallel group, every pipeline stage, before any update
  // (optimizer.py clip_grad_norm / get_grad_norm_fp32), and the DP sync joins the replicas. So
  // the slowest stage's update ends the step, as the cost model adds it after the sync
  // (models/step_cost.cpp: the maximum over stages), even on a stage that drained early.
  t0 = sg4::Engine::get_clock();
  rt.step_barrier_->wait();
  rt.span(a, "wait for every stage's sync", "dp", t0, sg4::Engine::get_clock());
  t0 = sg4::Engine::get_clock();
  rt.execute(sw.optimizer_s);
  timing.optimizer_s = sw.optimizer_s;
  rt.span(a, "optimizer", "optimizer", t0, sg4::Engine::get_clock());
  // ZeRO 1-2: the weights of every segment the stage holds (each of its sync classes' gathers).
  const std::vector<SyncClassRt*> gathers = gather_classes(w, a, comp);
  if (!gathers.empty() && !models::gathers_lead_the_step(w.plan)) {
    t0 = sg4::Engine::get_clock();
    for (SyncClassRt* g : gathers) g->optimizer_done->release();
    for (SyncClassRt* g : gathers) g->params_done->acquire();
    timing.gather_tail_s = sg4::Engine::get_clock() - t0;
    if (w.plan.overlap_grad_sync) {
      // Megatron-Core's overlap_param_gather: the next step's first forward pass (a micro-batch
      // through every chunk of the stage) runs while the updated weights arrive; what it hides
      // is known once every stage has ended (hide_overlapped_gathers).
      for (const auto& chunk : sw.chunks())
        for (const auto& op : chunk.forward) timing.first_forward_s += op.duration_s;
    }
    timing.dp_wait_s += timing.gather_tail_s;
    rt.span(a, "zero param all-gather", "dp", t0, sg4::Engine::get_clock());
  }
}

/// One simulated pipeline stage (all its TP ranks in lockstep): its passes in the order the
/// plan's schedule gives them, each waiting for its input, gathering its ZeRO-3 weights, running
/// its ops and sending its output; then the end of the step (finish_step).
class StageActor {
 public:
  StageActor(World& w, int a)
      : w(w),
        rt(w.rt),
        a(a),
        r(w.lay.actors[a].replica),
        s(w.lay.actors[a].stage),
        sw(w.work.replicas[r][s]),
        p(static_cast<int>(w.work.replicas[r].size())),
        v(static_cast<int>(sw.chunks().size())),
        micro_batches(w.plan.replicas[r].micro_batches),
        timing{r, s},
        passes(models::stage_passes(w.plan.schedule, p, s, w.plan.replicas[r].micro_batches, v)),
        comp(w.lay.actors[a].component >= 0 ? &rt.components_[w.lay.actors[a].component] : nullptr),
        buckets(w.lay, rt, a, v),
        traffic_hidden(models::pass_traffic_hidden(w.plan)),
        last_backward(static_cast<std::size_t>(v), -1) {
    for (int i = 0; i < static_cast<int>(passes.size()); ++i)
      if (!passes[i].forward) last_backward[static_cast<std::size_t>(passes[i].chunk)] = i;
  }

  void run() {
    // The steady-state step of an overlapped ZeRO-1/2 sync starts with the weights' all-gather of
    // the last update, every member at once (models::gathers_lead_the_step).
    if (models::gathers_lead_the_step(w.plan)) gathers = gather_classes(w, a, comp);
    for (SyncClassRt* g : gathers) g->optimizer_done->release();
    for (int i = 0; i < static_cast<int>(passes.size()); ++i) {
      if (passes[i].forward) forward_pass(passes[i]);
      else backward_pass(passes[i], i == last_backward[static_cast<std::size_t>(passes[i].chunk)]);
    }
    finish_step(w, a, comp, buckets, timing);
    timing.end_s = sg4::Engine::get_clock();
    w.rt.result_.stages[a] = timing;
  }

 private:
  void forward_pass(const PassStep& ps) {
    const auto& chunk = sw.chunks()[ps.chunk];
    const std::string label = rt.trace_ ? pass_label(ps, v) : std::string();
    if (s > 0 || ps.chunk > 0) receive(rt.message(r, s, true, ps.chunk, ps.micro_batch), label);
    const double t0 = start_pass_traffic(w.lay.zero3_forward[a]);
    if (!traffic_hidden) finish_pass_traffic(t0, label);
    const double c0 = sg4::Engine::get_clock();
    run_ops(chunk.forward, false);
    rt.span(a, label, "forward", c0, sg4::Engine::get_clock());
    if (traffic_hidden) finish_pass_traffic(t0, label);
    wait_for_gathers();
    const double t1 = sg4::Engine::get_clock();
    if (s < p - 1) post(rt.message(r, s + 1, true, ps.chunk, ps.micro_batch), transfer(w, r, s, s + 1, true));
    else if (ps.chunk < v - 1) post(rt.message(r, 0, true, ps.chunk + 1, ps.micro_batch), transfer(w, r, s, 0, true));
    rt.span(a, "send " + label, "pp", t1, sg4::Engine::get_clock());
  }

  void backward_pass(const PassStep& ps, bool last) {
    const auto& chunk = sw.chunks()[ps.chunk];
    const std::string label = rt.trace_ ? pass_label(ps, v) : std::string();
    if (s < p - 1 || ps.chunk < v - 1) receive(rt.message(r, s, false, ps.chunk, ps.micro_batch), label);
    // ZeRO-2 reduces the last micro-batch's gradients at the end of the step (models::pass_traffic).
    static const FoldedPhase kNothing{};
    const bool traffic = models::micro_batch_carries_pass_traffic(w.plan.zero, ps.micro_batch, micro_batches);
    const FoldedPhase& pass_traffic = traffic ? w.lay.zero3_backward[a] : kNothing;
    // Waited for, ZeRO-3's traffic (gathers first) comes before the compute, ZeRO-2's (the
    // reduce-scatter of the gradients the pass makes) after it: the trace showed it before.
    const bool traffic_after = !traffic_hidden && w.plan.zero == 2;
    const double t0 = traffic_after ? 0.0 : start_pass_traffic(pass_traffic);
    if (!traffic_hidden && !traffic_after) finish_pass_traffic(t0, label);
    const double c0 = sg4::Engine::get_clock();
    run_ops(chunk.backward, comp != nullptr && w.plan.overlap_grad_sync && last, ps.chunk);
    rt.span(a, label, "backward", c0, sg4::Engine::get_clock());
    if (traffic_after) finish_pass_traffic(start_pass_traffic(pass_traffic), label);
    if (traffic_hidden) finish_pass_traffic(t0, label);
    const double t1 = sg4::Engine::get_clock();
    if (s > 0) post(rt.message(r, s - 1, false, ps.chunk, ps.micro_batch), transfer(w, r, s, s - 1, false));
    else if (ps.chunk > 0) post(rt.message(r, p - 1, false, ps.chunk - 1, ps.micro_batch), transfer(w, r, s, p - 1, false));
    rt.span(a, "send " + label, "pp", t1, sg4::Engine::get_clock());
  }

  /// The first forward pass ends no earlier than the stage's weight all-gathers that began the
  /// step (Megatron-Core overlap_param_gather: each bucket's forward waits for its weights);
  /// what it waits is DP time of the passes.
  void wait_for_gathers() {
    if (gathers.empty()) return;
    const double t0 = sg4::Engine::get_clock();
    for (SyncClassRt* g : gathers) g->params_done->acquire();
    gathers.clear();
    const double waited_s = sg4::Engine::get_clock() - t0;
    timing.dp_wait_s += waited_s;
    timing.lead_gather_wait_s = waited_s;
    rt.span(a, "zero param all-gather", "dp", t0, sg4::Engine::get_clock());
  }

  /// Waits for a pass's input (activation or gradient) from the neighbouring stage.
  void receive(Message& msg, const std::string& label) {
    const double t0 = sg4::Engine::get_clock();
    timing.pp_wait_s += rt.receive(msg);
    rt.span(a, "recv " + label, "pp", t0, sg4::Engine::get_clock());
  }

  /// A pipeline send: waited for (Megatron-LM's p2p), or beside the compute (overlap_p2p_comm).
  void post(Message& msg, const FoldedPhase& traffic) {
    if (w.plan.overlap_p2p_comm) rt.send_beside(msg, traffic);
    else timing.pp_send_s += rt.send(msg, traffic);
  }

  /// Runs a pass's ops; consecutive compute ops are one execution (their durations add).
  /// On a chunk's last backward of an overlapped sync, a bucket's gradients are complete once its
  /// share of the pass's compute time has run (BucketReleases), so the compute is cut there.
  void run_ops(const std::vector<models::Op>& ops, bool release_buckets, int chunk = 0) {
    double total = 0, done = 0, pending = 0, next_ready = 0;
    if (release_buckets)
      for (const auto& op : ops)
        if (op.kind == models::OpKind::kCompute) total += op.duration_s;
    auto flush = [&] {
      while (release_buckets && buckets.next_inside(total, chunk, next_ready)) {
        if (done + pending < next_ready) break;
        const double step = std::max(0.0, next_ready - done);  // 0: a GEMM run beside a collective passed it
        rt.execute(step);
        pending -= step;
        done = std::max(done, next_ready);
        buckets.release_next();
      }
      rt.execute(pending);
      done += pending;
      pending = 0;
    };
    // A GEMM that an overlapped collective runs beside (all-gather before it, reduce-scatter
    // after it) is executed with it; its time still counts towards the buckets' thresholds.
    auto run_pair = [&](const models::Op& gemm, const models::Op& collective) {
      flush();
      timing.compute_s += gemm.duration_s;
      timing.tp_comm_s += rt.run_beside(gemm.duration_s, tp_phases(w, a, collective));
      done += gemm.duration_s;
      flush();  // releases the buckets the GEMM completed (nothing is pending)
    };
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const auto& op = ops[i];
      const bool next_overlapped = i + 1 < ops.size() && ops[i + 1].overlapped;
      if (op.kind == models::OpKind::kCompute && next_overlapped && ops[i + 1].kind == models::OpKind::kTpReduceScatter) {
        run_pair(op, ops[i + 1]);
        ++i;
        continue;
      }
      if (op.overlapped && op.kind == models::OpKind::kTpAllGather && i + 1 < ops.size() &&
          ops[i + 1].kind == models::OpKind::kCompute) {
        run_pair(ops[i + 1], op);
        ++i;
        continue;
      }
      if (op.kind == models::OpKind::kCompute) {
        timing.compute_s += op.duration_s;
        pending += op.duration_s;
        continue;
      }
      flush();
      timing.tp_comm_s += rt.run_phases(tp_phases(w, a, op), 1.0);
    }
    flush();
    if (release_buckets) buckets.release_through(chunk);
  }

  /// ZeRO-2/3: the chunk's collectives run while the pass computes; the pass waits for them at its
  /// end (when not hidden, models::pass_traffic_hidden, the pass takes both in turn: ZeRO-3's
  /// before its compute, ZeRO-2's reduce-scatter after it).
  double start_pass_traffic(const FoldedPhase& traffic) {
    in_flight = &traffic;
    in_flight_flows.clear();
    for (const auto& f : traffic.simulated) in_flight_flows.push_back(rt.start_flow(f));
    return sg4::Engine::get_clock();
  }

  void finish_pass_traffic(double started, const std::string& label) {
    if (in_flight_flows.empty()) return;
    const double t0 = sg4::Engine::get_clock();
    sg4::Comm::wait_all(in_flight_flows);
    double end = started;
    for (std::size_t k = 0; k < in_flight_flows.size(); ++k) {
      end = std::max(end, in_flight_flows[k]->get_finish_time());
      rt.account(in_flight->simulated[k], started, in_flight_flows[k]->get_finish_time());
    }
    for (const auto& f : in_flight->shadows) rt.account(f, started, end);
    // Transfers between an AMD and an NVIDIA GPU go through host memory (topology.hpp): they
    // take what the host links need beyond the network's time, as a collective phase does.
    const double staged_end = end + rt.staging_delay(in_flight->simulated);
    if (staged_end > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(staged_end);
    timing.dp_wait_s += sg4::Engine::get_clock() - t0;
    rt.span(a, (w.plan.zero >= 3 ? "zero3 gather " : "zero2 reduce-scatter ") + label, "dp", t0, sg4::Engine::get_clock());
  }

  World& w;
  Runtime& rt;
  const int a, r, s;
  const models::StageWork& sw;
  std::vector<SyncClassRt*> gathers;  ///< gathers the first forward pass still waits for (wait_for_gathers)
  const int p;  ///< stages of the replica
  const int v;  ///< chunks of the stage
  const int micro_batches;  ///< of the replica
  StageTiming timing;
  const std::vector<PassStep> passes;
  ComponentRt* comp;       ///< the stage's DP component, nullptr without one
  BucketReleases buckets;  ///< its sync classes' buckets, in the order its last backwards fill them
  const bool traffic_hidden;  ///< the passes' ZeRO-2/3 traffic runs beside their compute (models::pass_traffic_hidden)
  /// [chunk]: index of its last backward pass (an overlapped sync releases its buckets there)
  std::vector<int> last_backward;
  const FoldedPhase* in_flight = nullptr;    ///< the ZeRO-2/3 pass traffic in flight
  std::vector<sg4::CommPtr> in_flight_flows;  ///< its flows
};

void stage_actor(World& w, int a) { StageActor(w, a).run(); }

std::vector<bool> nodes_of_flows(const models::Cluster& cluster, const std::vector<Phase>& phases) {
  std::vector<bool> used(cluster.nodes.size(), false);
  for (const auto& ph : phases)
    for (const auto& f : ph) used[cluster.node_of_gpu(f.src)] = used[cluster.node_of_gpu(f.dst)] = true;
  return used;
}

}  // namespace

SimResult simulate_work(const models::Cluster& cluster, const models::Plan& plan, const models::PlanWork& work,
                        const SimOptions& options) {
  const auto wall0 = std::chrono::steady_clock::now();
  SimResult result;
  const Topology topo(cluster);
  SimLayout lay;
  try {
    lay = make_layout(topo, plan, work, options.fold);
  } catch (const std::exception& e) {
    result.ok = false;
    result.error = e.what();
    return result;
  }
  result.replicas_total = static_cast<int>(work.replicas.size());
  result.replicas_simulated = static_cast<int>(lay.replicas.size());
  result.folded = lay.folded;
  result.stages.resize(lay.actors.size());

  make_engine();
  const Platform platform(topo, lay.node_used);
  Runtime rt(topo, platform, result, options.record_trace, options.estimate_s);
  rt.components_.resize(lay.components.size());
  rt.embeddings_.resize(lay.embeddings.size());
  rt.step_barrier_ = sg4::Barrier::create(static_cast<unsigned>(lay.actors.size()));
  for (std::size_t k = 0; k < rt.components_.size(); ++k)
    for (const auto& spec : lay.components[k].classes) {
      auto& c = rt.components_[k].classes.emplace_back();
      c.buckets = sync_buckets(plan, options, spec);
      for (int b = 0; b < c.buckets; ++b) c.bucket_ready.push_back(sg4::Semaphore::create(0));
    }
  World world{{topo, plan, work, lay, options.fold, {}, {}}, rt};
  const RunSize size = size_of_run(world, options);
  result.flows_estimate = size.flows;
  if (options.progress)
    if (const std::string line = size_line(size.flows); !line.empty()) options.progress(line);
  if (options.record_trace) {
    result.trace_events_estimate = trace_event_bound(size.gpu_spans, size.gpu_tracks, size.links);
    if (result.trace_events_estimate > options.max_trace_events) {
      // Not recorded at all: the spans alone would hold gigabytes (6,144 GPUs reached 4 GB).
      result.trace_refused = trace_refusal(result.trace_events_estimate, size.gpu_spans, size.links, options.max_trace_events);
      rt.trace_ = false;
      rt.link_busy_.clear();
    }
  }
  for (int a = 0; a < static_cast<int>(lay.actors.size()); ++a) {
    const auto& spec = lay.actors[a];
    const int leader = work.replicas[spec.replica][spec.stage].gpus.front();
    spawn_actor("stage-r" + std::to_string(spec.replica) + "-s" + std::to_string(spec.stage), platform.host(leader),
                       [&world, a] { stage_actor(world, a); });
  }
  for (int c = 0; c < static_cast<int>(lay.components.size()); ++c) {
    const auto& spec = lay.components[c];
    const auto leader = [&](int actor) {
      return platform.host(work.replicas[lay.actors[actor].replica][lay.actors[actor].stage].gpus.front());
    };
    for (std::size_t k = 0; k < spec.classes.size(); ++k) {
      const std::string name = "dp-" + std::to_string(c) + "-" + std::to_string(k);
      spawn_actor(name, leader(spec.classes[k].actors.front()),
                         [&rt, &spec, &comp = rt.components_[c], k] { sync_class_actor(rt, spec.classes[k], comp.classes[k]); });
      if (!spec.classes[k].param_phases.empty())
        spawn_actor(name + "-params", leader(spec.classes[k].actors.front()),
                           [&rt, &spec, &comp = rt.components_[c], k] { param_gather_actor(rt, spec.classes[k], comp.classes[k]); });
    }
  }
  if (options.progress) {
    // Progress from the clock's advances (SimGrid's on_time_advance signal): the run itself is
    // untouched (running it in chunks with run_until would add solver steps at each chunk's end).
    // The wall clock is read every 64th advance: a few hundred thousand reads in the longest runs.
    const auto report = options.progress;
    const double estimate_s = options.estimate_s;
    sg4::Engine::on_time_advance_cb([report, estimate_s, wall0, pacer = ProgressPacer(), advances = 0L](double) mutable {
      if (++advances % 64 != 0) return;
      const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
      if (pacer.due(wall_s)) report(progress_line(sg4::Engine::get_clock(), estimate_s, wall_s));
    });
  }
  try {
    run_engine();
  } catch (const std::exception& e) {
    result.ok = false;
    result.error = kSimulationFailed + std::string(e.what());
    return result;
  }
  hide_overlapped_gathers(result.stages);
  for (const auto& st : result.stages) result.iteration_time_s = std::max(result.iteration_time_s, st.end_s);

  const double t = result.iteration_time_s;
  std::vector<int> link_track(topo.get_links().size(), -1);
  for (int a = 0; a < static_cast<int>(lay.actors.size()); ++a) {
    const auto& spec = lay.actors[a];
    for (int g : work.replicas[spec.replica][spec.stage].gpus)
      result.tracks.push_back("gpu " + std::to_string(g) + " (r" + std::to_string(spec.replica) + " s" +
                              std::to_string(spec.stage) + ")");
  }
  for (int l = 0; l < static_cast<int>(topo.get_links().size()); ++l) {
    if (rt.link_bytes_[l] <= 0) continue;
    const auto& tl = topo.get_link(l);
    result.links.push_back({tl.name, to_string(tl.kind), rt.link_bytes_[l],
                            t > 0 ? rt.link_bytes_[l] / (tl.bandwidth_Bps * t) : 0.0});
    if (rt.trace_) {
      link_track[l] = static_cast<int>(result.tracks.size());
      result.tracks.push_back(tl.name);
    }
  }
  if (rt.trace_) {
    // Stage spans go on the track of every GPU of the stage.
    std::vector<int> first_track(lay.actors.size());
    int next = 0;
    for (int a = 0; a < static_cast<int>(lay.actors.size()); ++a) {
      first_track[a] = next;
      next += static_cast<int>(work.replicas[lay.actors[a].replica][lay.actors[a].stage].gpus.size());
    }
    for (const auto& sp : rt.spans_) {
      const auto& spec = lay.actors[sp.track];
      const int tp = static_cast<int>(work.replicas[spec.replica][spec.stage].gpus.size());
      for (int k = 0; k < tp; ++k) result.spans.push_back({first_track[sp.track] + k, sp.name, sp.category, sp.start_s, sp.end_s});
    }
    for (int l = 0; l < static_cast<int>(topo.get_links().size()); ++l) {
      if (link_track[l] < 0 || rt.link_busy_[l].empty()) continue;
      result.link_busy.push_back({link_track[l], rt.link_busy_[l].busy_per_bin(result.iteration_time_s, kLinkBins)});
    }
  }
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return result;
}

namespace {

/// The closed-form helpers' set-up: an engine and a platform of the phases' nodes, a runtime, the
/// phases as they are (not folded); `create(rt, phases, host)` creates the actors on the host of
/// the first flow's source, then the simulation runs.
template <class CreateActors>
void run_phases_test(const models::Cluster& cluster, const std::vector<Phase>& phases, SimResult& scratch,
                     CreateActors&& create) {
  const Topology topo(cluster);
  make_engine();
  const Platform platform(topo, nodes_of_flows(cluster, phases));
  Runtime rt(topo, platform, scratch, false);
  std::vector<FoldedPhase> folded;
  for (const auto& ph : phases) folded.push_back({ph, {}});
  int host_gpu = 0;
  for (const auto& ph : phases)
    if (!ph.empty()) {
      host_gpu = ph.front().src;
      break;
    }
  create(rt, folded, platform.host(host_gpu));
  run_engine();
}

}  // namespace

double simulate_phases(const models::Cluster& cluster, const std::vector<Phase>& phases, long long* max_flows_per_actor) {
  SimResult scratch;
  double elapsed = 0;
  run_phases_test(cluster, phases, scratch, [&](Runtime& rt, const std::vector<FoldedPhase>& folded, sg4::Host* host) {
    spawn_actor("phases", host, [&] { elapsed = rt.run_phases(folded, 1.0, false); });
  });
  if (max_flows_per_actor) *max_flows_per_actor = scratch.max_flows_per_actor;
  return elapsed;
}

double simulate_bucketed_ring(const models::Cluster& cluster, const std::vector<Phase>& phases, int buckets) {
  SimResult scratch;
  double elapsed = 0;
  run_phases_test(cluster, phases, scratch, [&](Runtime& rt, const std::vector<FoldedPhase>& folded, sg4::Host* host) {
    if (!rt.one_dataflow_run(folded)) throw std::invalid_argument("simulate_bucketed_ring: not one dataflow run");
    spawn_actor("ring", host, [&rt, &folded, &elapsed, buckets] {
      rt.run_bucketed_dataflow(folded, buckets, [](int) {});  // every bucket ready at once
      elapsed = sg4::Engine::get_clock();
    });
  });
  return elapsed;
}

}  // namespace hetsim::sim
