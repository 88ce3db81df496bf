// SPDX-License-Identifier: Apache-2.0
// Egress: what a step's traffic between zones costs on links with an egress price.
#pragma once
#include <vector>

#include "cluster.hpp"
#include "plan.hpp"
#include "workload.hpp"

namespace hetsim::models {

/// What one step of `plan` moves between zones, by the bytes that leave each zone, priced at
/// its link's `egress` (cloud providers bill inter-region traffic per GB leaving a region; AWS
/// "EC2 data transfer" pricing, Google Cloud "network pricing"): dollars per step. Counted:
/// - pipeline sends over a boundary between zones: each micro-batch's activation forward and
///   its gradient back, once per chunk that crosses (the full boundary tensor, summed over the
///   TP ranks' slices);
/// - data-parallel gradient sync: a ring of n members moves 2(n-1)/n of the gradients over each
///   hop (Patarasuk & Yuan, JPDC 2009); every hop between zones pays it; ZeRO-1 reduce-scatters
///   the gradients and all-gathers the weights ((n-1)/n each); ZeRO-2 reduce-scatters the
///   gradients every micro-batch and gathers the weights once, ZeRO-3 moves both every
///   micro-batch (pass_traffic);
/// - tied embeddings whose first and last stage lie in different zones: a two-member ring.
/// The ring is an estimate for tree and hierarchical algorithms too (they move no fewer bytes
/// across a cut between two zones). `stage_params` is per TP rank, [replica * max_pp + stage];
/// `boundary_bytes` the activation one micro-batch sends over a pipeline boundary.
double egress_dollars_per_step(const Cluster& cluster, const Workload& workload, const Plan& plan,
                               const std::vector<double>& stage_params, int max_pp, double boundary_bytes);

}  // namespace hetsim::models
