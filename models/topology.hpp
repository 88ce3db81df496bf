// SPDX-License-Identifier: Apache-2.0
// Link figures between GPUs of a Cluster: the single source of bandwidth/latency that the
// analytic predictor and the SimGrid simulator both use.
//
//   GPU ──intra fabric (NVSwitch/NVLink/xGMI/PCIe)── GPU           same node
//   GPU ──NIC share── zone fabric (fat-tree) ──NIC share── GPU      same zone, other node
//   GPU ──NIC share── zone ──WAN link── zone ──NIC share── GPU      other zone
//   AMD <-> NVIDIA without cross_vendor_rdma: device->host (PCIe), network, host->device
#pragma once
#include <algorithm>
#include <vector>

#include "cluster.hpp"

namespace hetsim::models {

/// Achieved fraction of a link's nominal one-direction bandwidth for collective/p2p traffic.
/// NCCL on DGX-A100 NVSwitch reaches ~230-240 GB/s bus bandwidth of 300 GB/s at 1 GB messages
/// but ~190-200 GB/s at the 16-128 MB of TP messages (nccl-tests all_reduce_perf, NVIDIA DGX
/// A100 user guide / NCCL performance blog 2021) -> 0.65 (fitted on the A100 suites, docs/cost_model.md);
/// xGMI 0.70 (48 of 64 GB/s of an MI300X link usable, AMD ROCm blog 2025; a little less assumed for RCCL);
/// InfiniBand HDR 200 Gb/s reaches ~23.5 GB/s of 25 (nccl-tests multi-node) -> 0.94;
/// PCIe between GPUs of one node -> 0.40: a ring or send/recv between PCIe GPUs crosses the CPU's
/// root complex (NCCL uses peer-to-peer only below a PCIe switch on Intel hosts, NCCL
/// src/graph/paths.cc ncclTopoCheckP2p, and GeForce boards have none), so it reaches far less
/// than a host copy: 6.08 and 6.14 of 15.75 GB/s per GPU on 8x Titan RTX and 8x RTX 2080 Ti
/// PCIe 3.0 nodes (Sailor's intra_node_bandwidths.json, 4 concurrent senders: 0.39), ~10 of
/// 31.5 GB/s one way between A40s without P2P on PCIe 4.0 (p2pBandwidthLatencyTest,
/// NVIDIA/nccl-tests issue #74: 0.32);
/// TCP Ethernet / WAN ~ 0.85 of line rate (iperf3 typical).
double link_efficiency(IntraFabricKind kind);
/// PCIe between GPUs with peer access (CUDA P2P below a PCIe switch, NCCL's P2P transport): ~0.70
/// of the line rate, 20-25 of 31.5 GB/s one way between A40s with P2P on PCIe 4.0
/// (p2pBandwidthLatencyTest, 40-50 GB/s bidirectional, NVIDIA/nccl-tests issue #74) against
/// ~10 GB/s without it (link_efficiency(kPcie)).
inline constexpr double kPciePeerToPeerEfficiency = 0.70;
/// link_efficiency of the fabric, with PCIe peer-to-peer taken into account.
double link_efficiency(const IntraFabric& intra);
double link_efficiency(NicKind kind);
inline constexpr double kWanLinkEfficiency = 0.85;
/// GPU<->host copies over the host link (PCIe): staging of cross-vendor paths and of NICs without
/// GPUDirect. PCIe 4.0 x16 ~ 26 of 32 GB/s (cudaMemcpy bandwidthTest) -> 0.80.
inline constexpr double kHostLinkEfficiency = 0.80;
/// The bandwidth a link achieves: a datasheet figure times link_efficiency, a measured one as is.
double achieved_bandwidth_Bps(const IntraFabric& intra);
/// Per NIC, one direction.
double achieved_bandwidth_Bps(const NicSpec& nics);
/// Per-GPU intra-node bandwidth of a collective or send among `members` GPUs of one node of
/// type nt: achieved_bandwidth_Bps(nt.intra), of which a mesh (IntraFabric::mesh) gives
/// (members - 1) / (gpus_per_node - 1), a point-to-point send (members 2) one link's share.
double intra_bandwidth_Bps(const NodeType& nt, int members);
/// Setup of one host-staging copy (cudaMemcpyAsync device<->pinned host), ~10 us (CUDA C++ Best
/// Practices Guide, "Data transfer between host and device"; measured with bandwidthTest).
inline constexpr double kHostCopySetup_s = 10e-6;

/// Host staging of the path between two GPUs: AMD<->NVIDIA between nodes without
/// cross_vendor_rdma has no common NCCL/RCCL transport, so the data goes device->host, network,
/// host->device. The copies cap the rate at the slower end's PCIe host link (achieved), and add two
/// copy setups to the latency. The one rule both engines use (path_between; sim::Topology).
struct HostStaging {
  bool staged = false;
  double rate_Bps = 0;         ///< per GPU pair; 0 when not staged
  double extra_latency_s = 0;  ///< 2 x kHostCopySetup_s when staged
};
HostStaging host_staging(const Cluster& cluster, int gpu_a, int gpu_b);

/// Bandwidth and latency of the path between two GPUs, each direction.
struct PathCost {
  double bandwidth_Bps = 0;  ///< achieved (efficiency applied) bottleneck bandwidth
  double latency_s = 0;      ///< sum of hop latencies
  bool intra_node = false;
  bool host_staged = false;  ///< cross-vendor path staged through host memory
};
/// `path` (from_gpu to to_gpu) for one flow of a pipeline send from a TP-`from_tp` stage to a
/// TP-`to_tp` one: host-staged, a receiver of lower TP than its sender copies from_tp / to_tp
/// slices through its one host link, so each flow gets that share of the staging rate (the
/// simulator's Runtime::send_staging_delay alike); unchanged otherwise.
PathCost staged_send_path(const Cluster& cluster, int from_gpu, int to_gpu, int from_tp, int to_tp, PathCost path);

/// The rail of a GPU: the NIC(s) on its PCIe switch. Contiguous blocks of a node's GPUs share one
/// NIC when it has fewer NICs than GPUs; with more, each GPU has a rail of count / gpus_per_node
/// NICs. `rail_count` is min(NICs, GPUs). Both engines wire GPUs to NICs this way (nic_share;
/// sim::Topology::nic_index).
int rail_count(const NodeType& type);
int rail_of_gpu(const Cluster& cluster, int gpu);
/// What one rail of `node` carries alone, one direction: its NICs' achieved rate, capped as the
/// NIC share of one sender is (fabric port, oversubscription, host link without GPUDirect).
double rail_rate_Bps(const Cluster& cluster, int node);

/// What crosses a node's NICs at once in one kind of traffic: `senders` GPUs, or NIC channels
/// where a GPU is in several data-parallel groups at once (one per group), and how many of them
/// the node's busiest rail carries. `senders` 0: every GPU of the node; `on_busiest_rail` 0: the
/// senders fill the rails in order from the node's first GPU (a uniform plan's GPUs do).
struct NodeSenders {
  int senders = 0;
  int on_busiest_rail = 0;
  bool operator==(const NodeSenders&) const = default;
};
/// Per node, the senders of `per_gpu` (by global GPU index: the channels each GPU sends on, 0 for
/// none) and their busiest rail (rail_of_gpu); with `on_rail_of_gpu`, per GPU the channels its own
/// rail carries (a GPU alone on its rail keeps the rail while a neighbour's is crowded).
void node_senders_of(const Cluster& cluster, const std::vector<int>& per_gpu, std::vector<NodeSenders>& out,
                     std::vector<int>* on_rail_of_gpu = nullptr);

/// Path between two GPUs when `concurrent_per_node` GPUs of each node send across nodes at
/// the same time (they share the node's NICs: each gets node_bandwidth / concurrent).
/// A host-staged AMD<->NVIDIA path adds a device->host and host->device copy over the GPUs'
/// host links (store-and-forward of the whole message is approximated as a pipeline whose
/// bottleneck is the slowest of the three hops; its latency adds two PCIe copy setups).
/// `wan_senders` > 0: the GPUs that cross the path's WAN link at the same time, from every node
/// of the plan (they share it); 0: those of the node, `concurrent_per_node`.
PathCost path_between(const Cluster& cluster, int gpu_a, int gpu_b, int concurrent_per_node, int wan_senders = 0);
/// Same, from gpu_a to gpu_b when `sending_a` GPUs of a's node send out of it and `receiving_b`
/// GPUs of b's node receive into it at the same time (0: all of the node's): a NIC carries each
/// direction at its line rate (full duplex), so a one-way transfer shares a's outgoing side with
/// a's senders and b's incoming side with b's receivers.
PathCost path_between(const Cluster& cluster, int gpu_a, int gpu_b, int sending_a, int receiving_b, int wan_senders);
/// Same, with the senders out of a's node and the flows into b's node counted with their busiest
/// rail (NodeSenders): a flow leaves through its sender's rail and arrives through its receiver's.
PathCost path_between(const Cluster& cluster, int gpu_a, int gpu_b, NodeSenders sending_a, NodeSenders receiving_b,
                      int wan_senders);

/// The α-β figures of a collective group: a ring over `gpus` in the given order.
/// bus_bandwidth_Bps is the slowest hop's bandwidth as seen by the ring: an intra-node hop
/// gives the intra fabric; a hop that leaves a node gives the node's NIC share times the
/// number of group members in that node (NCCL builds one channel per member, each crossing
/// on a different NIC; Jeaugey, "NCCL 2.0", GTC 2017), never more than the intra fabric.
/// Exception, `node_shared`: a multi-node group with several members on a node that also
/// holds GPUs of other groups running at the same time (the DP groups of TP ranks 0..t-1 of a
/// plan with 1 < t < GPUs per node) crosses each node boundary through one NIC (shared with the
/// node's other groups when they outnumber its NICs), as its boundary member sends. A ring
/// carries all its traffic across each node boundary (Jeaugey, NVIDIA/nccl#687: "data [...]
/// enter/exit the node once"); NCCL searches each communicator's channels without regard to the
/// others sharing the node's NICs. Measured, not derived: SC'21 Table 1 (Narayanan et al.;
/// DGX A100, 8 HDR NICs) 3.6B at tp2 and 7.5B at tp4 with 32-way DP are 6% and 2% faster than
/// measured at the node-share rate and within 0.2% and 2% at this one, and vTrain's multi-node
/// l30 tp2/tp4 rows (suite vtrain-a100-multi) move from 10-12% too fast to within 1-9%. Whole-node
/// groups (tp1) keep the node share: at one NIC, vTrain's tp1 dp64 rows would be 20% too slow.
struct GroupCost {
  int size = 1;
  int nodes = 1;                 ///< distinct nodes spanned
  int min_per_node = 1;          ///< fewest group members in one node
  double bus_bandwidth_Bps = 0;  ///< ring bottleneck (achieved)
  double hop_latency_s = 0;      ///< worst hop latency
  double intra_bandwidth_Bps = 0;  ///< slowest intra-node fabric among members (achieved)
  double intra_latency_s = 0;
  double inter_bandwidth_Bps = 0;  ///< per-member NIC share across nodes (achieved), 0 if one node
  double inter_latency_s = 0;       ///< worst node-crossing hop latency (trees: a path may take it)
  /// Mean latency of the ring's node crossings. A ring's pipelined chunk passes the crossings in
  /// turn, so its latency sums theirs: on a ring over two zones only the two WAN crossings of
  /// its circle take the WAN's latency, not every node boundary (max x crossings charged the
  /// WAN's 30 ms at each of them; the simulator, whose flows take each link's own latency,
  /// measured 21.9 s where that said 26.0 s, with the gradient sync overlapped over 21 buckets).
  double inter_latency_mean_s = 0;
  /// The latency of a pipelined ring over the group's own hops, when it crosses a WAN link between
  /// zones (group_cost; else 0, and ring_latency_s counts NCCL's steps). A chunk forwarded from rank
  /// to rank passes `steps` consecutive hops, each at its own latency, and the collective ends
  /// with the slowest chunk: the largest sum of n - 1 consecutive hops of the n-hop circle for
  /// one pass (all-gather, reduce-scatter: every hop but the fastest), of 2(n - 1) for an
  /// all-reduce (twice round but the fastest consecutive pair). The simulator forwards the same
  /// way (sim/phase_dataflow.hpp). A mean per crossing under-counted small rings across a WAN:
  /// a reduce-scatter of three over hops of 30 ms, 30 ms and 10 us took 40 ms for 60 ms.
  double ring_pass_latency_s = 0;
  double ring_allreduce_latency_s = 0;
  bool host_staged = false;
  bool node_shared = false;  ///< ring crosses each node boundary through one NIC (see above)
  bool operator==(const GroupCost&) const = default;  ///< every figure equal: equal collective times
};

/// Index of the unordered zone pair (za, zb) in a table of zones x zones entries (WAN sharing).
inline int zone_pair_index(const Cluster& cluster, int za, int zb) {
  return std::min(za, zb) * static_cast<int>(cluster.zones.size()) + std::max(za, zb);
}

/// Whether a ring over `gpus` in this order visits each node once (its members on one node are
/// consecutive, counting round the circle), as NCCL builds its rings: nodes in the order of their
/// first rank, the node's GPUs together (NCCL src/graph/connect.cc, rings chained node by node).
bool ring_visits_each_node_once(const Cluster& cluster, const int* gpus, int count);
/// Reorders `gpus` (and `companion` alike, when given) so that a ring visits each node once:
/// nodes in order of first appearance, each node's members in their order. A ring in member order
/// would cross a node's NIC once per run of its members (a DP group of replicas split differently
/// has two stages of one node, a replica apart: twice the bytes through that NIC).
void order_ring_by_node(const Cluster& cluster, int* gpus, int count, int* companion = nullptr);

/// `concurrent_per_node`: GPUs of a node that take part in groups of this kind at the same
/// time (all of them for TP/DP groups of a uniform plan); 0 means "all GPUs of the node".
/// `concurrent_on_node` (by node index; overrides it): each node's own senders, where the group's
/// nodes differ (a TP group across a node full of senders and one where it sends alone), with
/// their busiest rail where the plan's GPUs of a node are not its first ones (NodeSenders).
/// `wan_senders` (by zone_pair_index; null: a node's share): the GPUs of the whole plan whose
/// groups cross each WAN link at once (wan_load_of and wan_senders_for, dp_segments.hpp); a hop over it gets its members' part.
/// `on_rail_of_gpu` (by global GPU index, with concurrent_on_node): the channels on each GPU's own
/// rail, which a member's hops then take in place of its node's busiest rail.
/// The ring is taken in the order of order_ring_by_node (NCCL's), whatever the order of `gpus`.
GroupCost group_cost(const Cluster& cluster, const int* gpus, int count, int concurrent_per_node = 0,
                     const std::vector<double>* wan_senders = nullptr,
                     const std::vector<NodeSenders>* concurrent_on_node = nullptr,
                     const std::vector<int>* on_rail_of_gpu = nullptr);
inline GroupCost group_cost(const Cluster& cluster, const std::vector<int>& gpus, int concurrent_per_node = 0,
                            const std::vector<double>* wan_senders = nullptr) {
  return group_cost(cluster, gpus.data(), static_cast<int>(gpus.size()), concurrent_per_node, wan_senders);
}

/// What member i's own side of a group's ring lets through (its hops to both ring neighbours,
/// counting only its node: NIC share, node fabric, host staging; intra-node figure towards a
/// neighbour on its node). group_cost's bus bandwidth is the lowest over all hops, so a member
/// whose side is faster than that waits on another member: a GPU in several such groups at once
/// (step_cost: one per shard or segment) can run them side by side up to this figure.
/// `one_crossing`: the ring leaves each node at one member (GroupCost::node_shared).
/// `member_channels` (optional, per member): the data-parallel groups each member is in at once
/// (dp_nic_channels), which share its node's NICs as that many senders; with it, the NIC side is
/// that of the channels of the group's members on x's node (`own_node` counts channels).
double member_side_bandwidth_Bps(const Cluster& cluster, const int* gpus, int count, int i, NodeSenders own_node,
                                 bool one_crossing, const int* member_channels = nullptr);

/// A group's members on one node, and their NIC channels (each member's, at least 1).
struct NodeTally {
  int members = 0;
  int channels = 0;
};
/// member_side_bandwidth_Bps with the tally of member i's node given (`x_node`; channels read
/// when `by_channels`, as with member_channels above): a caller going over every member of a
/// large group tallies its nodes once (the scan per member made a 4,096-member group's members
/// cost 16 million steps).
double member_side_bandwidth_Bps(const Cluster& cluster, const int* gpus, int count, int i, NodeSenders own_node,
                                 bool one_crossing, NodeTally x_node, bool by_channels);

}  // namespace hetsim::models
