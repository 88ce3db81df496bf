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
  bool canonical = true;       ///< false for the tied LM-head copy (same name as embed.wte)
  std::size_t offset = 0;      ///< in the rank's flat buffer
  std::size_t count() const { return static_cast<std::size_t>(rows) * cols; }
};

/// A run of the flat buffer synchronised by one collective over one DP group.
/// count is padded to a multiple of the group size (for ZeRO reduce-scatter).
struct Bucket {
  int first_unit = 0, last_unit = 0;
  std::size_t offset = 0;
  std::size_t count = 0;       ///< padded
  int tp_rank = 0;
};

struct RankParameters {
  std::vector<ParamSpec> params;
  std::vector<Bucket> buckets;
  std::size_t total = 0;       ///< flat elements incl. padding
};

/// The parameters and buckets of `rank` (a pure function of the layout: every rank can compute
/// any other rank's, which the gradient collector uses).
RankParameters rank_parameters(const RankLayout& layout, const models::ModelSpec& model, int rank);

/// Deterministic initial value of element (row, col) of the full tensor `name`, independent of
/// how the tensor is sharded (counter-based: SplitMix64, Steele et al. OOPSLA 2014).
float initial_value(const ParamSpec& spec, int row, int col, std::uint64_t seed);

}  // namespace hetsim::exec
