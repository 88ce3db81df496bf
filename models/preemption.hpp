// SPDX-License-Identifier: Apache-2.0
// Spot preemptions: what they leave of a plan's throughput. A synchronous training job stops
// whenever any of its nodes is reclaimed; it resumes from its last checkpoint once a replacement
// runs. It pays for writing a checkpoint (C seconds) after every tau seconds of work, for the work
// since the last checkpoint when a preemption comes, and for the restart (R: a replacement node,
// the relaunch, reading the checkpoint back). With preemptions a Poisson process of rate L (one
// per node, summed over the plan's spot nodes; M = 1/L), a segment of tau seconds of work takes
// on average M e^(R/M) (e^((tau + C)/M) - 1) seconds, preemptions during a checkpoint or a restart
// included (Daly, "A higher order estimate of the optimum checkpoint interval for restart dumps",
// FGCS 22(3), 2006, eq. 13), least near Daly's interval
//   tau = sqrt(2CM) [1 + sqrt(C/(2M))/3 + C/(18M)] - C   (C < 2M; else tau = M; eq. 37),
// which refines Young's first-order sqrt(2CM) ("A first order approximation to the optimum
// checkpoint interval", CACM 17(9), 1974; its waste C/tau + L(tau/2 + R) is the same expansion
// to first order). Checkpoints come between optimizer steps: tau is at least one step. The
// goodput fraction is tau over that expected time.
#pragma once
#include <limits>
#include "cluster.hpp"
#include "plan.hpp"
#include "report.hpp"
#include "workload.hpp"

namespace hetsim::models {

/// What preemptions cost one plan priced at spot prices.
struct SpotOutlook {
  double preemptions_per_hour = 0;   ///< L: summed over the plan's nodes that run at a spot price
  double checkpoint_bytes = 0;       ///< weights + optimizer states of the whole model
  double checkpoint_s = 0;           ///< C: all of the plan's nodes write their part at once
  double restart_s = 0;              ///< R: the preempted node types' restart (rate-weighted) + reading C back
  double checkpoint_interval_s = 0;  ///< Daly's tau (at least one step); 0 when nothing is preempted
  double goodput_fraction = 1;       ///< work per unit of time, in [0, 1]
};

/// What the outputs print for a figure that means nothing when no node is preempted (the
/// checkpoint interval and the restart): NaN, JSON null, not 0, which read as "checkpoint
/// continuously" and hid the configured restart time (s65 JSON hunt).
inline double if_preempted(const SpotOutlook& s, double v) {
  return s.preemptions_per_hour > 0 ? v : std::numeric_limits<double>::quiet_NaN();
}

/// Bytes of a checkpoint that resumes training exactly: the weights in the training dtype and the
/// optimizer's states (fp32 master copy and Adam's two moments in mixed precision: 2 + 12 bytes a
/// parameter; Rajbhandari et al., "ZeRO", SC'20, section 3.1). Gradients are not saved.
double checkpoint_bytes(const Workload& workload);

/// A node type's bandwidth to the storage that outlives a preemption (a spot node's local disks
/// go with it): its `checkpoint_bandwidth`, else one of its NICs' line rate.
double checkpoint_bandwidth_Bps(const NodeType& type);

/// The outlook of `plan` when its nodes run at their spot prices (`spot`); without spot pricing,
/// or on nodes without a spot price, nothing is preempted and goodput_fraction is 1. Every node
/// of the plan writes (and reads back) an even share of the checkpoint, as distributed
/// checkpointing spreads the save over the data-parallel ranks (Megatron-Core
/// dist_checkpointing's fully parallel save; PyTorch Distributed Checkpoint).
/// Checkpoints are taken between optimizer steps: the interval is at least `step_s` (the plan's
/// iteration time; 0 when unknown).
SpotOutlook spot_outlook(const Cluster& cluster, const Workload& workload, const Plan& plan, bool spot,
                         double step_s = 0);

/// Nodes of one node type (index into Cluster::node_types) that a plan uses.
struct NodesOfType {
  int node_type = 0;
  int count = 0;
};
/// The same for a plan given by the nodes it uses (the planner's search, before a plan exists).
SpotOutlook spot_outlook(const Cluster& cluster, const Workload& workload, const std::vector<NodesOfType>& nodes,
                         bool spot, double step_s = 0);

/// Below this goodput fraction (a millionth of the time left to train) a plan at spot is
/// infeasible: its cost per token is astronomical and its figures mean nothing.
inline constexpr double kMinGoodputFraction = 1e-6;
/// Whether an outlook's preemptions leave a plan (next to) no time to train.
inline bool leaves_no_goodput(const SpotOutlook& s) {
  return s.preemptions_per_hour > 0 && s.goodput_fraction < kMinGoodputFraction;
}
/// Why such a plan is infeasible, with the outlook's figures.
std::string no_goodput_reason(const SpotOutlook& outlook);

/// `report` (the plan's, priced on demand) repriced at spot: its nodes at their spot prices (the
/// egress between zones as it was), its dollars per million tokens per token of goodput
/// (infinite when preemptions leave none; infeasible below kMinGoodputFraction). Returns the outlook it used (the planner's --spot,
/// predict --spot).
SpotOutlook price_at_spot(const Cluster& cluster, const Workload& workload, const Plan& plan, Report& report);

/// The goodput fraction for preemption rate `per_s`, checkpoint time `checkpoint_s` and restart
/// `restart_s` (the formula above) at Daly's interval, or `min_interval_s` when that is longer,
/// with the interval used into `interval_s` (0 when per_s is 0).
double goodput_fraction(double per_s, double checkpoint_s, double restart_s, double* interval_s = nullptr,
                        double min_interval_s = 0);

}  // namespace hetsim::models
