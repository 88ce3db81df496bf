// SPDX-License-Identifier: Apache-2.0
// A cluster: node types, zones of nodes with their fabric, links between zones.
// Loaded from `kind: cluster` YAML (see README "Input reference"); all values SI.
//
//   cluster ── zone (fabric: fat-tree | switch) ── node (NICs) ── GPU (intra-node fabric, host link)
//        └──── inter-zone links (WAN: bandwidth, latency, egress price)
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "gpu_type.hpp"

namespace hetsim::models {

enum class IntraFabricKind { kNvswitch, kNvlink, kXgmi, kPcie, kNone };
enum class NicKind { kInfiniband, kRoce, kEthernet };
enum class ZoneFabricKind { kFatTree, kSwitch };

const char* to_string(IntraFabricKind k);
const char* to_string(NicKind k);
const char* to_string(ZoneFabricKind k);

/// GPU<->GPU inside a node. bandwidth is per GPU, one direction (GPU<->switch for NVSwitch/xGMI).
struct IntraFabric {
  IntraFabricKind kind = IntraFabricKind::kNvswitch;
  double bandwidth_Bps = 0;
  double latency_s = 0;
  /// bandwidth_Bps is an achieved figure (nccl-tests, a send/recv test), not a datasheet line
  /// rate: the model uses it as is instead of applying link_efficiency(intra) (topology.hpp).
  bool measured = false;
  /// PCIe only: GPUs copy to each other directly (CUDA peer access below a PCIe switch, as
  /// NCCL's P2P transport uses it) instead of through host memory. NVLink/NVSwitch/xGMI always do.
  bool peer_to_peer = false;
  /// NVLink/xGMI only: the GPUs are joined pairwise by direct links, not through a switch
  /// (MI300X: 7 xGMI links of 64 GB/s, AMD CDNA 3 white paper; GH200 nodes of 4 with 6 NVLink 4
  /// links a pair; V100 quads). bandwidth_Bps is then a GPU's total over its links, split evenly
  /// over its gpus_per_node - 1 peers: a collective among k GPUs of the node runs a ring channel
  /// over each of a GPU's k - 1 links to them (NCCL/RCCL build one ring per link permutation), so
  /// it gets (k - 1) / (gpus_per_node - 1) of the figure, and a point-to-point send one link.
  /// models/topology.hpp intra_bandwidth_Bps.
  bool mesh = false;
};

/// The node's network interfaces; GPUs of the node share them.
struct NicSpec {
  int count = 0;
  double bandwidth_Bps = 0;  ///< per NIC, one direction
  double latency_s = 0;      ///< NIC + stack latency added to the zone fabric's
  NicKind kind = NicKind::kInfiniband;
  bool gpu_direct = true;    ///< GPUDirect RDMA (NIC reads GPU memory without host staging)
  bool measured = false;     ///< bandwidth_Bps is achieved (iperf, nccl-tests), not the line rate
  double node_bandwidth_Bps() const { return count * bandwidth_Bps; }
};

/// A node type's restart after a preemption when its input gives none: a replacement instance
/// launched, the job's processes started and their communicators built (reading the checkpoint
/// back is counted apart, models/preemption.hpp). An assumption, not a measurement: clouds give
/// 30 s to 2 min of notice (AWS EC2 Spot 2 min, GCP Spot 30 s) and a GPU instance then takes
/// minutes to launch; a cluster file sets `restart_time` to what its scheduler measures.
inline constexpr double kDefaultRestartTime_s = 300;

struct NodeType {
  std::string name;
  GpuType gpu;                     ///< a copy of the catalog entry (the cluster is self-contained)
  int gpus_per_node = 0;
  IntraFabric intra;
  NicSpec nics;
  double host_link_Bps = 0;        ///< GPU<->host (PCIe) per GPU, one direction
  /// host_link was written in the file; otherwise it is the GPU type's (default_host_link_Bps),
  /// and a sweep's `gpu` axis that swaps the GPU swaps it too.
  bool host_link_given = false;
  double price_per_hour = 0;       ///< on-demand dollars per node-hour
  std::optional<double> spot_price_per_hour;
  double preemption_rate_per_hour = 0;  ///< spot preemptions per node-hour
  /// Write (and read) bandwidth of a node to the storage that outlives a preemption; unset: one
  /// of its NICs (models/preemption.hpp checkpoint_bandwidth_Bps).
  std::optional<double> checkpoint_bandwidth_Bps;
  double restart_time_s = kDefaultRestartTime_s;  ///< after a preemption, until the job runs again
  /// A node's price per hour: at its spot price when asked and it has one, else on demand.
  double price_per_hour_at(bool spot) const { return spot && spot_price_per_hour ? *spot_price_per_hour : price_per_hour; }
};

/// A node type's host link when its input gives none: its GPU type's (catalog `host_link`),
/// else PCIe 4.0 x16 written "32GB/s" (31.5 GB/s per direction, PCI-SIG Base Specification 4.0).
inline double default_host_link_Bps(const GpuType& gpu) { return gpu.host_link_Bps > 0 ? gpu.host_link_Bps : 32e9; }

struct ZoneFabric {
  ZoneFabricKind kind = ZoneFabricKind::kFatTree;
  double oversubscription = 1.0;   ///< fat-tree: bisection = node NIC bandwidth / oversubscription
  double latency_s = 0;            ///< switch traversal latency between two nodes of the zone
  double bandwidth_Bps = 0;        ///< switch: per-port bandwidth cap (0 = limited by NICs only)
};

struct NodeGroup { int node_type = 0; int count = 0; };

struct Zone {
  std::string name;
  ZoneFabric fabric;
  std::vector<NodeGroup> groups;
};

struct InterZoneLink {
  int zone_a = 0, zone_b = 0;
  double bandwidth_Bps = 0;        ///< one direction
  double latency_s = 0;
  double egress_price_per_byte = 0;  ///< dollars per byte leaving a zone over this link
};

/// One physical node, in rank order (zones in order, groups in order, nodes in order).
struct Node {
  int zone = 0;
  int node_type = 0;
  int index_in_group = 0;          ///< i in "zone/type[i]"
  int first_gpu = 0;               ///< global index of its GPU 0
};

/// One GPU in rank order: global index = position in Cluster::gpus.
struct GpuSlot {
  int node = 0;                    ///< index into Cluster::nodes
  int local = 0;                   ///< index inside the node
};

/// Largest cluster accepted (GPUs): far above any machine built, and it keeps per-GPU arrays of
/// the cost model and simulator in memory. Cluster files and sweep points are checked against it.
inline constexpr long long kMaxClusterGpus = 1LL << 20;
/// GPUs of one node, for cluster files and suite systems alike: far beyond any real node, small
/// enough that deriving the per-GPU tables of a mistyped count cannot exhaust memory.
inline constexpr int kMaxGpusPerNode = 1024;

/// Why a GPU selector is wrong whatever the cluster ("gpu[3-1]": its range runs backwards), or
/// "": a plan's selectors are checked this far when its cluster could not be read.
std::string backwards_range_problem(const std::string& selector);

struct Cluster {
  std::string name;
  std::vector<NodeType> node_types;
  std::vector<Zone> zones;
  std::vector<InterZoneLink> links;
  bool cross_vendor_rdma = false;  ///< true: AMD<->NVIDIA traffic is not host-staged
  std::vector<Node> nodes;         ///< derived by finalize()
  std::vector<GpuSlot> gpus;       ///< derived by finalize()

  /// Derives nodes and gpus from zones/groups. Loaders and programmatic builders call it once.
  void finalize();
  int gpu_count() const { return static_cast<int>(gpus.size()); }
  const NodeType& node_type_of_gpu(int gpu) const { return node_types[nodes[gpus[gpu].node].node_type]; }
  const GpuType& gpu_type(int gpu) const { return node_type_of_gpu(gpu).gpu; }
  /// The GPU type names of a group of GPUs in order of first use, joined by '+' ("a100+v100"
  /// for a TP group that mixes types): the stage label of reports.
  std::string gpu_types_label(const std::vector<int>& group) const;
  int zone_of_gpu(int gpu) const { return nodes[gpus[gpu].node].zone; }
  int node_of_gpu(int gpu) const { return gpus[gpu].node; }
  /// "zone/type[i]": how GPU selectors, the simulator's hosts and links, and notes name a node.
  std::string node_name(int node) const;
  /// Index of the node type / zone with this name, -1 when there is none.
  int node_type_index(const std::string& name) const;
  int zone_index(const std::string& name) const;
  /// The inter-zone link between two zones, or nullptr.
  const InterZoneLink* link_between(int zone_a, int zone_b) const;
  /// Price of the whole cluster per hour (on-demand, or spot where given and `spot`).
  double price_per_hour(bool spot = false) const;
  /// Resolves a GPU selector such as "us-east/dgx-a100[0]/gpu[0-7]", "dgx-a100[1]/gpu[2]",
  /// "gpu[0-15]" (global indices) into global GPU indices; returns an error text on failure.
  std::optional<std::vector<int>> resolve_gpus(const std::string& selector, std::string* error) const;
};

}  // namespace hetsim::models
