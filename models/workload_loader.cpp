// SPDX-License-Identifier: Apache-2.0
// Loader of `kind: workload` files (docs/inputs.md): transformer architecture + training job.
#include "loader_common.hpp"

namespace hetsim::models {
namespace {

using detail::set_if;


const EnumTable<Optimizer>& optimizer_table() {
  static const EnumTable<Optimizer> t = {{"adam", Optimizer::kAdam}, {"sgd", Optimizer::kSgd}};
  return t;
}

}  // namespace

Workload parse_workload(std::string_view text, const std::string& name) {
  DiagnosticSink sink(name);
  Workload w;
  if (auto root = detail::open_document(text, sink, InputKind::kWorkload)) {
    set_if(w.name, root->get_string("name", Need::kRequired));
    if (auto m = root->get_map("model", Need::kRequired)) detail::read_model_spec(*m, w.model, true);
    if (auto t = root->get_map("training", Need::kRequired)) {
      set_if(w.training.global_batch, t->get_int("global_batch", Need::kRequired, 1, kMaxGlobalBatch));
      set_if(w.training.dtype, t->get_enum("dtype", Need::kOptional, detail::dtype_table()));
      set_if(w.training.optimizer, t->get_enum("optimizer", Need::kOptional, optimizer_table()));
      set_if(w.training.flash_attention, t->get_bool("flash_attention", Need::kOptional));
      set_if(w.training.fp32_grad_allreduce, t->get_bool("fp32_grad_allreduce", Need::kOptional));
      const auto allow_tf32 = t->get_bool("allow_tf32", Need::kOptional);
      set_if(w.training.allow_tf32, allow_tf32);
      if (allow_tf32 && !*allow_tf32 && w.training.dtype == Dtype::kTf32)
        sink.error(t->value_mark_of("allow_tf32"), t->field("allow_tf32"),
                   "dtype tf32 computes its GEMMs in TF32, which allow_tf32: false forbids (expected dtype: fp32 "
                   "for FP32 GEMMs without TF32, or no allow_tf32)");
      t->finish();
    }
    root->finish();
  }
  sink.throw_if_any();
  return w;
}

Workload load_workload(const std::string& path) { return parse_workload(detail::read_file_or_throw(path), path); }

namespace detail {

void read_model_spec(MapReader& m, ModelSpec& spec, bool with_dropout,
                     const std::function<std::string(const char*)>& where) {
  const auto layers = m.get_int("layers", Need::kRequired, 1, kMaxLayers);
  const auto hidden = m.get_int("hidden", Need::kRequired, 1, kMaxWidth);
  const auto heads = m.get_int("heads", Need::kRequired, 1, kMaxHeads);
  const auto kv_heads = m.get_int("kv_heads", Need::kOptional, 1, kMaxHeads);
  const auto ffn = m.get_int("ffn_hidden", Need::kOptional, 1, kMaxWidth);
  set_if(spec.layers, layers);
  set_if(spec.hidden, hidden);
  set_if(spec.heads, heads);
  set_if(spec.vocab, m.get_int("vocab", Need::kRequired, 1, kMaxVocab));
  set_if(spec.seq_len, m.get_int("seq_len", Need::kRequired, 1, kMaxSeqLen));
  set_if(spec.activation, m.get_enum("activation", Need::kOptional, activation_table()));
  set_if(spec.tied_embeddings, m.get_bool("tied_embeddings", Need::kOptional));
  if (with_dropout) set_if(spec.dropout, m.get_number("dropout", Need::kOptional, 0.0, 0.999));
  spec.kv_heads = kv_heads.value_or(spec.heads);
  spec.ffn_hidden = ffn.value_or(4 * spec.hidden);  // the GPT-2/Megatron default 4h (Vaswani et al. 2017)
  m.finish();

  const auto prefix = [&where](const char* key) { return where ? where(key) : std::string(); };
  DiagnosticSink& sink = m.get_sink();
  if (hidden && heads && *hidden % *heads != 0) {
    sink.error(m.value_mark_of("heads"), m.field("heads"),
               prefix("heads") + "model.hidden (" + std::to_string(*hidden) + ") is not divisible by model.heads (" +
                   std::to_string(*heads) + ") (expected hidden = heads * head_dim)");
  }
  if (heads && kv_heads && *heads % *kv_heads != 0) {
    sink.error(m.value_mark_of("kv_heads"), m.field("kv_heads"),
               prefix("kv_heads") + "model.heads (" + std::to_string(*heads) + ") is not divisible by model.kv_heads (" +
                   std::to_string(*kv_heads) + ") (expected kv_heads to divide heads)");
  }
}

}  // namespace detail

}  // namespace hetsim::models
