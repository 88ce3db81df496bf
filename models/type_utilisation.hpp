// SPDX-License-Identifier: Apache-2.0
// Throughput and MFU per GPU type of a mixed plan. The Report's `tflops_per_gpu` and `mfu` are
// over all the plan's GPUs (DESIGN.md "Outputs"): on H100 + MI355X the mean can exceed the H100's
// peak and hide that one type runs at a far higher share of its own than the other (s26
// walkthrough 9). The verbs that show a Report attach this, as they attach its notes.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "cluster.hpp"
#include "plan.hpp"
#include "report.hpp"
#include "workload.hpp"

namespace hetsim::models {

/// Per GPU type of `plan`, in the order the plan first uses them: the model FLOPs its GPUs do in
/// a step of `iteration_time_s` (each stage's blocks, and the LM head on last stages, for its
/// replica's tokens, split evenly over the stage's TP group; Narayanan et al. SC'21 eq. 3 without
/// the recompute pass, as ModelSpec::flops_per_token), per GPU and as a share of the type's peak
/// in `peak_dtype` (default: the dtype its matmuls run in, GpuType::matmul_dtype, as the Report's
/// `mfu`). The types' FLOPs sum to the Report's model FLOPs.
std::vector<TypeUtilisation> utilisation_by_type(const Cluster& cluster, const Workload& workload, const Plan& plan,
                                                 double iteration_time_s,
                                                 std::optional<Dtype> peak_dtype = std::nullopt);

}  // namespace hetsim::models
