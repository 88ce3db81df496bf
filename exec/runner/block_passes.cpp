// SPDX-License-Identifier: Apache-2.0
// RankRunner: one transformer block and the LM head with loss, forward and backward, on this
// rank's TP shard. Weights are stored [in, out] row-major, so a linear layer is Y = X W.
#include "runner/rank_runner.hpp"
#include "runner/rank_runner_detail.hpp"

namespace hetsim::exec {
namespace {
constexpr float kLayerNormEpsilon = 1e-5f;  // GPT-2 (openai/gpt-2 src/model.py norm()), PyTorch LayerNorm default
}  // namespace

void RankRunner::layer_forward(int layer, const float* x, float* out, LayerActs& a, int mb, int chunk) {
  const LayerWeights& w = layer_weights_.at(layer);
  const int t = tokens_per_micro_batch_;
  const int h = model_.hidden;
  const int d = model_.head_dim();
  const int hq = model_.heads / place_.tp * d;     // local query width
  const int hkv = model_.kv_heads / place_.tp * d; // local key/value width
  const int f = model_.ffn_hidden / place_.tp;     // local MLP width
  const bool swiglu = model_.activation == models::Activation::kSwiglu;
  const std::size_t th = static_cast<std::size_t>(t) * h;
  const bool sp = sequence_parallel(place_.stage);
  const int rows = local_rows();                          // rows of x, x2, out (t / tp with SP)
  const std::size_t rh = static_cast<std::size_t>(rows) * h;
  auto P = [&](const ParamSpec* s) { return weights_.get() + s->offset; };
  auto alloc = [&](std::size_t n) { return DeviceArray<float>(backend_, n); };
  a.x = x;
  a.a = alloc(rh);
  a.mean1 = alloc(rows);
  a.rstd1 = alloc(rows);
  {
    OpTimer timer(*this, forward_phase_, "ln_attn", OpClass::kCompute, mb, chunk, gemm_shape(rows, h, 1));
    backend_.layer_norm_forward(rows, h, kLayerNormEpsilon, x, P(w.ln1_gamma), P(w.ln1_beta), a.a.get(),
                                a.mean1.get(), a.rstd1.get());
  }
  if (sp) {
    a.a_full = alloc(th);
    tp_all_gather_rows(a.a.get(), a.a_full.get(), mb, chunk, forward_phase_, "tp_ag_attn");
  }
  a.q = alloc(static_cast<std::size_t>(t) * hq);
  a.k = alloc(static_cast<std::size_t>(t) * hkv);
  a.v = alloc(static_cast<std::size_t>(t) * hkv);
  {
    OpTimer timer(*this, forward_phase_, "qkv", OpClass::kCompute, mb, chunk, gemm_shape(t, hq + 2 * hkv, h));
    backend_.gemm(Trans::kNo, Trans::kNo, t, hq, h, 1.0f, a.a_in(), h, P(w.wq), hq, 0.0f, a.q.get(), hq);
    backend_.gemm(Trans::kNo, Trans::kNo, t, hkv, h, 1.0f, a.a_in(), h, P(w.wk), hkv, 0.0f, a.k.get(), hkv);
    backend_.gemm(Trans::kNo, Trans::kNo, t, hkv, h, 1.0f, a.a_in(), h, P(w.wv), hkv, 0.0f, a.v.get(), hkv);
  }
  const AttentionShape shape{plan_.micro_batch, model_.seq_len, model_.heads / place_.tp,
                             model_.kv_heads / place_.tp, d};
  a.probs = alloc(shape.probs_count());
  a.o = alloc(static_cast<std::size_t>(t) * hq);
  {
    OpTimer timer(*this, forward_phase_, "attention", OpClass::kCompute, mb, chunk,
                  gemm_shape(model_.seq_len, model_.seq_len, d));
    backend_.attention_forward(shape, a.q.get(), a.k.get(), a.v.get(), a.probs.get(), a.o.get());
  }
  // Selective recompute (Korthikanti et al. 2022, section 4): the attention probabilities are
  // not kept; the backward recomputes them from Q and K.
  if (plan_.recompute == models::Recompute::kSelective) a.probs.reset();
  a.x2 = alloc(rh);
  {
    DeviceArray<float> partial = sp ? alloc(th) : DeviceArray<float>();
    float* y = sp ? partial.get() : a.x2.get();
    {
      OpTimer timer(*this, forward_phase_, "attn_proj", OpClass::kCompute, mb, chunk, gemm_shape(t, h, hq));
      backend_.gemm(Trans::kNo, Trans::kNo, t, h, hq, 1.0f, a.o.get(), hq, P(w.wo), h, 0.0f, y, h);
    }
    tp_reduce_rows(y, a.x2.get(), mb, chunk, forward_phase_, "tp_attn");
  }
  {
    OpTimer timer(*this, forward_phase_, "residual", OpClass::kCompute, mb, chunk, std::to_string(rh));
    backend_.axpy(rh, 1.0f, x, a.x2.get());
  }
  a.b = alloc(rh);
  a.mean2 = alloc(rows);
  a.rstd2 = alloc(rows);
  {
    OpTimer timer(*this, forward_phase_, "ln_mlp", OpClass::kCompute, mb, chunk, gemm_shape(rows, h, 1));
    backend_.layer_norm_forward(rows, h, kLayerNormEpsilon, a.x2.get(), P(w.ln2_gamma), P(w.ln2_beta), a.b.get(),
                                a.mean2.get(), a.rstd2.get());
  }
  if (sp) {
    a.b_full = alloc(th);
    tp_all_gather_rows(a.b.get(), a.b_full.get(), mb, chunk, forward_phase_, "tp_ag_mlp");
  }
  const std::size_t tf = static_cast<std::size_t>(t) * f;
  a.u = alloc(tf);
  a.z = alloc(tf);
  if (swiglu) a.up = alloc(tf);
  {
    OpTimer timer(*this, forward_phase_, "mlp_in", OpClass::kCompute, mb, chunk, gemm_shape(t, swiglu ? 2 * f : f, h));
    backend_.gemm(Trans::kNo, Trans::kNo, t, f, h, 1.0f, a.b_in(), h, P(w.w1), f, 0.0f, a.u.get(), f);
    if (swiglu) backend_.gemm(Trans::kNo, Trans::kNo, t, f, h, 1.0f, a.b_in(), h, P(w.wup), f, 0.0f, a.up.get(), f);
  }
  {
    OpTimer timer(*this, forward_phase_, swiglu ? "swiglu" : "gelu", OpClass::kCompute, mb, chunk, std::to_string(tf));
    if (swiglu) backend_.swiglu_forward(tf, a.u.get(), a.up.get(), a.z.get());
    else backend_.gelu_forward(tf, a.u.get(), a.z.get());
  }
  {
    DeviceArray<float> partial = sp ? alloc(th) : DeviceArray<float>();
    float* y = sp ? partial.get() : out;
    {
      OpTimer timer(*this, forward_phase_, "mlp_out", OpClass::kCompute, mb, chunk, gemm_shape(t, h, f));
      backend_.gemm(Trans::kNo, Trans::kNo, t, h, f, 1.0f, a.z.get(), f, P(w.w2), h, 0.0f, y, h);
    }
    tp_reduce_rows(y, out, mb, chunk, forward_phase_, "tp_mlp");
  }
  OpTimer timer(*this, forward_phase_, "residual", OpClass::kCompute, mb, chunk, std::to_string(rh));
  backend_.axpy(rh, 1.0f, a.x2.get(), out);
}

void RankRunner::tp_reduce_rows(float* partial_full, float* local, int mb, int chunk, const char* phase,
                                const char* op) {
  if (!sequence_parallel(place_.stage)) {  // partial_full == local: all-reduce in place
    tp_all_reduce(partial_full, static_cast<std::size_t>(tokens_per_micro_batch_) * model_.hidden, mb, chunk, phase, op);
    return;
  }
  const std::size_t n = static_cast<std::size_t>(local_rows()) * model_.hidden;
  OpTimer t(*this, phase, op, OpClass::kTpComm, mb, chunk, bytes_shape(n * place_.tp));
  device_reduce_scatter(partial_full, local, n, layout_.tp_group(place_.replica, place_.stage));
}

void RankRunner::layer_backward(int layer, LayerActs& a, const float* dout, float* din, int mb, int chunk) {
  const LayerWeights& w = layer_weights_.at(layer);
  const int t = tokens_per_micro_batch_;
  const int h = model_.hidden;
  const int d = model_.head_dim();
  const int hq = model_.heads / place_.tp * d;
  const int hkv = model_.kv_heads / place_.tp * d;
  const int f = model_.ffn_hidden / place_.tp;
  const bool swiglu = model_.activation == models::Activation::kSwiglu;
  const std::size_t th = static_cast<std::size_t>(t) * h;
  const std::size_t tf = static_cast<std::size_t>(t) * f;
  const bool sp = sequence_parallel(place_.stage);
  const int rows = local_rows();
  const std::size_t rh = static_cast<std::size_t>(rows) * h;
  auto P = [&](const ParamSpec* s) { return weights_.get() + s->offset; };
  auto G = [&](const ParamSpec* s) { return grads_.get() + s->offset; };
  auto alloc = [&](std::size_t n) { return DeviceArray<float>(backend_, n); };

  // MLP: out = x2 + z W2, z = act(b W1 [, b Wup]), b = LN2(x2). With sequence parallelism the
  // backward of the reduce-scatter is an all-gather and the reverse (Korthikanti et al. 2022).
  DeviceArray<float> dout_full = sp ? alloc(th) : DeviceArray<float>();
  if (sp) tp_all_gather_rows(dout, dout_full.get(), mb, chunk, "backward", "tp_ag_mlp");
  const float* dout_in = sp ? dout_full.get() : dout;
  DeviceArray<float> dz = alloc(tf), du = alloc(tf), db = alloc(th), dx2 = alloc(rh);
  DeviceArray<float> dup = swiglu ? alloc(tf) : DeviceArray<float>();
  {
    OpTimer timer(*this, "backward", "mlp_out", OpClass::kCompute, mb, chunk, gemm_shape(t, h, f));
    backend_.gemm(Trans::kNo, Trans::kYes, t, f, h, 1.0f, dout_in, h, P(w.w2), h, 0.0f, dz.get(), f);
    backend_.gemm(Trans::kYes, Trans::kNo, f, h, t, 1.0f, a.z.get(), f, dout_in, h, 1.0f, G(w.w2), h);
  }
  dout_full.reset();
  {
    OpTimer timer(*this, "backward", swiglu ? "swiglu" : "gelu", OpClass::kCompute, mb, chunk, std::to_string(tf));
    if (swiglu) backend_.swiglu_backward(tf, a.u.get(), a.up.get(), dz.get(), du.get(), dup.get());
    else backend_.gelu_backward(tf, a.u.get(), dz.get(), du.get());
  }
  {
    OpTimer timer(*this, "backward", "mlp_in", OpClass::kCompute, mb, chunk, gemm_shape(t, swiglu ? 2 * f : f, h));
    backend_.gemm(Trans::kNo, Trans::kYes, t, h, f, 1.0f, du.get(), f, P(w.w1), f, 0.0f, db.get(), h);
    backend_.gemm(Trans::kYes, Trans::kNo, h, f, t, 1.0f, a.b_in(), h, du.get(), f, 1.0f, G(w.w1), f);
    if (swiglu) {
      backend_.gemm(Trans::kNo, Trans::kYes, t, h, f, 1.0f, dup.get(), f, P(w.wup), f, 1.0f, db.get(), h);
      backend_.gemm(Trans::kYes, Trans::kNo, h, f, t, 1.0f, a.b_in(), h, dup.get(), f, 1.0f, G(w.wup), f);
    }
  }
  DeviceArray<float> db_local = sp ? alloc(rh) : DeviceArray<float>();
  tp_reduce_rows(db.get(), sp ? db_local.get() : db.get(), mb, chunk, "backward", "tp_mlp");
  {
    OpTimer timer(*this, "backward", "ln_mlp", OpClass::kCompute, mb, chunk, gemm_shape(rows, h, 1));
    backend_.copy_bytes(dx2.get(), dout, rh * sizeof(float));  // residual branch
    backend_.layer_norm_backward(rows, h, a.x2.get(), P(w.ln2_gamma), a.mean2.get(), a.rstd2.get(),
                                 sp ? db_local.get() : db.get(), dx2.get(), G(w.ln2_gamma), G(w.ln2_beta));
  }
  dz.reset();
  du.reset();
  dup.reset();
  db.reset();
  db_local.reset();
  DeviceArray<float> dx2_full = sp ? alloc(th) : DeviceArray<float>();
  if (sp) tp_all_gather_rows(dx2.get(), dx2_full.get(), mb, chunk, "backward", "tp_ag_attn");
  const float* dx2_in = sp ? dx2_full.get() : dx2.get();
  // Attention: x2 = x + o Wo, o = attn(q, k, v), q|k|v = a W{q,k,v}, a = LN1(x).
  DeviceArray<float> dO = alloc(static_cast<std::size_t>(t) * hq);
  {
    OpTimer timer(*this, "backward", "attn_proj", OpClass::kCompute, mb, chunk, gemm_shape(t, h, hq));
    backend_.gemm(Trans::kNo, Trans::kYes, t, hq, h, 1.0f, dx2_in, h, P(w.wo), h, 0.0f, dO.get(), hq);
    backend_.gemm(Trans::kYes, Trans::kNo, hq, h, t, 1.0f, a.o.get(), hq, dx2_in, h, 1.0f, G(w.wo), h);
  }
  dx2_full.reset();
  const AttentionShape shape{plan_.micro_batch, model_.seq_len, model_.heads / place_.tp,
                             model_.kv_heads / place_.tp, d};
  DeviceArray<float> dq = alloc(static_cast<std::size_t>(t) * hq);
  DeviceArray<float> dk = alloc(static_cast<std::size_t>(t) * hkv), dv = alloc(static_cast<std::size_t>(t) * hkv);
  if (!a.probs.get()) {
    OpTimer timer(*this, "backward", "attention_recompute", OpClass::kCompute, mb, chunk,
                  gemm_shape(model_.seq_len, model_.seq_len, d));
    a.probs = alloc(shape.probs_count());
    DeviceArray<float> scratch = alloc(static_cast<std::size_t>(t) * hq);
    backend_.attention_forward(shape, a.q.get(), a.k.get(), a.v.get(), a.probs.get(), scratch.get());
  }
  {
    OpTimer timer(*this, "backward", "attention", OpClass::kCompute, mb, chunk,
                  gemm_shape(model_.seq_len, model_.seq_len, d));
    backend_.attention_backward(shape, a.q.get(), a.k.get(), a.v.get(), a.probs.get(), dO.get(), dq.get(), dk.get(),
                                dv.get());
  }
  DeviceArray<float> da = alloc(th);
  {
    OpTimer timer(*this, "backward", "qkv", OpClass::kCompute, mb, chunk, gemm_shape(t, hq + 2 * hkv, h));
    backend_.gemm(Trans::kNo, Trans::kYes, t, h, hq, 1.0f, dq.get(), hq, P(w.wq), hq, 0.0f, da.get(), h);
    backend_.gemm(Trans::kNo, Trans::kYes, t, h, hkv, 1.0f, dk.get(), hkv, P(w.wk), hkv, 1.0f, da.get(), h);
    backend_.gemm(Trans::kNo, Trans::kYes, t, h, hkv, 1.0f, dv.get(), hkv, P(w.wv), hkv, 1.0f, da.get(), h);
    backend_.gemm(Trans::kYes, Trans::kNo, h, hq, t, 1.0f, a.a_in(), h, dq.get(), hq, 1.0f, G(w.wq), hq);
    backend_.gemm(Trans::kYes, Trans::kNo, h, hkv, t, 1.0f, a.a_in(), h, dk.get(), hkv, 1.0f, G(w.wk), hkv);
    backend_.gemm(Trans::kYes, Trans::kNo, h, hkv, t, 1.0f, a.a_in(), h, dv.get(), hkv, 1.0f, G(w.wv), hkv);
  }
  DeviceArray<float> da_local = sp ? alloc(rh) : DeviceArray<float>();
  tp_reduce_rows(da.get(), sp ? da_local.get() : da.get(), mb, chunk, "backward", "tp_attn");
  OpTimer timer(*this, "backward", "ln_attn", OpClass::kCompute, mb, chunk, gemm_shape(rows, h, 1));
  backend_.copy_bytes(din, dx2.get(), rh * sizeof(float));
  backend_.layer_norm_backward(rows, h, a.x, P(w.ln1_gamma), a.mean1.get(), a.rstd1.get(),
                               sp ? da_local.get() : da.get(), din, G(w.ln1_gamma), G(w.ln1_beta));
}

// The LM head is computed in full on every TP rank of the last stage (replicated), so the loss
// and its gradient need no TP collective; only TP rank 0 counts the loss.
const ParamSpec* RankRunner::head_weight() const {
  if (!model_.tied_embeddings) return by_name_.at("head.w");
  if (!layout_.has_tied_copy(place_.replica)) return by_name_.at("embed.wte");
  for (const auto& p : params_.params) {
    if (!p.canonical) return &p;
  }
  throw std::logic_error("tied LM-head copy missing");
}

void RankRunner::head_forward(ChunkActs& acts, const float* x, int mb, int chunk) {
  const int t = tokens_per_micro_batch_;
  const int h = model_.hidden;
  const int vocab = model_.vocab;
  const int rows = local_rows();
  const std::size_t tv = static_cast<std::size_t>(t) * vocab;
  DeviceArray<float> xf_local(backend_, static_cast<std::size_t>(rows) * h);
  acts.mean_f = DeviceArray<float>(backend_, rows);
  acts.rstd_f = DeviceArray<float>(backend_, rows);
  {
    OpTimer timer(*this, "forward", "ln_final", OpClass::kCompute, mb, chunk, gemm_shape(rows, h, 1));
    backend_.layer_norm_forward(rows, h, kLayerNormEpsilon, x, param("final.ln.gamma"), param("final.ln.beta"),
                                xf_local.get(), acts.mean_f.get(), acts.rstd_f.get());
  }
  if (sequence_parallel(place_.stage)) {
    acts.xf = DeviceArray<float>(backend_, static_cast<std::size_t>(t) * h);
    tp_all_gather_rows(xf_local.get(), acts.xf.get(), mb, chunk, "forward", "tp_ag_head");
  } else {
    acts.xf = std::move(xf_local);
  }
  DeviceArray<float> logits(backend_, tv);
  const float* w = weights_.get() + head_weight()->offset;
  {
    OpTimer timer(*this, "forward", "lm_head", OpClass::kCompute, mb, chunk, gemm_shape(t, vocab, h));
    if (model_.tied_embeddings) {  // logits = xf wte^T, wte [vocab, h]
      backend_.gemm(Trans::kNo, Trans::kYes, t, vocab, h, 1.0f, acts.xf.get(), h, w, h, 0.0f, logits.get(), vocab);
    } else {
      backend_.gemm(Trans::kNo, Trans::kNo, t, vocab, h, 1.0f, acts.xf.get(), h, w, vocab, 0.0f, logits.get(), vocab);
    }
  }
  acts.probs = DeviceArray<float>(backend_, tv);
  DeviceArray<float> losses(backend_, t);
  OpTimer timer(*this, "forward", "cross_entropy", OpClass::kCompute, mb, chunk, gemm_shape(t, vocab, 1));
  backend_.cross_entropy_forward(t, vocab, logits.get(), acts.targets.get(), acts.probs.get(), losses.get());
  if (place_.tp_rank == 0) loss_sum_ += backend_.sum(losses.get(), t);
}

void RankRunner::head_backward(ChunkActs& acts, float* dx, int mb, int chunk) {
  const int t = tokens_per_micro_batch_;
  const int h = model_.hidden;
  const int vocab = model_.vocab;
  const std::size_t tv = static_cast<std::size_t>(t) * vocab;
  DeviceArray<float> dlogits(backend_, tv), dxf(backend_, static_cast<std::size_t>(t) * h);
  {
    OpTimer timer(*this, "backward", "cross_entropy", OpClass::kCompute, mb, chunk, gemm_shape(t, vocab, 1));
    backend_.cross_entropy_backward(t, vocab, acts.probs.get(), acts.targets.get(), static_cast<float>(loss_scale_),
                                    dlogits.get());
  }
  const ParamSpec* spec = head_weight();
  const float* w = weights_.get() + spec->offset;
  float* gw = grads_.get() + spec->offset;
  {
    OpTimer timer(*this, "backward", "lm_head", OpClass::kCompute, mb, chunk, gemm_shape(t, vocab, h));
    if (model_.tied_embeddings) {
      backend_.gemm(Trans::kYes, Trans::kNo, vocab, h, t, 1.0f, dlogits.get(), vocab, acts.xf.get(), h, 1.0f, gw, h);
      backend_.gemm(Trans::kNo, Trans::kNo, t, h, vocab, 1.0f, dlogits.get(), vocab, w, h, 0.0f, dxf.get(), h);
    } else {
      backend_.gemm(Trans::kYes, Trans::kNo, h, vocab, t, 1.0f, acts.xf.get(), h, dlogits.get(), vocab, 1.0f, gw, vocab);
      backend_.gemm(Trans::kNo, Trans::kYes, t, h, vocab, 1.0f, dlogits.get(), vocab, w, vocab, 0.0f, dxf.get(), h);
    }
  }
  // The full dxf is the same on every TP rank; with sequence parallelism each takes its rows.
  const int rows = local_rows();
  const float* dy = dxf.get() + (sequence_parallel(place_.stage) ? static_cast<std::size_t>(rows) * h * place_.tp_rank : 0);
  OpTimer timer(*this, "backward", "ln_final", OpClass::kCompute, mb, chunk, gemm_shape(rows, h, 1));
  backend_.fill(dx, static_cast<std::size_t>(rows) * h, 0.0f);
  backend_.layer_norm_backward(rows, h, acts.output(), param("final.ln.gamma"), acts.mean_f.get(), acts.rstd_f.get(),
                               dy, dx, grad("final.ln.gamma"), grad("final.ln.beta"));
}

}  // namespace hetsim::exec
