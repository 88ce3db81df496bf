// SPDX-License-Identifier: Apache-2.0
// Names of the plan work's op kinds (plan_work.hpp), as the JSON of predict --ops writes them.
#include "plan_work.hpp"

namespace hetsim::models {

const char* to_string(OpKind k) {
  switch (k) {
    case OpKind::kCompute: return "compute";
    case OpKind::kTpAllReduce: return "tp_all_reduce";
    case OpKind::kTpAllGather: return "tp_all_gather";
    case OpKind::kTpReduceScatter: return "tp_reduce_scatter";
  }
  return "compute";
}

}  // namespace hetsim::models
