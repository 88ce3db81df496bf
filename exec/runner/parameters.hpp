// SPDX-License-Identifier: Apache-2.0
// The parameters one rank holds: each a (TP shard of a) named tensor of the single-device
// model, laid out in one flat buffer grouped into gradient-sync buckets.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runner/rank_layout.hpp"

namespace hetsim::exec {

enum class ParamInit { kNormal, kOnes, kZeros };

/// How a tensor is split over TP ranks (Megatron-LM: column- and row-parallel linear layers).
enum class TpSplit { kReplicated, kColumns, kRows };

/// A block [row_offset, +rows) x [col_offset, +cols) of the full tensor `name` [full_rows, full_cols].
struct ParamSpec {
  std::string name;            ///< e.g. "layers.3.attn.wq", "embed.wte"
  int unit = 0;                ///< see UnitPlace
  int full_rows = 0, full_cols = 0;
  int row_offset = 0, col_offset = 0;
  int rows = 0, cols = 0;
  ParamInit init = ParamInit::kNormal;
  float init_std = 0.02f;
  bool tp_sharded = false;     ///< false: replicated on every TP rank of the stage
  TpSplit split = TpSplit::kReplicated;  ///< set also at tp 1 (a DP peer may shard it)
  bool canonical = true;       ///< false for the tied LM-head copy (same name as embed.wte)
  std::size_t offset = 0;      ///< in the rank's flat buffer
  std::size_t count() const { return static_cast<std::size_t>(rows) * cols; }
};

/// `length` elements from `offset` (relative to its bucket's region) of the flat buffer.
struct CopyRun {
  std::size_t offset = 0;
  std::size_t length = 0;
};

/// Gradients synchronised by one collective over one DP group: layout.dp_group(first_unit, shard).
/// Usually a contiguous run of the flat buffer. When this rank's replica holds the units at a lower
/// TP degree than another replica, the rank holds several of the group's shards; each is then a
/// bucket of its own that gathers its part of every tensor (`runs`) into a packed buffer laid out
/// as the higher-TP rank's contiguous one.
struct Bucket {
  int first_unit = 0, last_unit = 0;
  std::size_t offset = 0;        ///< start of the units' parameters in the flat buffer
  std::size_t region_count = 0;  ///< their elements in the flat buffer (unpadded)
  std::size_t count = 0;         ///< elements synchronised, padded to a multiple of the group size
  int shard = 0;                 ///< the DP group's shard index
  int part = 0, parts = 1;       ///< this rank holds `parts` shards of the units; this is part `part`
  std::vector<CopyRun> runs;     ///< parts > 1: where the part's elements lie in the region, in order
  bool is_packed() const { return parts > 1; }
};

struct RankParameters {
  std::vector<ParamSpec> params;
  std::vector<Bucket> buckets;
  std::size_t total = 0;       ///< flat elements incl. padding
};

/// Copies a packed bucket's elements out of the region (`region` -> `packed`) or back into it.
void pack_bucket(const Bucket& bucket, const float* region, float* packed);
void unpack_bucket(const Bucket& bucket, const float* packed, float* region);

/// The parameters and buckets of `rank` (a pure function of the layout: every rank can compute
/// any other rank's, which the gradient collector uses).
RankParameters rank_parameters(const RankLayout& layout, const models::ModelSpec& model, int rank);

/// Deterministic initial value of element (row, col) of the full tensor `name`, independent of
/// how the tensor is sharded (counter-based: SplitMix64, Steele et al. OOPSLA 2014).
float initial_value(const ParamSpec& spec, int row, int col, std::uint64_t seed);

}  // namespace hetsim::exec
