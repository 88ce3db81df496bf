// SPDX-License-Identifier: Apache-2.0
// CPU backend: causal multi-head (grouped-query) attention, per (batch, head) with Eigen GEMMs.
#include <Eigen/Core>
#include <cmath>
#include <limits>

#include "cpu/cpu_backend.hpp"
#include "kernel_math.hpp"

namespace hetsim::exec::HETSIM_CPU_VARIANT {
namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstStrided = Eigen::Map<const RowMatrix, Eigen::Unaligned, Eigen::OuterStride<>>;
using MutStrided = Eigen::Map<RowMatrix, Eigen::Unaligned, Eigen::OuterStride<>>;

// Offset of the [seq, head_dim] block of batch b, head h in a [batch*seq, heads*head_dim] matrix.
std::size_t block(const AttentionShape& s, int b, int h, int heads) {
  return static_cast<std::size_t>(b) * s.seq * heads * s.head_dim + static_cast<std::size_t>(h) * s.head_dim;
}

/// The [seq, head_dim] blocks of one (batch, head) in the [batch*seq, heads*head_dim] q (and
/// dq, dout, out) and [batch*seq, kv_heads*head_dim] k/v (and dk, dv) matrices: head h reads
/// k/v head h / (heads / kv_heads) (grouped-query attention, Ainslie et al. 2023). The scale is
/// 1/sqrt(head_dim) (Vaswani et al. 2017, eq. 1).
struct HeadBlocks {
  const AttentionShape& s;
  int q_ld, kv_ld, group;
  float scale;
  explicit HeadBlocks(const AttentionShape& shape)
      : s(shape),
        q_ld(shape.heads * shape.head_dim),
        kv_ld(shape.kv_heads * shape.head_dim),
        group(shape.heads / shape.kv_heads),
        scale(1.0f / std::sqrt(static_cast<float>(shape.head_dim))) {}
  template <class Map, class T>
  Map q(T* base, int b, int h) const {
    return Map(base + block(s, b, h, s.heads), s.seq, s.head_dim, Eigen::OuterStride<>(q_ld));
  }
  template <class Map, class T>
  Map kv(T* base, int b, int h) const {
    return Map(base + block(s, b, h / group, s.kv_heads), s.seq, s.head_dim, Eigen::OuterStride<>(kv_ld));
  }
};

}  // namespace

void CpuBackend::attention_forward(const AttentionShape& s, const float* q, const float* k, const float* v,
                                   float* probs, float* out) {
  const HeadBlocks blocks(s);
  const float scale = blocks.scale;
  for (int b = 0; b < s.batch; ++b) {
    for (int h = 0; h < s.heads; ++h) {
      const auto qm = blocks.q<ConstStrided>(q, b, h);
      const auto km = blocks.kv<ConstStrided>(k, b, h);
      const auto vm = blocks.kv<ConstStrided>(v, b, h);
      float* p = probs + (static_cast<std::size_t>(b) * s.heads + h) * s.seq * s.seq;
      MutStrided pm(p, s.seq, s.seq, Eigen::OuterStride<>(s.seq));
      pm.noalias() = scale * (qm * km.transpose());
      for (int i = 0; i < s.seq; ++i) {  // causal mask + numerically stable softmax per row
        float* row = p + static_cast<std::size_t>(i) * s.seq;
        float mx = -std::numeric_limits<float>::infinity();
        for (int j = 0; j <= i; ++j) mx = row[j] > mx ? row[j] : mx;
        float total = 0;
        for (int j = 0; j <= i; ++j) {
          row[j] = std::exp(row[j] - mx);
          total += row[j];
        }
        const float inv = 1.0f / total;
        for (int j = 0; j <= i; ++j) row[j] *= inv;
        for (int j = i + 1; j < s.seq; ++j) row[j] = 0.0f;
      }
      auto om = blocks.q<MutStrided>(out, b, h);
      om.noalias() = pm * vm;
    }
  }
}

// With S = scale * q k^T and P = softmax(S): dV = P^T dO, dP = dO V^T,
// dS = P * (dP - rowsum(dP * P)), dQ = scale * dS K, dK = scale * dS^T Q.
void CpuBackend::attention_backward(const AttentionShape& s, const float* q, const float* k, const float* v,
                                    const float* probs, const float* dout, float* dq, float* dk, float* dv) {
  const HeadBlocks blocks(s);
  const float scale = blocks.scale;
  const std::size_t kv_count = static_cast<std::size_t>(s.batch) * s.seq * blocks.kv_ld;
  fill(dk, kv_count, 0.0f);
  fill(dv, kv_count, 0.0f);
  RowMatrix ds(s.seq, s.seq);
  for (int b = 0; b < s.batch; ++b) {
    for (int h = 0; h < s.heads; ++h) {
      const auto qm = blocks.q<ConstStrided>(q, b, h);
      const auto km = blocks.kv<ConstStrided>(k, b, h);
      const auto vm = blocks.kv<ConstStrided>(v, b, h);
      const auto dom = blocks.q<ConstStrided>(dout, b, h);
      const float* p = probs + (static_cast<std::size_t>(b) * s.heads + h) * s.seq * s.seq;
      ConstStrided pm(p, s.seq, s.seq, Eigen::OuterStride<>(s.seq));
      auto dqm = blocks.q<MutStrided>(dq, b, h);
      auto dkm = blocks.kv<MutStrided>(dk, b, h);
      auto dvm = blocks.kv<MutStrided>(dv, b, h);
      dvm.noalias() += pm.transpose() * dom;
      ds.noalias() = dom * vm.transpose();
      for (int i = 0; i < s.seq; ++i) {
        const float* prow = p + static_cast<std::size_t>(i) * s.seq;
        float* drow = ds.data() + static_cast<std::size_t>(i) * s.seq;
        float dot = 0;
        for (int j = 0; j <= i; ++j) dot += prow[j] * drow[j];
        for (int j = 0; j <= i; ++j) drow[j] = kernel_math::softmax_input_grad(prow[j], drow[j], dot, scale);
        for (int j = i + 1; j < s.seq; ++j) drow[j] = 0.0f;
      }
      dqm.noalias() = ds * km;
      dkm.noalias() += ds.transpose() * qm;
    }
  }
}

}  // namespace hetsim::exec::HETSIM_CPU_VARIANT
