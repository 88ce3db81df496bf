// SPDX-License-Identifier: Apache-2.0
// Parameter and FLOP counts of a decoder transformer.
//
// Conventions (documented in docs/inputs.md): `activation: gelu` means a GPT-style block
// (LayerNorm with bias, biases on every linear layer); `swiglu` means a Llama-style block
// (RMSNorm, no biases, gated MLP with three matrices). Attention may use grouped-query
// attention (kv_heads < heads): K and V projections have kv_heads * head_dim columns.
#include "workload.hpp"

namespace hetsim::models {

const char* to_string(Activation a) { return a == Activation::kGelu ? "gelu" : "swiglu"; }
const char* to_string(Optimizer o) { return o == Optimizer::kAdam ? "adam" : "sgd"; }

namespace {

bool gpt_style(const ModelSpec& m) { return m.activation == Activation::kGelu; }

/// Weights of the matrices of one block (the part that costs 2 FLOPs per weight per token).
double matmul_params_per_layer(const ModelSpec& m) {
  const double h = m.hidden;
  const double kv = static_cast<double>(m.kv_heads) * m.head_dim();
  const double attention = h * (h + 2.0 * kv) + h * h;  // QKV + output projection
  const double mlp_matrices = gpt_style(m) ? 2.0 : 3.0;  // SwiGLU: gate, up, down (Shazeer 2020)
  return attention + mlp_matrices * h * m.ffn_hidden;
}

}  // namespace

double ModelSpec::params_per_layer() const {
  const double h = hidden;
  const double kv = static_cast<double>(kv_heads) * head_dim();
  double p = matmul_params_per_layer(*this);
  if (gpt_style(*this)) {
    p += (h + 2.0 * kv) + h + ffn_hidden + h;  // biases of QKV, proj, fc1, fc2
    p += 2.0 * 2.0 * h;                        // two LayerNorms (gain + bias)
  } else {
    p += 2.0 * h;                              // two RMSNorms (gain only)
  }
  return p;
}

double ModelSpec::params_embedding() const {
  const double h = hidden;
  double p = static_cast<double>(vocab) * h;        // token embedding
  if (!tied_embeddings) p += static_cast<double>(vocab) * h;  // separate LM head
  if (gpt_style(*this)) p += static_cast<double>(seq_len) * h;  // learned positions (GPT-2/3)
  p += gpt_style(*this) ? 2.0 * h : h;               // final norm
  return p;
}

double ModelSpec::params_total() const { return layers * params_per_layer() + params_embedding(); }

// Model FLOPs per token of one step, forward + backward (backward = 2x forward), no recompute.
// Narayanan et al., SC'21, eq. (3) counts 96*B*s*l*h^2*(1 + s/6h + V/16lh) WITH the recompute
// forward (4 passes); without it the same derivation gives 3 passes:
//   per layer: 3 * (2 * matmul_params + 4*s*h)   [4sh: Q.K^T and attn.V, full (non-causal) count]
//   LM head:   3 * 2 * h * V
// which equals 72*l*h^2*(1 + s/6h + V/12lh) for a GPT block with ffn = 4h and MHA.
double ModelSpec::flops_per_token_per_layer() const {
  return 3.0 * (2.0 * matmul_params_per_layer(*this) + 4.0 * seq_len * static_cast<double>(hidden));
}

double ModelSpec::flops_per_token_lm_head() const { return 3.0 * 2.0 * static_cast<double>(hidden) * vocab; }

double ModelSpec::flops_per_token() const { return layers * flops_per_token_per_layer() + flops_per_token_lm_head(); }

}  // namespace hetsim::models
