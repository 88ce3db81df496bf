// SPDX-License-Identifier: Apache-2.0
// Parameter shards of a rank, flat layout, buckets and sharding-independent initialisation.
#include "runner/parameters.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "runner/splitmix64.hpp"

namespace hetsim::exec {
namespace {

std::uint64_t name_hash(const std::string& s) {
  // FNV-1a, 64-bit offset basis and prime (Fowler-Noll-Vo; IETF draft-eastlake-fnv).
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Adds the parameters of one unit on the given TP rank of a stage with TP size tp.
void add_unit(std::vector<ParamSpec>& out, const models::ModelSpec& m, int unit, int tp, int tp_rank) {
  const int h = m.hidden;
  const int d = m.head_dim();
  const int kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
  const int f = m.ffn_hidden;
  const int layers = m.layers;
  // GPT-2 initialisation: N(0, 0.02) (GPT-1, Radford et al. 2018, section 4.1 "Model
  // specifications"), residual output projections scaled by 1/sqrt(N) with N = 2 * layers
  // residual layers (GPT-2, Radford et al. 2019, section 2.3).
  const float std_base = 0.02f;
  const float std_out = std_base / std::sqrt(2.0f * static_cast<float>(layers));
  auto replicated = [&](std::string name, int rows, int cols, ParamInit init) {
    ParamSpec p;
    p.name = std::move(name);
    p.unit = unit;
    p.full_rows = p.rows = rows;
    p.full_cols = p.cols = cols;
    p.init = init;
    out.push_back(p);
  };
  // Column parallel: split the output columns (Shoeybi et al. 2019, Megatron-LM, section 3).
  auto column = [&](std::string name, int rows, int cols) {
    ParamSpec p;
    p.name = std::move(name);
    p.unit = unit;
    p.full_rows = p.rows = rows;
    p.full_cols = cols;
    p.cols = cols / tp;
    p.col_offset = p.cols * tp_rank;
    p.tp_sharded = tp > 1;
    p.split = TpSplit::kColumns;
    out.push_back(p);
  };
  // Row parallel: split the input rows.
  auto row = [&](std::string name, int rows, int cols, float std) {
    ParamSpec p;
    p.name = std::move(name);
    p.unit = unit;
    p.full_rows = rows;
    p.rows = rows / tp;
    p.row_offset = p.rows * tp_rank;
    p.full_cols = p.cols = cols;
    p.init_std = std;
    p.tp_sharded = tp > 1;
    p.split = TpSplit::kRows;
    out.push_back(p);
  };
  if (unit == 0) {
    replicated("embed.wte", m.vocab, h, ParamInit::kNormal);
    replicated("embed.wpe", m.seq_len, h, ParamInit::kNormal);
  } else if (unit <= layers) {
    const std::string p = "layers." + std::to_string(unit - 1) + ".";
    replicated(p + "ln1.gamma", 1, h, ParamInit::kOnes);
    replicated(p + "ln1.beta", 1, h, ParamInit::kZeros);
    column(p + "attn.wq", h, m.heads * d);
    column(p + "attn.wk", h, kv * d);
    column(p + "attn.wv", h, kv * d);
    row(p + "attn.wo", m.heads * d, h, std_out);
    replicated(p + "ln2.gamma", 1, h, ParamInit::kOnes);
    replicated(p + "ln2.beta", 1, h, ParamInit::kZeros);
    if (m.activation == models::Activation::kSwiglu) {
      column(p + "mlp.wgate", h, f);
      column(p + "mlp.wup", h, f);
    } else {
      column(p + "mlp.w1", h, f);
    }
    row(p + "mlp.w2", f, h, std_out);
  } else if (unit == layers + 1) {
    replicated("final.ln.gamma", 1, h, ParamInit::kOnes);
    replicated("final.ln.beta", 1, h, ParamInit::kZeros);
    // The LM head is replicated across TP ranks (logits are computed in full on each).
    if (!m.tied_embeddings) replicated("head.w", h, m.vocab, ParamInit::kNormal);
  } else {
    replicated("embed.wte", m.vocab, h, ParamInit::kNormal);
    out.back().canonical = false;
  }
}

// Where part `part` of `parts` of each TP-split tensor in params[first, last) lies, relative to
// `region`: the columns or rows the higher-TP rank of that shard holds, row-major as it holds
// them; replicated tensors go whole into every part (each DP group syncs its copy).
std::vector<CopyRun> part_runs(const std::vector<ParamSpec>& params, std::size_t first, std::size_t last,
                               std::size_t region, int part, int parts) {
  std::vector<CopyRun> runs;
  auto add = [&](std::size_t offset, std::size_t length) {
    if (!runs.empty() && runs.back().offset + runs.back().length == offset) {
      runs.back().length += length;  // adjacent: one copy
    } else {
      runs.push_back({offset, length});
    }
  };
  for (std::size_t i = first; i < last; ++i) {
    const ParamSpec& p = params[i];
    const std::size_t base = p.offset - region;
    const auto rows = static_cast<std::size_t>(p.rows), cols = static_cast<std::size_t>(p.cols);
    if (p.split == TpSplit::kColumns) {
      const std::size_t width = cols / parts;
      for (std::size_t r = 0; r < rows; ++r) add(base + r * cols + part * width, width);
    } else if (p.split == TpSplit::kRows) {
      const std::size_t height = rows / parts;
      add(base + part * height * cols, height * cols);
    } else {
      add(base, rows * cols);
    }
  }
  return runs;
}

}  // namespace

void pack_bucket(const Bucket& bucket, const float* region, float* packed) {
  for (const CopyRun& run : bucket.runs) {
    std::copy(region + run.offset, region + run.offset + run.length, packed);
    packed += run.length;
  }
}

void unpack_bucket(const Bucket& bucket, const float* packed, float* region) {
  for (const CopyRun& run : bucket.runs) {
    std::copy(packed, packed + run.length, region + run.offset);
    packed += run.length;
  }
}

RankParameters rank_parameters(const RankLayout& layout, const models::ModelSpec& model, int rank) {
  const RankPlace& me = layout.place(rank);
  RankParameters rp;
  const int units = layout.get_unit_count();
  // Units in model order; a bucket joins consecutive units that sit in the same (stage, chunk)
  // on EVERY replica, so all members of a DP group cut their buckets identically.
  int u = 0;
  while (u < units) {
    const UnitPlace& up = layout.unit_place(me.replica, u);
    if (up.stage != me.stage) {
      ++u;
      continue;
    }
    int last = u;
    auto same_everywhere = [&](int a, int c) {
      for (int r = 0; r < layout.get_dp(); ++r) {
        const auto& pa = layout.unit_place(r, a);
        const auto& pc = layout.unit_place(r, c);
        if (pa.stage != pc.stage || pa.chunk != pc.chunk) return false;
      }
      return true;
    };
    // ZeRO-2/3 reduce a bucket's gradients after each backward, but a tied word embedding's only
    // after the tie sum at the end of the step (runner/zero3.cpp): its units stay buckets of
    // their own so that the rest of their stage need not wait.
    const int head_copy = model.layers + 2;
    auto isolated = [&](int unit) {
      return layout.get_zero() >= 2 && layout.has_tied_copy(me.replica) && (unit == 0 || unit == head_copy);
    };
    while (last + 1 < units && same_everywhere(last, last + 1) && !isolated(last) && !isolated(last + 1)) ++last;
    const std::size_t region = rp.total, first_param = rp.params.size();
    std::size_t count = 0;
    for (int v = u; v <= last; ++v) {
      const std::size_t first = rp.params.size();
      add_unit(rp.params, model, v, me.tp, me.tp_rank);
      for (std::size_t i = first; i < rp.params.size(); ++i) {
        rp.params[i].offset = rp.total + count;
        count += rp.params[i].count();
      }
    }
    // The units' shards are the same for every unit of the bucket (same stage on every replica).
    const int parts = layout.dp_shards(u) / me.tp;
    const std::size_t n = static_cast<std::size_t>(layout.dp_group(u, me.tp_rank * parts).size());
    for (int part = 0; part < parts; ++part) {
      Bucket b;
      b.first_unit = u;
      b.last_unit = last;
      b.offset = region;
      b.region_count = count;
      b.shard = me.tp_rank * parts + part;
      b.part = part;
      b.parts = parts;
      std::size_t synced = count;
      if (parts > 1) {
        b.runs = part_runs(rp.params, first_param, rp.params.size(), region, part, parts);
        synced = 0;
        for (const CopyRun& run : b.runs) synced += run.length;
      }
      b.count = (synced + n - 1) / n * n;
      rp.buckets.push_back(std::move(b));
    }
    // A contiguous bucket reduce-scatters in place, so the flat buffer carries its padding.
    rp.total += parts > 1 ? count : rp.buckets.back().count;
    u = last + 1;
  }
  return rp;
}

float initial_value(const ParamSpec& spec, int row, int col, std::uint64_t seed) {
  if (spec.init == ParamInit::kOnes) return 1.0f;
  if (spec.init == ParamInit::kZeros) return 0.0f;
  const std::uint64_t index = static_cast<std::uint64_t>(row) * static_cast<std::uint64_t>(spec.full_cols) + col;
  const std::uint64_t a = splitmix64(seed ^ name_hash(spec.name) ^ splitmix64(2 * index));
  const std::uint64_t b = splitmix64(a ^ (2 * index + 1));
  // Box-Muller transform of two uniforms in (0, 1].
  const double u1 = (static_cast<double>(a >> 11) + 1.0) / 9007199254740992.0;
  const double u2 = static_cast<double>(b >> 11) / 9007199254740992.0;
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  return static_cast<float>(z * spec.init_std);
}

}  // namespace hetsim::exec
