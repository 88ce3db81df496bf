// SPDX-License-Identifier: Apache-2.0
// Notes on a Report: what a figure rests on that the user should know before trusting it, in
// words the user can act on (a plan key to set, the figure it would give). predict and simulate
// attach them (Report::notes); they never change a figure.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "cluster.hpp"
#include "plan.hpp"
#include "predictor.hpp"
#include "workload.hpp"

namespace hetsim::models {

/// The notes for `plan` on `cluster`:
/// - GPU types whose matmuls run at the catalog's default GEMM efficiency (0.80 of the dense
///   peak: no `efficiency.gemm` in their entry or a profile). That is an A100-era figure; Hopper
///   reaches 0.63 and the MI300X 0.46 (clusters/catalog): a new part left at it can come out
///   far faster than any training run on it.
/// - data-parallel groups or pipeline sends joining NVIDIA and AMD GPUs: hetsim's execution
///   engine runs them, but NCCL and RCCL build no communicator across vendors, so Megatron-LM,
///   DeepSpeed and PyTorch FSDP cannot run the plan as it is.
/// - a ZeRO-2/3 plan priced with `sharded_collectives: member_nic` (the default, DeepSpeed's
///   gathers at each GPU's share of its node's NICs) on nodes whose GPUs share fewer NICs than
///   they are: the rule was checked on one NIC per GPU only (SC'21 Table 2, plan.hpp
///   ShardedCollectives), and on shared NICs it prices every gather at 1/k of a NIC. The note
///   gives the analytic figure with `node_nics` (PyTorch FSDP's flat gathers) beside it.
/// - settings that change nothing on the plan (sequence parallelism with TP 1 everywhere, the
///   interleaved schedule with interleave 1, ZeRO or overlapped gradient sync with one replica).
std::vector<std::string> plan_notes(const Cluster& cluster, const Workload& workload, const Plan& plan);

/// The notes of plan_notes() on figures the catalog assumes (GPU types at the default GEMM
/// efficiency, or without a FlashAttention figure of their own), over the GPU types of all of
/// `plans`: what `plan` prints beside the plans it lists, whose ranking rests on those figures.
std::vector<std::string> assumed_efficiency_notes(const Cluster& cluster, const Workload& workload,
                                                  const std::vector<const Plan*>& plans);
/// The same notes for GPU types given directly (a sweep's, over its points' clusters).
std::vector<std::string> assumed_efficiency_notes(const std::vector<const GpuType*>& gpus, const Workload& workload);

/// A lockstep_parity_figure this many times the predicted step or more is worth a note; below,
/// a fast NIC or sends that are a sliver of the stages.
inline constexpr double kLockstepNoteRatio = 1.01;
/// lockstep_parity_figure of the plan when it is kLockstepNoteRatio times `predicted_s` or more
/// (what predict's note, plan's note line and sweep's column give); nullopt otherwise.
std::optional<LockstepParityFigure> lockstep_parity_worth_noting(const Cluster& cluster, const Workload& workload,
                                                                 const Plan& plan, double predicted_s);
/// For the analytic engine's Report only: when pipeline sends of boundaries of one parity leave
/// or enter a node through one NIC (lockstep_parity_figure) and would lengthen the step by 1% or
/// more if they coincided in every slot, the nodes and that figure beside `predicted_s`, with
/// `hetsim simulate` to time it. Empty otherwise.
std::string lockstep_parity_note(const Cluster& cluster, const Workload& workload, const Plan& plan,
                                 double predicted_s);

/// Whether two GPUs that exchange data in the plan (a stage's data-parallel copies, consecutive
/// stages of a replica) are of different vendors (NVIDIA, AMD): NCCL and RCCL build no
/// communicator across vendors, so only hetsim's execution engine runs such a plan.
bool joins_vendors(const Cluster& cluster, const Plan& plan);

/// The note of a plan that joins vendors, for the verbs that list plans (plan, sweep).
extern const char* const kJoinsVendorsNote;

/// Whether some node type of the cluster has a spot price (`--spot` changes nothing otherwise).
bool any_spot_price(const Cluster& cluster);
/// What `--spot` means on a cluster without one, said rather than a silent 100% goodput.
extern const char* const kNoSpotPriceNote;

}  // namespace hetsim::models
