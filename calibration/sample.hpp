// SPDX-License-Identifier: Apache-2.0
// One microbenchmark result and the JSONL checkpoint that makes a calibration resumable:
// every finished microbenchmark is appended as one JSON line; a restarted calibration reads
// the file back and skips what it already holds.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace hetsim::calibration {

enum class SampleKind { kGemm, kMemory, kAllReduce, kP2p };
const char* to_string(SampleKind k);  ///< "gemm" | "memory" | "all_reduce" | "p2p"

struct Sample {
  SampleKind kind = SampleKind::kGemm;
  std::string target;   ///< device type (gemm, memory) or link class (all_reduce, p2p)
  std::string op;       ///< memory: the kernel (axpy, gelu, layer_norm); gemm: "nn", "nt", "tn"
  double m = 0, n = 0, k = 0;  ///< gemm shape
  double size_bytes = 0;       ///< memory: bytes the cost model counts; comm: message size per rank
  int group = 0;               ///< comm: ranks taking part
  double time_s = 0;           ///< median of the timed repeats (warm-up excluded)
  int repeats = 0;             ///< timed repeats whose median time_s is (part of the resume key)
  std::string measured_at;     ///< UTC time of the measurement ("2026-12-02T16:18:23Z"); empty in older checkpoints
  /// nccl-tests (PERFORMANCE.md): algbw = S / t; busbw = algbw * 2(n-1)/n for all-reduce, = algbw for p2p.
  double algbw_Bps() const { return time_s > 0 ? size_bytes / time_s : 0; }
  double busbw_Bps() const;
  double work_flop() const { return 2.0 * m * n * k; }
  /// Identifies the microbenchmark and how it is timed (not its result): the resume key. A sample
  /// timed with other --repeats is measured again rather than passed off as this run's median.
  std::string key() const;
};

std::string to_json_line(const Sample& s);
/// A microbenchmark call takes between a nanosecond and a quarter of an hour: a checkpoint time
/// outside (a hand edit, a flipped bit) is damaged, not a measurement.
inline constexpr double kMinSampleTime_s = 1e-9, kMaxSampleTime_s = 900;
/// A checkpoint line read_checkpoint did not take, and why.
struct CheckpointSkip {
  int line = 0;
  std::string key;  ///< the microbenchmark it holds (Sample::key), "" when the line does not say
  std::string why;
};
/// Reads a checkpoint; malformed lines (a write cut short by a kill) and damaged times (a quoted
/// string, outside [kMinSampleTime_s, kMaxSampleTime_s]) are skipped, so measured again, and
/// listed in `skipped` when given.
std::vector<Sample> read_checkpoint(const std::string& path, std::vector<CheckpointSkip>* skipped = nullptr);
/// Appends one line and flushes it to the file before returning.
void append_checkpoint(const std::string& path, const Sample& s);

}  // namespace hetsim::calibration
