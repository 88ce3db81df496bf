// SPDX-License-Identifier: Apache-2.0
// Cost of one pipeline stage per micro-batch.
#include "stage_cost.hpp"

#include <algorithm>

namespace hetsim::models {

namespace {

/// Accumulates the sums of a pass; optionally records the ops. With `overlap`
/// (Plan::tp_comm_overlap) a collective beside its GEMM (OpSink::collective) runs during it:
/// the pair takes max(GEMM, collective), so only the collective's excess is TP time.
class PassSink : public OpSink {
 public:
  PassSink(const GroupCost& tp_group, const EfficiencyModel& eff, std::vector<Op>* ops, bool overlap = false,
           bool host_synchronized = true)
      : tp_group_(tp_group), eff_(eff), ops_(ops), overlap_(overlap), host_synchronized_(host_synchronized) {}

  void compute(const char* name, double gpu_s, int kernels, double flop) override {
    cost.gpu_s += gpu_s;
    double exposed = 0;
    if (pending_gather_s_ >= 0) {  // the all-gather before this GEMM runs during it
      exposed = std::max(0.0, pending_gather_s_ - gpu_s);
      cost.tp_comm_s += exposed;
      pending_gather_s_ = -1;
    }
    cost.launch(kernels * eff_.framework_op_host_s, gpu_s + exposed);
    last_compute_s_ = gpu_s;
    cost.flop += flop;
    if (!recompute()) cost.model_flop += flop;
    if (ops_) {
      Op op;
      op.kind = OpKind::kCompute;
      op.name = name;
      op.duration_s = gpu_s;
      op.kernels = kernels;
      op.flop = flop;
      op.recompute = recompute();
      ops_->push_back(std::move(op));
    }
  }

  void collective(OpKind kind, const char* name, double size_bytes, bool beside_gemm) override {
    const CollectiveKind ck = kind == OpKind::kTpAllGather       ? CollectiveKind::kAllGather
                              : kind == OpKind::kTpReduceScatter ? CollectiveKind::kReduceScatter
                                                                 : CollectiveKind::kAllReduce;
    const double t = collective_time(ck, size_bytes, tp_group_);
    const bool overlapped = overlap_ && beside_gemm && kind != OpKind::kTpAllReduce && t > 0;
    if (overlapped && kind == OpKind::kTpAllGather) {
      pending_gather_s_ = t;  // priced with the GEMM that follows (compute)
      cost.launch(eff_.framework_op_host_s, 0);
    } else if (overlapped) {  // reduce-scatter of the GEMM just emitted
      const double exposed = std::max(0.0, t - std::max(0.0, last_compute_s_));
      cost.tp_comm_s += exposed;
      cost.launch(eff_.framework_op_host_s, exposed);
    } else {
      cost.tp_comm_s += t;
      cost.launch(eff_.framework_op_host_s, t);
    }
    last_compute_s_ = -1;
    if (ops_) {
      Op op;
      op.kind = kind;
      op.name = name;
      op.size_bytes = size_bytes;
      op.duration_s = t;
      op.kernels = 1;
      op.recompute = recompute();
      op.overlapped = overlapped;
      ops_->push_back(std::move(op));
    }
  }

  /// Host work of the framework that launches no kernel (per-pass bookkeeping).
  void host_only(double host_s) { cost.launch(host_s, 0); }

  /// Appends the host stall so that the recorded ops sum to the pass's wall time.
  void close() {
    if (pending_gather_s_ >= 0) {  // no GEMM came after it (the layer code always emits one)
      cost.tp_comm_s += pending_gather_s_;
      cost.launch(0, pending_gather_s_);
      pending_gather_s_ = -1;
    }
    cost.close_pass(host_synchronized_);
    if (ops_ && cost.stall_s > 0) {
      Op op;
      op.kind = OpKind::kCompute;
      op.name = "host_stall";
      op.duration_s = cost.stall_s;
      ops_->push_back(std::move(op));
    }
  }

  PassCost cost;

 private:
  const GroupCost& tp_group_;
  const EfficiencyModel& eff_;
  std::vector<Op>* ops_;
  bool overlap_;
  bool host_synchronized_;        ///< !Plan::overlap_p2p_comm (PassCost::close_pass)
  double pending_gather_s_ = -1;  ///< an overlapped all-gather waiting for its GEMM
  double last_compute_s_ = -1;    ///< the compute op just emitted (-1: a collective came after it)
};

void add(PassCost& into, const PassCost& c, double times = 1) {
  into.gpu_s += times * c.gpu_s;
  into.tp_comm_s += times * c.tp_comm_s;
  into.host_s += times * c.host_s;
  into.stall_s += times * c.stall_s;
  into.flop += times * c.flop;
  into.model_flop += times * c.model_flop;
}

}  // namespace

const NodeType& slowest_node_type(const Cluster& cluster, const std::vector<int>& gpus, const TrainingSpec& training) {
  const NodeType* best = &cluster.node_type_of_gpu(gpus.front());
  auto speed = [&training](const NodeType& nt) {
    return nt.gpu.sustained_flops(nt.gpu.matmul_dtype(training.dtype, training.allow_tf32));
  };
  for (int g : gpus) {
    const NodeType& nt = cluster.node_type_of_gpu(g);
    if (&nt != best && speed(nt) < speed(*best)) best = &nt;
  }
  return *best;
}

double stage_params(const ModelSpec& m, int layers, int tp, bool first, bool last, int pp, bool whole_vocab) {
  const bool gpt = m.activation == Activation::kGelu;
  double p = layers * m.params_per_layer() / tp;
  const double word = static_cast<double>(m.vocab) * m.hidden / (whole_vocab ? 1 : tp);  // vocab-parallel
  if (first) p += word + (gpt ? static_cast<double>(m.seq_len) * m.hidden : 0.0);
  if (last) {
    p += gpt ? 2.0 * m.hidden : m.hidden;                  // final norm
    if (!m.tied_embeddings || pp > 1) p += word;           // LM head (or its tied copy)
  }
  return p;
}

LayerShape layer_shape(const Workload& w, const Plan& plan, int tp) {
  const ModelSpec& m = w.model;
  LayerShape s;
  s.seq = m.seq_len;
  s.micro = plan.micro_batch;
  s.hidden = m.hidden;
  s.heads = m.heads;
  s.kv_heads = m.kv_heads > 0 ? m.kv_heads : m.heads;
  s.ffn = m.ffn_hidden > 0 ? m.ffn_hidden : 4.0 * m.hidden;
  s.vocab = m.vocab;
  s.tp = tp;
  const Dtype d = w.training.dtype;
  s.act_bytes = activation_bytes(d);
  s.gemm_bytes = dtype_bytes(d);
  s.swiglu = m.activation == Activation::kSwiglu;
  s.flash = w.training.flash_attention;
  s.dropout = m.has_dropout();
  s.engine_kernels = w.training.engine_kernels;
  s.sequence_parallel = plan.sequence_parallel && tp > 1;
  return s;
}

namespace {

/// Keeps chunk c's pass walls when it is the stage's first or last (StageCost::first_chunk).
void note_chunk(StageCost& out, int c, int v, const PassCost& forward, const PassCost& backward) {
  const StageTimes walls{forward.wall_s(), backward.wall_s()};
  if (c == 0) out.first_chunk = walls;
  if (c == v - 1) out.last_chunk = walls;
}

}  // namespace

StageCost stage_cost(const StageShape& shape, const Workload& w, const Plan& plan, int pp,
                     std::vector<ChunkWork>* ops, LayerCostMemo* layers) {
  const GpuType& gpu = shape.node_type->gpu;
  DeviceRates d = DeviceRates::of(gpu, gpu.matmul_dtype(w.training.dtype, w.training.allow_tf32));
  if (w.training.engine_kernels) {
    // hetsim's execution engine launches its kernels from C++ and waits for each op (exec/runner
    // OpTimer): no framework dispatch per kernel and no per-pass Python around them. What it
    // spends per kernel is the launch, which kernel_launch_s already charges. (The framework
    // figures are PyTorch's: 49 us a kernel, 1.5 ms a pass, 13 of the 61 ms the calibrated model
    // gave a 45 ms step of a 4-layer GPT on an H200 where the engine's ops tile the step, 2026-12-04.)
    d.eff.framework_op_host_s = 0;
    d.eff.framework_pass_host_s = 0;
  }
  const LayerShape s = layer_shape(w, plan, shape.tp);
  const bool overlap = plan.tp_comm_overlap && s.sequence_parallel;
  const bool synced = !plan.overlap_p2p_comm;
  const int v = std::max(1, plan.interleave);
  StageCost out;
  out.params = stage_params(w.model, shape.layers * v, shape.tp, shape.first, shape.last, pp, w.training.engine_kernels);

  if (!ops) {
    // Fast path: one layer's sums times the layer count.
    LayerCostMemo::Entry computed;
    const LayerCostMemo::Entry* layer = layers ? layers->find(shape.node_type, shape.tp_group) : nullptr;
    if (!layer) {
      PassSink lf(shape.tp_group, d.eff, nullptr, overlap), lb(shape.tp_group, d.eff, nullptr, overlap);
      emit_layer_forward(s, d, lf);
      emit_layer_backward(s, d, plan.recompute, lb);
      computed = {shape.node_type, shape.tp_group, lf.cost, lb.cost};
      layer = layers ? layers->add(computed) : nullptr;
      if (!layer) layer = &computed;
    }
    for (int c = 0; c < v; ++c) {
      PassSink f(shape.tp_group, d.eff, nullptr, overlap), b(shape.tp_group, d.eff, nullptr, overlap);
      f.host_only(d.eff.framework_pass_host_s);
      b.host_only(d.eff.framework_pass_host_s);
      if (shape.first && c == 0) emit_embedding_forward(s, d, f);
      f.cost.launch_repeated(layer->forward, shape.layers);
      if (shape.last && c == v - 1) {
        emit_head_forward(s, d, f);
        emit_head_backward(s, d, b);
      }
      b.cost.launch_repeated(layer->backward, shape.layers);
      if (shape.first && c == 0) emit_embedding_backward(s, d, b);
      f.cost.close_pass(synced);
      b.cost.close_pass(synced);
      add(out.forward, f.cost);
      add(out.backward, b.cost);
      note_chunk(out, c, v, f.cost, b.cost);
    }
    return out;
  }

  ops->assign(v, ChunkWork{});
  for (int c = 0; c < v; ++c) {
    ChunkWork& chunk = (*ops)[c];
    PassSink f(shape.tp_group, d.eff, &chunk.forward, overlap, synced);
    f.host_only(d.eff.framework_pass_host_s);
    if (shape.first && c == 0) emit_embedding_forward(s, d, f);
    for (int l = 0; l < shape.layers; ++l) emit_layer_forward(s, d, f);
    if (shape.last && c == v - 1) emit_head_forward(s, d, f);
    f.close();
    PassSink b(shape.tp_group, d.eff, &chunk.backward, overlap, synced);
    b.host_only(d.eff.framework_pass_host_s);
    if (shape.last && c == v - 1) emit_head_backward(s, d, b);
    for (int l = 0; l < shape.layers; ++l) emit_layer_backward(s, d, plan.recompute, b);
    if (shape.first && c == 0) emit_embedding_backward(s, d, b);
    b.close();
    add(out.forward, f.cost);
    add(out.backward, b.cost);
    note_chunk(out, c, v, f.cost, b.cost);
  }
  return out;
}

}  // namespace hetsim::models
