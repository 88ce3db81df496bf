// SPDX-License-Identifier: Apache-2.0
// One timed event of the execution engine (a kernel group, a collective, a p2p transfer),
// written as one JSON line per event.
#pragma once
#include <string>
#include <vector>

namespace hetsim::exec {

/// The Report breakdown's categories; kBubble is time spent waiting for other ranks (a receive
/// waiting for its sender, a gradient sync waiting for the slowest member of its group).
enum class OpClass { kCompute, kTpComm, kPpComm, kDpComm, kOptimizer, kBubble };
const char* to_string(OpClass c);

struct Measurement {
  int step = 0;
  int rank = 0;
  int replica = 0;
  int stage = 0;
  int chunk = -1;          ///< -1 outside a forward/backward pass
  int micro_batch = -1;    ///< -1 outside a forward/backward pass
  std::string phase;       ///< forward | backward | grad_sync | optimizer | step
  std::string op;          ///< e.g. qkv, attention, mlp_in, tp_attn, send_activation, recv_activation
  OpClass op_class = OpClass::kCompute;
  std::string shape;       ///< e.g. "1024x1024x4096" (m x n x k) or "4194304B"
  double start_s = 0;      ///< seconds since the run's common start (after a barrier)
  double end_s = 0;
};

/// One measurement as a JSON line (without its newline); `run --out` writes them through
/// MeasurementStream (measurement_stream.hpp).
std::string to_json_line(const Measurement& m);

}  // namespace hetsim::exec
