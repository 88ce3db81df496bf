// SPDX-License-Identifier: Apache-2.0
// Datasheet line rates of the link kinds, to tell a nominal bandwidth figure from a measured one.
#include "line_rates.hpp"

#include <cmath>
#include <initializer_list>

namespace hetsim::models {
namespace {

/// Written figures round a line rate to a few digits ("15.75GB/s" for 15.754): 0.2% covers
/// that, and is far below the 5-20% by which achieved figures fall short of the line rate.
constexpr double kRelativeTolerance = 2e-3;

bool near(double a, double b) { return std::fabs(a - b) <= kRelativeTolerance * b; }

/// `bandwidth_Bps` = k x one of `unit_GBps`, for k in `counts`.
bool multiple_of(double bandwidth_Bps, std::initializer_list<double> unit_GBps, std::initializer_list<int> counts) {
  for (double unit : unit_GBps)
    for (int k : counts)
      if (near(bandwidth_Bps, k * unit * 1e9)) return true;
  return false;
}

// PCIe per lane and direction, after encoding (PCI-SIG base specifications 1.0-6.0):
// 2.5 GT/s 8b/10b = 0.25 GB/s, 5 GT/s 8b/10b = 0.5, 8 GT/s 128b/130b = 0.9846,
// 16 GT/s = 1.9692, 32 GT/s = 3.9385, 64 GT/s PAM4 FLIT = 7.5625 (often written 8 = 128 GB/s x16).
constexpr std::initializer_list<double> kPcieLaneGBps = {0.25, 0.5, 8.0 * 128 / 130 / 8, 16.0 * 128 / 130 / 8,
                                                         32.0 * 128 / 130 / 8, 7.5625, 8.0};
// NVLink per link and direction: 1.0 (P100) 20 GB/s; 2.0-4.0 (V100, A100, H100) 25 GB/s;
// 5.0 (B200) 50 GB/s (NVIDIA P100/V100/A100/H100/Blackwell architecture whitepapers).
constexpr std::initializer_list<double> kNvlinkGBps = {20, 25, 50};
// AMD Infinity Fabric / xGMI per link and direction: MI50/MI100 23 GB/s (92 GB/s per 4 links),
// MI250X 50 GB/s, MI300X 64 GB/s (AMD Instinct MI100/MI200/MI300 data sheets); 16 and 32 for
// older and PCIe-mode links.
constexpr std::initializer_list<double> kXgmiGBps = {16, 23, 32, 46, 50, 64};
// Ethernet / InfiniBand line rates, in GB/s: 1, 2.5, 5, 10, 25, 40, 50, 56, 100, 200, 400, 800 and
// 1600 Gb/s (IEEE 802.3; InfiniBand Trade Association roadmap: FDR 56, EDR 100, HDR 200, NDR 400,
// XDR 800).
constexpr std::initializer_list<double> kNicGBps = {1 / 8.0,  2.5 / 8, 5 / 8.0,   10 / 8.0,  25 / 8.0,
                                                    40 / 8.0, 50 / 8.0, 56 / 8.0, 100 / 8.0, 200 / 8.0,
                                                    400 / 8.0, 800 / 8.0, 1600 / 8.0};

}  // namespace

bool is_line_rate(IntraFabricKind kind, double bandwidth_Bps) {
  switch (kind) {
    case IntraFabricKind::kPcie: return multiple_of(bandwidth_Bps, kPcieLaneGBps, {1, 2, 4, 8, 16});
    case IntraFabricKind::kNvlink:
    case IntraFabricKind::kNvswitch:
      return multiple_of(bandwidth_Bps, kNvlinkGBps, {1, 2, 3, 4, 5, 6, 8, 12, 18});
    case IntraFabricKind::kXgmi: return multiple_of(bandwidth_Bps, kXgmiGBps, {1, 2, 3, 4, 5, 6, 7, 8});
    case IntraFabricKind::kNone: return true;
  }
  return true;
}

bool is_nic_line_rate(double bandwidth_Bps) { return multiple_of(bandwidth_Bps, kNicGBps, {1, 2, 4, 8, 16}); }

bool is_nic_share_line_rate(double per_gpu_Bps, int gpus_per_node) {
  for (int sharing = 1; sharing <= gpus_per_node; ++sharing)
    if (multiple_of(per_gpu_Bps * sharing, kNicGBps, {1})) return true;
  return false;
}

}  // namespace hetsim::models
