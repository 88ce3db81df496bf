// SPDX-License-Identifier: Apache-2.0
// A cluster-design sweep (`kind: sweep`, docs/sweep.md): a base cluster, one or more
// workloads, and axes of what-if changes to the cluster (node counts, GPU type, NIC, intra-node
// and inter-zone bandwidth, price). The grid is the cartesian product of the axes; `hetsim sweep`
// plans every workload on every point's cluster (models/sweep_run.hpp).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "catalog.hpp"
#include "cluster.hpp"
#include "planner.hpp"
#include "profile.hpp"
#include "workload.hpp"

namespace hetsim::models {

enum class SweepAxisKind {
  kNodes,           ///< nodes of a node type (in one zone)
  kGpu,             ///< the GPU type of a node type (catalog names)
  kNicBandwidth,    ///< bandwidth of each NIC of a node type
  kIntraBandwidth,  ///< intra-node bandwidth per GPU of a node type
  kPrice,           ///< on-demand price per node-hour of a node type
  kPreemptionRate,  ///< spot preemptions per node-hour of a node type (spot sweeps, spot-priced types)
  kLinkBandwidth,   ///< bandwidth of the link between two zones
};
const char* to_string(SweepAxisKind k);  ///< the key written in the file: "nodes", "gpu", ...

/// Where an axis was written (1-based; 0 unknown), so that checks against the cluster point there.
struct SourcePosition {
  int line = 0;
  int column = 0;
};

struct SweepAxis {
  SweepAxisKind kind = SweepAxisKind::kNodes;
  std::string node_type;               ///< node axes: the cluster's node type name
  std::string zone;                    ///< kNodes: the zone of the group ("" = the type's only group)
  std::string link_a, link_b;          ///< kLinkBandwidth: the two zones
  std::vector<std::string> labels;     ///< the values as written ("2", "25GB/s"); a gpu axis's the catalog names once load_sweep_inputs has checked them
  std::vector<double> values;          ///< SI values (count, B/s, $/h); empty for kGpu
  int index = 0;                       ///< its position in the file's `axes` (invalid entries are dropped)
  SourcePosition at;                   ///< the axis entry
  SourcePosition target_at;            ///< its node_type / link value
  SourcePosition zone_at;              ///< its zone value (kNodes with `zone:`)
  std::vector<SourcePosition> value_at;  ///< each value
  /// Column name in the results: "hgx-h100.nodes", "dc-eu.link_bandwidth", ...
  std::string column() const;
  /// What the axis varies, without ambiguity (checkpoint keys): the column, except that a link
  /// axis gives its first zone's length ("4:us-e-west.link_bandwidth"), as zone names may hold
  /// the '-' that joins them in the column ([x-y, z] and [x, y-z] share one).
  std::string identity() const;
};

/// `search:` of a sweep: the lists the planner searches at every point, as `hetsim plan`'s
/// --tp-degrees, --micro-batches, --interleave, --recompute and --zero; an empty list keeps
/// PlannerOptions' default.
struct SweepSearch {
  std::vector<int> tp_degrees, micro_batches, interleaves, zero_stages;
  std::vector<Recompute> recomputes;
  bool sequence_parallel = true;  ///< false: plans without sequence parallelism (plan --no-sequence-parallel)
  /// The spec's lists over `options`' defaults.
  void apply_to(PlannerOptions& options) const;
};

struct SweepSpec {
  std::string name;
  std::string file;                    ///< the spec's path, for messages
  std::string cluster_path;            ///< resolved against the spec's folder
  std::vector<std::string> workload_paths;
  SourcePosition cluster_at;
  std::vector<SourcePosition> workload_at;
  std::vector<int> workload_index;     ///< each one's index in the file's list (invalid entries dropped)
  PlanObjective objective = PlanObjective::kThroughput;
  double budget_per_hour = 0;          ///< dollars per hour (objective budget)
  bool spot = false;
  bool tp_comm_overlap = false;        ///< PlannerOptions::tp_comm_overlap for every point
  bool overlap_p2p_comm = false;       ///< PlannerOptions::overlap_p2p_comm for every point
  bool one_vendor = false;             ///< PlannerOptions::one_vendor for every point
  /// PlannerOptions::sharded_collectives for every point (the stack's ZeRO-3 flavour)
  ShardedCollectives sharded_collectives = ShardedCollectives::kMemberNic;
  SweepSearch search;
  std::vector<SweepAxis> axes;
  /// Number of grid points (product of the axes' value counts; 1 without axes).
  long point_count() const;
};

/// Largest grid accepted: each point is a planner search (0.01-10 s), so a bigger grid is
/// almost certainly a mistake in the spec; split it into several sweeps instead.
inline constexpr long kMaxSweepPoints = 100000;

/// Reads a `kind: sweep` file; relative cluster/workload paths are resolved against its folder.
/// Throws ConfigError with every problem of the file (file:line:col: error: field: ...).
SweepSpec load_sweep_spec(const std::string& path);
SweepSpec parse_sweep_spec(std::string_view text, const std::string& name = "<string>",
                           const std::string& base_dir = ".");

/// Checks the axes against the base cluster and the catalog: node types, zones, links and GPU
/// names exist; a `nodes` axis names one group; two axes do not vary the same thing; a GPU swap
/// keeps GPUs GPUs (CPU device types replace CPU device types); intra-node bandwidth is swept on
/// nodes that have a fabric; no point has more than kMaxClusterGpus GPUs. Throws one ConfigError
/// with every problem, positioned in the spec file.
void check_sweep_spec(const SweepSpec& spec, const Cluster& base, const Catalog& catalog);

/// A sweep with everything it names: the spec, its base cluster and workloads (in spec order).
struct SweepInputs {
  SweepSpec spec;
  Cluster cluster;
  std::vector<Workload> workloads;
};

/// Loads the spec, then its cluster and workloads (a path that names no file is an error at the
/// spec's line) and checks the axes against the cluster: one ConfigError with every problem of
/// every file.
SweepInputs load_sweep_inputs(const std::string& spec_path, const Catalog& catalog);

/// One grid point: for each axis, the index of its value. Points are numbered with the first
/// axis varying slowest (the order of nested loops written in the file's order).
std::vector<int> sweep_point(const SweepSpec& spec, long index);

/// The base cluster with a point's values applied, finalized. Node groups set to 0 nodes are
/// dropped (the cluster may end up with no GPUs: the planner then says so). A `price` axis sets
/// the spot price of node types that have one when the spec prices at spot, else the on-demand
/// price. With a profile (calibrated figures), the profile is applied to the point's cluster
/// (its device figures follow a swapped-in GPU type), and the link axes' values then replace the
/// profile's achieved figures of those links: they are the line rates the user asked about.
Cluster sweep_cluster(const SweepSpec& spec, const Cluster& base, const std::vector<int>& point,
                      const Catalog& catalog, const Profile* profile = nullptr);

}  // namespace hetsim::models
