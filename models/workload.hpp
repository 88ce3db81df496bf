// SPDX-License-Identifier: Apache-2.0
// A workload: the decoder-transformer architecture and the training job settings.
#pragma once
#include <string>

#include "gpu_type.hpp"

namespace hetsim::models {

enum class Activation { kGelu, kSwiglu };
enum class Optimizer { kAdam, kSgd };
const char* to_string(Activation a);
const char* to_string(Optimizer o);

struct ModelSpec {
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;          ///< = heads unless grouped-query attention
  int ffn_hidden = 0;        ///< default 4*hidden (gelu); Llama gives it explicitly
  int vocab = 0;
  int seq_len = 0;
  Activation activation = Activation::kGelu;
  bool tied_embeddings = true;
  /// Hidden and attention dropout probability. 0.1 is GPT-2/GPT-3's and Megatron-LM's default
  /// (--hidden-dropout, --attention-dropout); Llama and MPT train without dropout. Zero removes
  /// the dropout masks from activation memory and the dropout work from the kernels.
  double dropout = 0.1;
  bool has_dropout() const { return dropout > 0; }

  int head_dim() const { return hidden / heads; }
  /// Parameters of one transformer block (attention + MLP + 2 norms).
  double params_per_layer() const;
  /// Embedding (+ untied LM head) + final norm.
  double params_embedding() const;
  double params_total() const;
  /// Model FLOPs per token of one training step (forward + backward, no recompute):
  /// 6*params-matmul term plus attention (Narayanan et al. SC'21 eq. 3 generalised to GQA/SwiGLU).
  double flops_per_token() const;
};

struct TrainingSpec {
  int global_batch = 0;      ///< sequences per optimizer step
  Dtype dtype = Dtype::kBf16;
  Optimizer optimizer = Optimizer::kAdam;
  bool flash_attention = false;
  /// Reduce 16-bit gradients across data-parallel replicas in fp32 (DeepSpeed ds_config
  /// `fp32_allreduce`, Megatron-LM `--accumulate-allreduce-grads-in-fp32`): 4 bytes a parameter
  /// on the wire instead of 2. bf16, tf32 and fp32 reduce in fp32 regardless.
  bool fp32_grad_allreduce = false;
};

struct Workload {
  std::string name;
  ModelSpec model;
  TrainingSpec training;
};

}  // namespace hetsim::models
