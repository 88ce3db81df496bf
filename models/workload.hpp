// SPDX-License-Identifier: Apache-2.0
// A workload: the decoder-transformer architecture and the training job settings.
#pragma once
#include <string>

#include "gpu_type.hpp"

namespace hetsim::models {

// Upper bounds of a model's integers, for workload files and suite rows alike: far above any
// published model (GPT-3: 96 layers, hidden 12288, 96 heads, 2048 tokens; Llama 3 405B: 126
// layers, hidden 16384, 128k vocab), and they keep products of these integers far from overflow
// in the cost model.
inline constexpr int kMaxLayers = 100000;
inline constexpr int kMaxWidth = 1 << 20;  ///< hidden and ffn_hidden
inline constexpr int kMaxHeads = 1 << 16;  ///< heads and kv_heads
inline constexpr int kMaxVocab = 1 << 24;
inline constexpr int kMaxSeqLen = 1 << 24;
inline constexpr int kMaxGlobalBatch = 1 << 24;

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
  /// Its parts: one transformer block's, and the LM head's (flops_per_token() = layers x the
  /// first + the second).
  double flops_per_token_per_layer() const;
  double flops_per_token_lm_head() const;
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
  /// FP32 training runs its matmuls on TF32 tensor cores where the part has them (Ampere and
  /// later; GpuType::matmul_dtype); weights, activations and elementwise ops stay FP32. NVIDIA's
  /// NGC PyTorch containers set TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 (MONAI docs, "Precision and
  /// Accelerating"), and PyTorch 1.7-1.11 allowed TF32 by default; Sailor's runs use
  /// nvcr.io/nvidia/pytorch (eth-easl/sailor Dockerfile), and its GH200 layer profiles run 3x
  /// faster than the FP32 CUDA cores allow. false: upstream PyTorch >= 1.12 without the override
  /// (torch.backends.cuda.matmul.allow_tf32 = False), FP32 matmuls on the CUDA cores.
  bool allow_tf32 = true;
  /// Price the kernels of hetsim's own execution engine (exec/: set by exec::as_executed for
  /// `run` and `check`, never read from a file) instead of Megatron-LM's: its attention runs
  /// strided batched GEMMs on the QKV buffer (no layout copies) around one fused
  /// scale-mask-softmax kernel for every shape and dtype, its cross-entropy is one kernel each
  /// way, its linears have no bias, and every TP rank holds the whole embedding and LM head
  /// (exec/cpu/cpu_activation_loss_adam.cpp, exec/gpu/gpu_transformer.cu, exec/runner/).
  bool engine_kernels = false;
};

struct Workload {
  std::string name;
  ModelSpec model;
  TrainingSpec training;
};

}  // namespace hetsim::models
