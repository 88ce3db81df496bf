// SPDX-License-Identifier: Apache-2.0
// The simulator as a prediction engine: the Report of a plan from one simulation, in this
// process or in a child process (SimGrid allows one Engine per process, so a verb that
// simulates several plans, such as `validate --engine sim`, runs each in its own child).
#pragma once
#include <limits>
#include <string>

#include "cluster.hpp"
#include "plan.hpp"
#include "report.hpp"
#include "sim_layout.hpp"
#include "simulator.hpp"
#include "workload.hpp"

namespace hetsim::sim {

/// The Report of a simulation: the figures that depend only on the plan (memory, price,
/// FLOPs per step) are the cost model's (models::predict), every figure that depends on time
/// is recomputed from the simulated iteration time, the breakdown is the simulated critical
/// stage's (per-stage pass times stay the cost model's op costs, which both engines share), and `extra` carries simulated-only figures (link utilisation, folding).
models::Report make_sim_report(const models::Report& analytic, const SimResult& sim);

/// Most layers, summed over every replica's stages, whose work the simulator lays out before it
/// can tell how many replicas it must simulate: about 3.7 KB each (measured: 16,384 replicas of a
/// 24-layer model took 1.5 GB), so about 2 GB. A million-GPU what-if (131,072 replicas) ran for a
/// minute towards 11 GB only to be refused on its gradient rings.
inline constexpr long long kMaxLaidOutLayers = 1LL << 19;

/// Why the plan is too large to simulate (above kMaxSimulatedPasses or kMaxLaidOutLayers), or ""
/// when it is not: checked on the plan alone, before any of its work is built.
std::string simulation_size_problem(const models::Plan& plan);

/// Builds the plan's work, simulates it in this process (once per process) and reports.
/// An infeasible plan (e.g. out of memory) is reported as the cost model finds it, unsimulated;
/// so is a plan above kMaxSimulatedPasses or kMaxLaidOutLayers, with that reason.
models::Report simulate_report(const models::Cluster& cluster, const models::Workload& workload,
                               const models::Plan& plan, const SimOptions& options, SimResult* result = nullptr);

/// simulate_report() in a forked child process; the parent gets the Report back through a pipe.
/// A child still running after `wall_limit_s` seconds (infinity: no bound) is killed, and the
/// Report says so: feasible false, infeasible_reason kSimulationFailed + "stopped at the time
/// limit ..." (SimGrid cannot stop its engine from outside; its process can be).
models::Report simulate_report_in_child(const models::Cluster& cluster, const models::Workload& workload,
                                        const models::Plan& plan, const SimOptions& options,
                                        double wall_limit_s = std::numeric_limits<double>::infinity());

/// The Report of a simulation stopped after `wall_s` seconds of wall time by its bound.
models::Report stopped_at_time_limit(double wall_s);

/// Byte encoding of a Report (exact doubles), for the child-to-parent pipe.
std::string encode_report(const models::Report& report);
models::Report decode_report(const std::string& bytes);

}  // namespace hetsim::sim
