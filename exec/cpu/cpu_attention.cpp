// SPDX-License-Identifier: Apache-2.0
// CPU backend: causal multi-head (grouped-query) attention, per (batch, head) with Eigen GEMMs.
#include <Eigen/Core>
#include <cmath>
#include <limits>

#include "cpu/cpu_backend.hpp"

namespace hetsim::exec::HETSIM_CPU_VARIANT {
namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstStrided = Eigen::Map<const RowMatrix, Eigen::Unaligned, Eigen::OuterStride<>>;
using MutStrided = Eigen::Map<RowMatrix, Eigen::Unaligned, Eigen::OuterStride<>>;

// Offset of the [seq, head_dim] block of batch b, head h in a [batch*seq, heads*head_dim] matrix.
std::size_t block(const AttentionShape& s, int b, int h, int heads) {
  return static_cast<std::size_t>(b) * s.seq * heads * s.head_dim + static_cast<std::size_t>(h) * s.head_dim;
}

}  // namespace

void CpuBackend::attention_forward(const AttentionShape& s, const float* q, const float* k, const float* v,
                                   float* probs, float* out) {
  const int q_ld = s.heads * s.head_dim;
  const int kv_ld = s.kv_heads * s.head_dim;
  const int group = s.heads / s.kv_heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim));
  for (int b = 0; b < s.batch; ++b) {
    for (int h = 0; h < s.heads; ++h) {
      const int kvh = h / group;
      ConstStrided qm(q + block(s, b, h, s.heads), s.seq, s.head_dim, Eigen::OuterStride<>(q_ld));
      ConstStrided km(k + block(s, b, kvh, s.kv_heads), s.seq, s.head_dim, Eigen::OuterStride<>(kv_ld));
      ConstStrided vm(v + block(s, b, kvh, s.kv_heads), s.seq, s.head_dim, Eigen::OuterStride<>(kv_ld));
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
      MutStrided om(out + block(s, b, h, s.heads), s.seq, s.head_dim, Eigen::OuterStride<>(q_ld));
      om.noalias() = pm * vm;
    }
  }
}

// With S = scale * q k^T and P = softmax(S): dV = P^T dO, dP = dO V^T,
// dS = P * (dP - rowsum(dP * P)), dQ = scale * dS K, dK = scale * dS^T Q.
void CpuBackend::attention_backward(const AttentionShape& s, const float* q, const float* k, const float* v,
                                    const float* probs, const float* dout, float* dq, float* dk, float* dv) {
  const int q_ld = s.heads * s.head_dim;
  const int kv_ld = s.kv_heads * s.head_dim;
  const int group = s.heads / s.kv_heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim));
  const std::size_t kv_count = static_cast<std::size_t>(s.batch) * s.seq * kv_ld;
  fill(dk, kv_count, 0.0f);
  fill(dv, kv_count, 0.0f);
  RowMatrix ds(s.seq, s.seq);
  for (int b = 0; b < s.batch; ++b) {
    for (int h = 0; h < s.heads; ++h) {
      const int kvh = h / group;
      ConstStrided qm(q + block(s, b, h, s.heads), s.seq, s.head_dim, Eigen::OuterStride<>(q_ld));
      ConstStrided km(k + block(s, b, kvh, s.kv_heads), s.seq, s.head_dim, Eigen::OuterStride<>(kv_ld));
      ConstStrided vm(v + block(s, b, kvh, s.kv_heads), s.seq, s.head_dim, Eigen::OuterStride<>(kv_ld));
      ConstStrided dom(dout + block(s, b, h, s.heads), s.seq, s.head_dim, Eigen::OuterStride<>(q_ld));
      const float* p = probs + (static_cast<std::size_t>(b) * s.heads + h) * s.seq * s.seq;
      ConstStrided pm(p, s.seq, s.seq, Eigen::OuterStride<>(s.seq));
      MutStrided dqm(dq + block(s, b, h, s.heads), s.seq, s.head_dim, Eigen::OuterStride<>(q_ld));
      MutStrided dkm(dk + block(s, b, kvh, s.kv_heads), s.seq, s.head_dim, Eigen::OuterStride<>(kv_ld));
      MutStrided dvm(dv + block(s, b, kvh, s.kv_heads), s.seq, s.head_dim, Eigen::OuterStride<>(kv_ld));
      dvm.noalias() += pm.transpose() * dom;
      ds.noalias() = dom * vm.transpose();
      for (int i = 0; i < s.seq; ++i) {
        const float* prow = p + static_cast<std::size_t>(i) * s.seq;
        float* drow = ds.data() + static_cast<std::size_t>(i) * s.seq;
        float dot = 0;
        for (int j = 0; j <= i; ++j) dot += prow[j] * drow[j];
        for (int j = 0; j <= i; ++j) drow[j] = prow[j] * (drow[j] - dot) * scale;
        for (int j = i + 1; j < s.seq; ++j) drow[j] = 0.0f;
      }
      dqm.noalias() = ds * km;
      dkm.noalias() += ds.transpose() * qm;
    }
  }
}

}  // namespace hetsim::exec::HETSIM_CPU_VARIANT
