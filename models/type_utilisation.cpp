// SPDX-License-Identifier: Apache-2.0
#include "type_utilisation.hpp"

#include <algorithm>

namespace hetsim::models {

std::vector<TypeUtilisation> utilisation_by_type(const Cluster& cluster, const Workload& workload, const Plan& plan,
                                                 double iteration_time_s, std::optional<Dtype> peak_dtype) {
  const ModelSpec& m = workload.model;
  struct Sum {
    const GpuType* gpu = nullptr;
    int gpus = 0;
    double flop = 0;
  };
  std::vector<Sum> sums;  // by first use
  const auto sum_of = [&](const GpuType& g) -> Sum& {
    for (Sum& s : sums)
      if (s.gpu->name == g.name) return s;
    sums.push_back({&g, 0, 0});
    return sums.back();
  };
  for (const Replica& r : plan.replicas) {
    const double tokens = static_cast<double>(r.micro_batches) * plan.micro_batch * m.seq_len;
    for (std::size_t s = 0; s < r.stages.size(); ++s) {
      const Stage& st = r.stages[s];
      if (st.gpus.empty()) continue;
      const bool last = s + 1 == r.stages.size();
      const double flop = tokens * (st.layers * m.flops_per_token_per_layer() + (last ? m.flops_per_token_lm_head() : 0));
      for (int gpu : st.gpus) {
        Sum& sum = sum_of(cluster.gpu_type(gpu));
        ++sum.gpus;
        sum.flop += flop / st.tp();
      }
    }
  }
  std::vector<TypeUtilisation> out;
  for (const Sum& s : sums) {
    TypeUtilisation u;
    u.gpu_type = s.gpu->name;
    u.gpus = s.gpus;
    if (iteration_time_s > 0 && s.gpus > 0) {
      u.tflops_per_gpu = s.flop / iteration_time_s / s.gpus / 1e12;
      const Dtype d = peak_dtype.value_or(s.gpu->matmul_dtype(workload.training.dtype, workload.training.allow_tf32));
      const double peak = s.gpu->supports(d) ? s.gpu->utilisation_peak(d) : 0;
      if (peak > 0) u.mfu = s.flop / iteration_time_s / s.gpus / peak;
    }
    out.push_back(std::move(u));
  }
  return out;
}

}  // namespace hetsim::models
