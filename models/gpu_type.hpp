// SPDX-License-Identifier: Apache-2.0
// A device type (GPU or CPU) of the catalog: datasheet peaks and default efficiencies.
#pragma once
#include <array>
#include <map>
#include <string>
#include <vector>

namespace hetsim::models {

enum class Vendor { kNvidia, kAmd, kCpu };
enum class Dtype { kFp32, kTf32, kFp16, kBf16, kFp8 };

const char* to_string(Vendor v);   ///< "nvidia" | "amd" | "cpu"
const char* to_string(Dtype d);    ///< "fp32" | "tf32" | "fp16" | "bf16" | "fp8"
/// Bytes per element of activations/weights stored in this dtype (fp8 -> 1, fp16/bf16 -> 2, fp32/tf32 -> 4).
double dtype_bytes(Dtype d);
/// Bytes per element of activations and 16/32-bit weights in training of dtype d: fp32/tf32 -> 4,
/// else 2 (FP8 training keeps activations, weights and the pipeline's tensors in 16-bit).
double activation_bytes(Dtype d);

/// Lowest efficiency figure a catalog entry or a profile may give (0.1% of a peak or a line
/// rate): below it a value is a slip of the pen, and 1e-320 turned every time into inf.
inline constexpr double kMinEfficiency = 1e-3;

/// Host (CPU) time the framework spends per launched kernel: PyTorch eager dispatch + autograd +
/// Megatron/DeepSpeed Python per op. PyTorch measures 10-20 us of CPU per eager op on small
/// tensors (PyTorch "Performance Tuning Guide", CUDA graphs section; Ansel et al. "PyTorch 2",
/// ASPLOS'24, Fig. 1 motivation). Fitted once (one global constant) on the CPU-bound rows of
/// vtrain-a100-single (micro-batch 1, tp >= 2, where time per micro-batch does not grow with the
/// micro-batch): see docs/cost_model.md. A pass of a stage takes max(GPU time, host time).
/// The default of EfficiencyModel::framework_op_host_s (a device type may override it).
inline constexpr double kFrameworkOpHost_s = 49e-6;
/// Host time per pass (forward or backward of one chunk for one micro-batch) that launches no
/// kernel: the pipeline engine's schedule step, p2p buffer bookkeeping, autograd graph setup and
/// loss scaling (DeepSpeed PipelineEngine / Megatron schedules.py run Python per micro-batch).
/// Fitted with kFrameworkOpHost_s on the same rows. The default of
/// EfficiencyModel::framework_pass_host_s.
inline constexpr double kFrameworkPassHost_s = 1.5e-3;
/// The largest launch and host times a catalog or profile may give: far above any real stack
/// (a launch ~5 us, the figures above), they stop a slip of the unit from predicting a step of
/// years ("framework_op_host: 1e9s" printed 4.59e+09 h with exit 0; s68 hunt).
inline constexpr double kMaxKernelLaunch_s = 1e-3, kMaxFrameworkOpHost_s = 10e-3, kMaxFrameworkPassHost_s = 1.0;

/// Reduction length at which a GEMM's main loop runs at half speed: each output tile pays a
/// fixed prologue/epilogue of a few k-iterations (multistage software pipeline of 3-4 stages of
/// k = 32; NVIDIA CUTLASS "Efficient GEMM in CUDA", 2023), so efficiency scales as K/(K + K0).
/// The default of EfficiencyModel::gemm_k0 (calibration profiles may set another per device).
inline constexpr double kGemmK0 = 64;

/// Default efficiency model of a device type; calibrated profiles override it.
/// GEMM efficiency follows a saturating curve in the GEMM's work W (FLOP):
///   eff(W) = gemm_efficiency * W / (W + gemm_half_work_flop)
/// (a roofline-with-ramp form; see models/compute_cost.hpp for the citation).
struct EfficiencyModel {
  double gemm_efficiency = 0.80;        ///< asymptotic fraction of dense peak on large GEMMs
  double gemm_half_work_flop = 1.0e9;   ///< GEMM work at which efficiency reaches half the asymptote
  double memory_efficiency = 0.80;      ///< achievable fraction of memory bandwidth (streaming kernels)
  double kernel_launch_s = 5.0e-6;      ///< per-kernel launch + framework overhead
  /// Host time of the training framework per launched kernel (PyTorch eager dispatch; see
  /// kFrameworkOpHost_s above for the citation). A pass takes
  /// max(device time, host time). The CPU backend of exec/ calls its kernels directly: 0 there.
  double framework_op_host_s = kFrameworkOpHost_s;
  /// Host time per pass that launches no kernel (kFrameworkPassHost_s: pipeline-engine Python).
  double framework_pass_host_s = kFrameworkPassHost_s;
  /// Scale on the FlashAttention efficiencies of models/compute_cost.hpp, which were set on the
  /// A100 and multiply this device's GEMM efficiency. FlashAttention-2 uses no Hopper-specific
  /// instructions (TMA, wgmma): it reaches up to 73% of A100 peak forward (Dao,
  /// "FlashAttention-2", ICLR 2024, §4.1) but 35% of H100 peak (Shah et al., "FlashAttention-3",
  /// NeurIPS 2024, §1). For that 0.35 / 0.73 = 0.48 ratio of fractions of peak, a part carries
  /// 0.48 x 0.77 / its GEMM efficiency (Hopper, GEMM 0.63: 0.59; clusters/catalog/nvidia.yaml).
  double flash_scale = 1.0;
  /// FP32 GEMMs on NVIDIA CUDA cores, where `gemm_efficiency` was measured on the tensor cores
  /// (matmul-efficiency tables and training runs in 16-bit say nothing of the FP32 pipes);
  /// 0: gemm_efficiency. AMD's FP32 runs on the matrix cores (MFMA): no entry sets it there.
  double gemm_fp32_efficiency = 0;
  /// Fraction of memory bandwidth a GEMM's operands stream at: the memory roof of gemm_time
  /// (Williams et al., "Roofline", CACM 2009); 0: memory_efficiency. On a GPU both are the HBM
  /// rate. On a CPU the elementwise kernels that set memory_efficiency are compute-bound loops
  /// (a few GB/s), while blocked GEMMs stream their operands at the cache/DRAM rate of a pure
  /// stream kernel: `hetsim calibrate` sets this from its axpy rate there.
  double gemm_memory_efficiency = 0;
  /// Reduction length k at which a GEMM's main loop runs at half speed (efficiency x k/(k + K0),
  /// kGemmK0 above: the GPU figure from CUTLASS's tile pipeline). A CPU's
  /// blocked kernels pay no such prologue: `hetsim calibrate` fits it (0 on this project's CPUs).
  double gemm_k0 = kGemmK0;
  /// Output elements (m x n x batch) from which a GEMM's grid of output tiles fills the device; a
  /// smaller one leaves SMs idle and runs at outputs / gemm_full_outputs of the rate (one thread
  /// block per output tile: NVIDIA, "Matrix Multiplication Background User's Guide", 2023, "Wave
  /// Quantization"; without the ceil of partial waves). 0: not modelled, the catalog's default:
  /// cuBLAS picks smaller tiles for small outputs (its heuristics), which gemm_half_work covers.
  /// `hetsim calibrate` fits it on a GPU for the execution engine's fixed-tile kernel.
  double gemm_full_outputs = 0;
  /// Fraction of memory bandwidth the optimizer step (Adam over the weights, gradients and
  /// moments) streams at; 0: memory_efficiency. On a GPU a fused Adam is a streaming kernel like
  /// the others. On a CPU its loop (a square root and a division per parameter) runs at neither
  /// the elementwise kernels' rate nor the pure stream's: `hetsim calibrate` times exec's
  /// adam_step for it (7-9 GB/s on this project's CPUs, where LayerNorm gives 3).
  double optimizer_memory_efficiency = 0;
  /// gemm_efficiency came from the catalog entry or a profile; false: the 0.80 above, which
  /// predictions then note (models/plan_notes.hpp). Last, for brace-initialised test devices.
  bool gemm_given = false;
  /// flash_scale came from the catalog entry or a profile; false: the A100's ratio (1.0), which
  /// predictions of FlashAttention workloads then note (models/plan_notes.hpp).
  bool flash_given = false;
  double gemm_memory() const { return gemm_memory_efficiency > 0 ? gemm_memory_efficiency : memory_efficiency; }
  double optimizer_memory() const {
    return optimizer_memory_efficiency > 0 ? optimizer_memory_efficiency : memory_efficiency;
  }
};

struct GpuType {
  std::string name;                     ///< catalog name, e.g. "a100-sxm4-80gb"
  Vendor vendor = Vendor::kNvidia;
  std::map<Dtype, double> peak_flops;   ///< dense peak FLOP/s per dtype that the device supports
  /// The catalog's peaks that a calibrated profile replaced (apply_profile: a profile's peak is
  /// the asymptote of its GEMM fit, which can pass the datasheet's). MFU and HFU stay over the
  /// datasheet peak, the hardware's theoretical maximum (Chowdhery et al. 2022, PaLM, App. B).
  std::map<Dtype, double> datasheet_peak_flops;
  double memory_bytes = 0;              ///< device memory capacity
  double memory_bandwidth_Bps = 0;      ///< device memory bandwidth
  double host_link_Bps = 0;             ///< host interface, one direction (PCIe x16 of its generation); 0 = not given
  EfficiencyModel efficiency;
  std::string source;                   ///< datasheet citation
  /// Other spellings that name this type, e.g. the product name nvidia-smi prints ("H100 80GB
  /// HBM3") where it does not reduce to the catalog name (Catalog::by_name_or_null).
  std::vector<std::string> aliases;
  /// Only the catalog name as written (and the aliases) name this type, not other spellings of
  /// it: set where tools print that spelling for another type (rocm-smi prints "AMD Instinct
  /// MI250X" for each GCD, mi250x-gcd, so it must not silently mean the two-GCD module mi250x).
  bool exact_name = false;

  bool supports(Dtype d) const { return peak_flops.count(d) != 0; }
  /// Dense peak in dtype d; throws std::out_of_range when the device lacks it.
  double peak(Dtype d) const;
  /// The peak MFU and HFU are over: the datasheet's where a profile replaced it, else peak(d).
  double utilisation_peak(Dtype d) const;
  /// Asymptotic GEMM efficiency in dtype d (gemm_fp32_efficiency for FP32 where it is set).
  double gemm_efficiency_in(Dtype d) const;
  /// The dtype the matmuls of training in `training_dtype` run in: TF32 for FP32 training on a
  /// part with TF32 tensor cores when `allow_tf32` (TrainingSpec::allow_tf32), else the dtype itself.
  Dtype matmul_dtype(Dtype training_dtype, bool allow_tf32) const {
    return training_dtype == Dtype::kFp32 && allow_tf32 && supports(Dtype::kTf32) ? Dtype::kTf32 : training_dtype;
  }
  /// Sustained GEMM rate in dtype d: peak x gemm_efficiency_in; 0 when the device lacks d.
  double sustained_flops(Dtype d) const { return supports(d) ? peak(d) * gemm_efficiency_in(d) : 0.0; }
};

}  // namespace hetsim::models
