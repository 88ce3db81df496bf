// SPDX-License-Identifier: Apache-2.0
// Datasheet line rates of the link kinds, to tell a nominal bandwidth figure from a measured one.
//
// The suite formats give one bandwidth per link and do not say whether it is a datasheet figure
// ("15.75GB/s", PCIe 3.0 x16) or an achieved one (a send/recv test gave 6.08 GB/s). The cost
// model applies link_efficiency() to the first kind only (topology.hpp), so the suite
// converters mark a figure `measured` when it is none of the line rates below.
#pragma once

#include "cluster.hpp"

namespace hetsim::models {

/// Whether `bandwidth_Bps` (one direction, per GPU) is a line rate of an intra-node fabric:
/// PCIe x1..x16 of generations 1-6, a whole number of NVLink links (1-18 of 20, 25 or 50 GB/s),
/// or of Infinity Fabric / xGMI links (1-8 of 16-64 GB/s). kNone: always true.
bool is_line_rate(IntraFabricKind kind, double bandwidth_Bps);
/// Whether a node's NIC figure (one direction) is 1, 2, 4, 8 or 16 NICs of an Ethernet /
/// InfiniBand line rate (1 Gb/s .. 1.6 Tb/s).
bool is_nic_line_rate(double bandwidth_Bps);
/// Whether a per-GPU share of a node's NICs is a NIC line rate shared by 1..gpus_per_node GPUs.
bool is_nic_share_line_rate(double per_gpu_Bps, int gpus_per_node);

}  // namespace hetsim::models
