// SPDX-License-Identifier: Apache-2.0
// Small hand-built clusters and plan work for the simulator tests, with round figures
// so that the expected times can be written in closed form.
#pragma once
#include <functional>
#include <vector>

#include "cluster.hpp"
#include "plan.hpp"
#include "plan_work.hpp"

namespace hetsim::sim::testing {

struct NodeSpec {
  int gpus = 8;
  double intra_Bps = 300e9;     ///< per GPU, one direction
  double intra_latency_s = 2e-6;
  int nics = 8;
  double nic_Bps = 25e9;
  double nic_latency_s = 2e-6;
  double host_Bps = 32e9;
};

/// One zone of `nodes` nodes on a fat tree (latency fabric_latency_s).
models::Cluster one_zone(int nodes, const NodeSpec& spec, double fabric_latency_s = 5e-6, double oversubscription = 1);
/// Two zones of `nodes_per_zone` nodes each, joined by one WAN link.
models::Cluster two_zones(int nodes_per_zone, const NodeSpec& spec, double wan_Bps, double wan_latency_s);
/// Derives nodes and gpus in rank order (what Cluster::finalize does).
void derive(models::Cluster& cluster);

/// A uniform pipeline: every stage's forward is one op of t_f, backward one of t_b, with
/// `tp_ar_bytes` > 0 adding one TP all-reduce of that size to each; `act_bytes` sent between stages;
/// GPUs in Megatron order (TP fastest, then DP, then PP).
struct UniformWork {
  int tp = 1, pp = 1, dp = 1, micro_batches = 1, interleave = 1;
  double t_f = 1e-3, t_b = 2e-3, act_bytes = 0, tp_ar_bytes = 0, grad_bytes = 0, optimizer_s = 0;
  models::Schedule schedule = models::Schedule::k1f1b;
  bool overlap = false;
  int grad_buckets = 4;  ///< of an overlapped sync (DpGroup::buckets)
  int zero = 0;  ///< ZeRO stage; >= 1 gathers grad_bytes of weights after the step
};
void make_uniform(const UniformWork& u, models::Plan& plan, models::PlanWork& work);

/// Runs `fn` in a child process (SimGrid: one Engine per process) and returns what it returned.
double in_child(const std::function<double()>& fn);

}  // namespace hetsim::sim::testing
