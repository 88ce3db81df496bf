// SPDX-License-Identifier: Apache-2.0
// Private state of RankRunner shared by its source files (rank_runner.cpp, transformer_passes.cpp,
// block_passes.cpp, gradient_sync.cpp, zero3.cpp).
#pragma once
#include <string>
#include <vector>

#include "runner/rank_runner.hpp"

namespace hetsim::exec {

struct RankRunner::LayerWeights {
  const ParamSpec* ln1_gamma = nullptr;
  const ParamSpec* ln1_beta = nullptr;
  const ParamSpec* wq = nullptr;
  const ParamSpec* wk = nullptr;
  const ParamSpec* wv = nullptr;
  const ParamSpec* wo = nullptr;
  const ParamSpec* ln2_gamma = nullptr;
  const ParamSpec* ln2_beta = nullptr;
  const ParamSpec* w1 = nullptr;     // gelu: up projection; swiglu: gate
  const ParamSpec* wup = nullptr;    // swiglu only
  const ParamSpec* w2 = nullptr;
};

struct RankRunner::LayerActs {
  const float* x = nullptr;  // the block's input (the previous block's out, or the chunk input)
  DeviceArray<float> a, mean1, rstd1, q, k, v, probs, o, x2, b, mean2, rstd2, u, up, z, out;
  DeviceArray<float> a_full, b_full;  // sequence parallelism: the gathered LayerNorm outputs
  const float* a_in() const { return a_full.get() ? a_full.get() : a.get(); }
  const float* b_in() const { return b_full.get() ? b_full.get() : b.get(); }
};

struct RankRunner::ChunkActs {
  DeviceArray<float> input;
  DeviceArray<int> tokens, targets;
  std::vector<LayerActs> layers;
  DeviceArray<float> xf, mean_f, rstd_f, probs;  // head
  const float* output() const { return layers.empty() ? input.get() : layers.back().out.get(); }
};

/// Times one op: the record is taken when the scope ends, after the device has finished.
class RankRunner::OpTimer {
 public:
  OpTimer(RankRunner& r, const char* phase, const char* op, OpClass c, int micro_batch, int chunk,
          std::string shape)
      : r_(r), m_(r.make_record(phase, op, c, micro_batch, chunk)) {
    m_.shape = std::move(shape);
    m_.start_s = Communicator::now_s() - r_.epoch_s_;
  }
  /// A destructor must not throw (std::terminate: a std::bad_alloc here aborted a run that ran
  /// out of memory, exit 134): what fails is kept and thrown at the step's next action.
  ~OpTimer() {
    try {
      r_.backend_.synchronize();
      m_.end_s = Communicator::now_s() - r_.epoch_s_;
      if (r_.options_.record_ops) r_.measurements_.push_back(std::move(m_));
      r_.comm_.progress();  // between ops, outside the timed span: sends in flight advance
    } catch (...) {
      if (!r_.deferred_error_) r_.deferred_error_ = std::current_exception();
    }
  }
  OpTimer(const OpTimer&) = delete;
  OpTimer& operator=(const OpTimer&) = delete;

 private:
  RankRunner& r_;
  Measurement m_;
};

inline std::string gemm_shape(int m, int n, int k) {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}
inline std::string bytes_shape(std::size_t count) { return std::to_string(count * sizeof(float)) + "B"; }

}  // namespace hetsim::exec
