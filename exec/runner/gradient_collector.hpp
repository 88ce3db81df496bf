// SPDX-License-Identifier: Apache-2.0
// Reassembles the single-device view of a distributed model on rank 0: every rank's TP shards
// are placed into the full tensors, and data-parallel replicas are summed.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "runner/rank_layout.hpp"
#include "workload.hpp"

namespace hetsim::exec {

using NamedTensors = std::map<std::string, std::vector<float>>;

/// Which replicas collect_named reads: all of them summed (gradients), or one (its parameters).
inline constexpr int kSumReplicas = -1;

/// `flat` is this rank's flat buffer (gradients captured before the DP sync, or parameters).
/// replica: kSumReplicas adds the replicas' tensors; otherwise that replica's are taken.
/// A collective call; returns the full named tensors on rank 0 and an empty map elsewhere.
NamedTensors collect_named(const RankLayout& layout, const models::ModelSpec& model, const std::vector<float>& flat,
                           int replica, Communicator& comm);

}  // namespace hetsim::exec
