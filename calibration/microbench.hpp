// SPDX-License-Identifier: Apache-2.0
// Microbenchmarks through the exec interfaces: GEMMs and memory-bound kernels on a Backend
// (exec/backend.hpp), all-reduce and point-to-point on the in-process communicator
// (exec/comm/in_process_communicator.hpp). Each result is the median of timed repeats after
// separate warm-up calls; a repeat loops the kernel long enough that neither the clock's resolution
// nor one scheduler time slice decides the result.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "backend.hpp"
#include "sample.hpp"

namespace hetsim::calibration {

struct TimingOptions {
  int warmup = 2;    ///< calls before timing (caches, page faults, lazy allocation)
  int repeats = 7;   ///< timed repeats; the median is kept (robust to a noisy shared machine)
  /// Each repeat loops the call to last about this long: several scheduler time slices (CFS
  /// targets a few ms per runnable thread; Linux sched-design-CFS.rst), so that on a shared
  /// machine a repeat sees the share of a core that a rank of a real run gets, not a burst.
  double target_repeat_s = 20e-3;
};

/// Median seconds per call of `call` (followed by `sync` before each clock read).
double time_median(const std::function<void()>& call, const std::function<void()>& sync, const TimingOptions& t);

/// A memory-bound microbenchmark kernel as exec/cpu runs it (cpu_memory_gemm.cpp axpy,
/// cpu_activation_loss_adam.cpp gelu_forward and adam_step, cpu_norm_embedding.cpp layer_norm_forward).
struct MemoryKernel {
  const char* op;
  double bytes_per_element;            ///< as the cost model counts them (models/compute_cost.cpp, step_cost.cpp)
  double transcendentals_per_element;  ///< transcendental functions (exp, sqrt) per element
  bool stream;                         ///< a pure stream: the measured memory roof (Williams et al. 2009)
  bool optimizer = false;              ///< the optimizer step: its own figure (optimizer_memory)
};
/// axpy reads x, y and writes y; GeLU reads x, writes y and computes one exp per element
/// (Hendrycks & Gimpel 2016's tanh form as x sigmoid(2u), exec/kernel_math.hpp); LayerNorm reads x, writes y (per-row statistics are
/// negligible bytes) and calls sqrt once per row of kLayerNormBenchCols elements; Adam reads the
/// parameter, its gradient and both moments and writes the parameter and the moments (the 28
/// bytes of the update that models/step_cost.cpp optimizer_bytes_per_param counts) with a sqrt
/// per element.
inline constexpr int kLayerNormBenchCols = 256;
inline constexpr MemoryKernel kMemoryKernels[] = {
    {"axpy", 12.0, 0.0, true},
    {"gelu", 8.0, 1.0, false},
    {"layer_norm", 8.0, 1.0 / kLayerNormBenchCols, false},
    {"adam", 28.0, 1.0, false, true},
};
/// The kernel of a memory sample's op; throws std::invalid_argument for an unknown op.
const MemoryKernel& memory_kernel(const std::string& op);

/// The microbenchmarks that a calibration runs (not yet measured: time_s = 0).
struct Grid {
  std::vector<Sample> gemm;      ///< shapes; target left empty (filled per device type)
  std::vector<Sample> memory;    ///< kernels and element counts (size_bytes = counted bytes)
  std::vector<Sample> comm;      ///< sizes and group sizes; target left empty
};
/// The microbenchmarks of one device type. On host memory (CPU backends): GEMM shapes around those
/// of the CPU workloads (tokens 32-256, hidden 64-512, ffn 4x, vocab 256-1024); on device memory
/// (GPUs): shapes up to tens of GFLOP in the three layouts of a linear layer, and memory kernels
/// up to hundreds of MB. The comm part is the same for both. quick: a few points per fit (tests,
/// a first look), otherwise a denser grid.
Grid make_grid(bool quick, bool device_memory = false);
/// A GEMM sample of layout "nn", "nt", "tn" or "tt" (op(A) op(B), BLAS's transposes); throws
/// std::invalid_argument for any other layout (check_gemm_layout).
Sample gemm_sample(const std::string& layout, double m, double n, double k);
void check_gemm_layout(const std::string& layout);

/// Fills s.time_s by running the GEMM or memory kernel of s on `backend`.
void run_device_sample(exec::Backend& backend, Sample& s, const TimingOptions& t);
/// Fills s.time_s: an all-reduce among s.group threads, or send/recv ping-pongs (one way: half
/// a round trip, as in the OSU latency test) between s.group / 2 pairs running at once, rank r
/// of "node" A (ranks 0 .. s.group/2 - 1) with rank r of node B (p2p_peer): each of the node's
/// devices sends at the same time, the condition under which docs/inputs.md defines a NIC
/// class's per-device figure. s.time_s is the mean over the ranks of each one's time.
void run_comm_sample(Sample& s, const TimingOptions& t);
/// The peer of `rank` in a p2p sample of `ranks` (even) ranks: the same local index on the other node.
int p2p_peer(int rank, int ranks);

}  // namespace hetsim::calibration
