// SPDX-License-Identifier: Apache-2.0
// Inputs shared by the sweep tests (sweep_test.cpp: the spec; sweep_run_test.cpp: the runner).
#pragma once
#include <string>

#include "input_loader.hpp"

namespace hetsim::models::sweep_test {

inline const std::string kSource = HETSIM_SOURCE_DIR;

constexpr const char* kTwoZones = R"(kind: cluster
name: two-zones
node_types:
  big: {gpu: a100-sxm4-80gb, gpus: 8, intra: {kind: nvswitch, bandwidth: "300GB/s"},
        nics: {count: 8, bandwidth: "25GB/s"}, price: "$30/h"}
  small: {gpu: v100-sxm2-32gb, gpus: 8, intra: {kind: nvlink, bandwidth: "150GB/s"},
          nics: {count: 1, bandwidth: "12.5GB/s"}, price: "$10/h"}
zones:
  - {name: east, fabric: {kind: fat-tree}, nodes: [{type: big, count: 1}, {type: small, count: 2}]}
  - {name: west, fabric: {kind: fat-tree}, nodes: [{type: small, count: 1}]}
links: [{between: [east, west], bandwidth: "1.25GB/s", latency: "30ms"}]
)";

inline Cluster two_zones() { return parse_cluster(kTwoZones, Catalog::builtin(), "two-zones.yaml"); }

}  // namespace hetsim::models::sweep_test
