// SPDX-License-Identifier: Apache-2.0
// GPU backends (label gpu): every kernel against the CPU backend (itself checked against finite
// differences) on the same random inputs, with the GEMMs by the vendor's BLAS and by hetsim's own
// kernel (HETSIM_GPU_GEMM). Skips with the runtime's reason when there is no device.
// The host-side logic (GpuError text, backend selection without a device) runs everywhere.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>
#include <random>
#include <tuple>

#include "backend.hpp"
#include "gpu/gpu_backend.hpp"
#include "gpu/gpu_error.hpp"
#include "exec_test_support.hpp"
#include "runner/run.hpp"

namespace hetsim::exec {
namespace {

TEST(GpuHostLogic, GpuErrorNamesTheCallAndThePlace) {
  const GpuError e("cudaMalloc(&p, n)", "cudaErrorMemoryAllocation", "out of memory", "exec/gpu/x.cu", 42);
  EXPECT_EQ(std::string(e.what()), "cudaMalloc(&p, n) failed: cudaErrorMemoryAllocation: out of memory (exec/gpu/x.cu:42)");
  EXPECT_EQ(e.get_call(), "cudaMalloc(&p, n)");
  EXPECT_EQ(e.get_error_name(), "cudaErrorMemoryAllocation");
}

TEST(GpuHostLogic, CpuDeviceTypesNeverGoToAGpuBackend) { EXPECT_EQ(make_gpu_backend("cpu-avx2", 0), nullptr); }

TEST(GpuHostLogic, AGpuTypeWithoutADeviceIsAClearError) {
  std::string why_cuda, why_hip;
  if (cuda_device_count(&why_cuda) > 0 || hip_device_count(&why_hip) > 0) GTEST_SKIP() << "a GPU is present";
  EXPECT_FALSE(why_cuda.empty());
  EXPECT_FALSE(why_hip.empty());
  try {
    make_backend("h100-sxm5-80gb");
    FAIL() << "expected BackendError";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("h100-sxm5-80gb"), std::string::npos) << e.what();
  }
}

std::vector<float> random_vector(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

/// Runs `op` on a backend with device copies of `inputs` (floats) and `ints`, returns `outputs`.
using Op = std::function<void(Backend&, std::vector<float*>&, std::vector<int*>&)>;
std::vector<std::vector<float>> run_op(Backend& b, const std::vector<std::vector<float>>& inputs,
                                       const std::vector<std::vector<int>>& ints, const std::vector<std::size_t>& out_index,
                                       const Op& op) {
  std::vector<DeviceArray<float>> f;
  std::vector<DeviceArray<int>> i;
  std::vector<float*> fp;
  std::vector<int*> ip;
  for (const auto& v : inputs) {
    f.emplace_back(b, v.size());
    b.upload(f.back().get(), v.data(), v.size());
    fp.push_back(f.back().get());
  }
  for (const auto& v : ints) {
    i.emplace_back(b, v.size());
    b.upload(i.back().get(), v.data(), v.size());
    ip.push_back(i.back().get());
  }
  op(b, fp, ip);
  b.synchronize();
  std::vector<std::vector<float>> out;
  for (std::size_t k : out_index) out.push_back(b.to_host(fp[k], inputs[k].size()));
  return out;
}

// (runtime, GEMM): "cuda" or "hip"; "vendor" (cuBLAS / rocBLAS) or "own" (hetsim's kernel).
class GpuBackendTest : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {
 protected:
  void SetUp() override {
    const auto& [runtime, gemm] = GetParam();
    std::string why;
    const int count = runtime == "cuda" ? cuda_device_count(&why) : hip_device_count(&why);
    if (count == 0) GTEST_SKIP() << runtime << " backend has no device here: " << why;
    const char* saved = std::getenv("HETSIM_GPU_GEMM");
    saved_choice_ = saved ? std::optional<std::string>(saved) : std::nullopt;
    setenv("HETSIM_GPU_GEMM", gemm.c_str(), 1);  // every backend the test makes, the runner's too
    try {
      gpu_ = make_gpu_backend("gpu-under-test", 0);
    } catch (const BackendError& e) {
      if (gemm == "vendor") GTEST_SKIP() << "no vendor BLAS: " << e.what();
      throw;
    }
    cpu_ = make_backend("cpu-avx2");
  }
  void TearDown() override {
    if (saved_choice_) setenv("HETSIM_GPU_GEMM", saved_choice_->c_str(), 1);
    else unsetenv("HETSIM_GPU_GEMM");
  }
  void expect_same(const std::vector<std::vector<float>>& inputs, const std::vector<std::vector<int>>& ints,
                   const std::vector<std::size_t>& outs, const Op& op) {
    const auto want = run_op(*cpu_, inputs, ints, outs, op);
    const auto got = run_op(*gpu_, inputs, ints, outs, op);
    for (std::size_t o = 0; o < want.size(); ++o) {
      for (std::size_t i = 0; i < want[o].size(); ++i) {
        ASSERT_NEAR(got[o][i], want[o][i], 1e-4 + 1e-4 * std::fabs(want[o][i])) << "output " << o << "[" << i << "]";
      }
    }
  }
  std::unique_ptr<Backend> gpu_, cpu_;
  std::optional<std::string> saved_choice_;
};

TEST_P(GpuBackendTest, SaysWhichGemmRuns) {
  const std::string kernels = gpu_->describe_kernels();
  if (std::get<1>(GetParam()) == "own") EXPECT_EQ(kernels, "GEMMs by hetsim's own FP32 kernel (HETSIM_GPU_GEMM=own)");
  else EXPECT_EQ(kernels.rfind(std::get<0>(GetParam()) == "cuda" ? "GEMMs by cuBLAS (" : "GEMMs by rocBLAS (", 0), 0u)
      << kernels;
}

// One shape inside a single block tile, and one over several tiles with partial edge tiles, a K
// that is no multiple of the kernel's K step, and leading dimensions wider than the matrices.
TEST_P(GpuBackendTest, GemmAllTransposes) {
  struct Shape {
    int m, n, k, pad;
  };
  for (const Shape s : {Shape{37, 29, 45, 0}, Shape{300, 260, 190, 3}}) {
    for (Trans ta : {Trans::kNo, Trans::kYes}) {
      for (Trans tb : {Trans::kNo, Trans::kYes}) {
        const int lda = (ta == Trans::kYes ? s.m : s.k) + s.pad, ldb = (tb == Trans::kYes ? s.k : s.n) + s.pad;
        const int ldc = s.n + s.pad;
        const int a_rows = ta == Trans::kYes ? s.k : s.m, b_rows = tb == Trans::kYes ? s.n : s.k;
        expect_same({random_vector(a_rows * lda, 1), random_vector(b_rows * ldb, 2), random_vector(s.m * ldc, 3)}, {},
                    {2}, [&](Backend& b, auto& f, auto&) {
                      b.gemm(ta, tb, s.m, s.n, s.k, 0.7f, f[0], lda, f[1], ldb, 0.5f, f[2], ldc);
                    });
      }
    }
  }
}

TEST_P(GpuBackendTest, ElementwiseKernels) {
  const std::size_t n = 1000;
  expect_same({random_vector(n, 4), random_vector(n, 5), random_vector(n, 6), random_vector(n, 7), random_vector(n, 8)},
              {}, {2, 3, 4}, [&](Backend& b, auto& f, auto&) {
                b.gelu_forward(n, f[0], f[2]);
                b.gelu_backward(n, f[0], f[1], f[3]);
                b.axpy(n, 0.5f, f[0], f[4]);
                b.scale(n, 2.0f, f[4]);
              });
  expect_same({random_vector(n, 9), random_vector(n, 10), random_vector(n, 11), random_vector(n, 12),
               random_vector(n, 13), random_vector(n, 14)},
              {}, {3, 4, 5}, [&](Backend& b, auto& f, auto&) {
                b.swiglu_forward(n, f[0], f[1], f[3]);
                b.swiglu_backward(n, f[0], f[1], f[2], f[4], f[5]);
              });
  AdamConfig c;
  c.weight_decay = 0.01f;
  expect_same({random_vector(n, 15), random_vector(n, 16), std::vector<float>(n, 0.1f), std::vector<float>(n, 0.2f)}, {},
              {0, 2, 3}, [&](Backend& b, auto& f, auto&) { b.adam_step(n, c, 3, f[0], f[1], f[2], f[3]); });
  const auto x = random_vector(n, 17);
  double want = 0;
  for (float v : x) want += v;
  DeviceArray<float> d(*gpu_, n);
  gpu_->upload(d.get(), x.data(), n);
  EXPECT_NEAR(gpu_->sum(d.get(), n), want, 1e-3);
}

TEST_P(GpuBackendTest, NormEmbeddingAndLoss) {
  const int rows = 7, cols = 300, vocab = 50, seq = 4;
  expect_same({random_vector(rows * cols, 18), random_vector(cols, 19), random_vector(cols, 20),
               std::vector<float>(rows * cols), std::vector<float>(rows), std::vector<float>(rows),
               random_vector(rows * cols, 21), random_vector(rows * cols, 22), std::vector<float>(cols),
               std::vector<float>(cols)},
              {}, {3, 4, 5, 7, 8, 9}, [&](Backend& b, auto& f, auto&) {
                b.layer_norm_forward(rows, cols, 1e-5f, f[0], f[1], f[2], f[3], f[4], f[5]);
                b.layer_norm_backward(rows, cols, f[0], f[1], f[4], f[5], f[6], f[7], f[8], f[9]);
              });
  std::vector<int> tokens{3, 49, 0, 7, 7, 12, 1};
  expect_same({random_vector(vocab * cols, 23), random_vector(seq * cols, 24), std::vector<float>(rows * cols),
               random_vector(rows * cols, 25), std::vector<float>(vocab * cols), std::vector<float>(seq * cols)},
              {tokens}, {2, 4, 5}, [&](Backend& b, auto& f, auto& i) {
                b.embedding_forward(i[0], rows, seq, cols, f[0], f[1], f[2]);
                b.embedding_backward(i[0], rows, seq, cols, f[3], f[4], f[5]);
              });
  expect_same({random_vector(rows * vocab, 26), std::vector<float>(rows * vocab), std::vector<float>(rows),
               std::vector<float>(rows * vocab)},
              {tokens}, {1, 2, 3}, [&](Backend& b, auto& f, auto& i) {
                b.cross_entropy_forward(rows, vocab, f[0], i[0], f[1], f[2]);
                b.cross_entropy_backward(rows, vocab, f[1], i[0], 0.125f, f[3]);
              });
}

// Two sequences (the per-(sequence, head) blocks are not evenly spaced: the vendor path's pointer
// arrays) and one (evenly spaced heads: its strided calls), grouped-query heads in both.
TEST_P(GpuBackendTest, CausalGroupedQueryAttention) {
  for (const AttentionShape s : {AttentionShape{2, 19, 4, 2, 8}, AttentionShape{1, 37, 6, 3, 16}}) {
  SCOPED_TRACE("batch " + std::to_string(s.batch));
  const std::size_t nq = static_cast<std::size_t>(s.batch) * s.seq * s.heads * s.head_dim;
  const std::size_t nkv = static_cast<std::size_t>(s.batch) * s.seq * s.kv_heads * s.head_dim;
  expect_same({random_vector(nq, 27), random_vector(nkv, 28), random_vector(nkv, 29), std::vector<float>(s.probs_count()),
               std::vector<float>(nq), random_vector(nq, 30), std::vector<float>(nq), std::vector<float>(nkv),
               std::vector<float>(nkv)},
              {}, {3, 4, 6, 7, 8}, [&](Backend& b, auto& f, auto&) {
                b.attention_forward(s, f[0], f[1], f[2], f[3], f[4]);
                b.attention_backward(s, f[0], f[1], f[2], f[3], f[5], f[6], f[7], f[8]);
              });
  }
}

// The whole runner on one GPU rank (host-staged communicator calls) against one CPU rank; and
// at ZeRO-3, whose per-pass gathers, NaN-poisoned releases and shard updates run on the device.
TEST_P(GpuBackendTest, TrainingStepMatchesTheCpuBackend) {
  for (const int zero : {0, 3}) {
    SCOPED_TRACE("zero " + std::to_string(zero));
    RunSpec spec;
    spec.workload = testing::tiny_workload();
    spec.plan = testing::plan("single", {testing::replica(4, {testing::stage(4, 0)})});
    spec.plan.zero = zero;
    spec.steps = 2;
    spec.options.capture_gradients = true;
    spec.options.poison_released_weights = true;
    spec.cluster = testing::cpu_cluster(1, 0);
    const RunOutcome cpu = run_in_process(spec);
    spec.cluster.node_types[0].gpu.name = "gpu-under-test";
    spec.cluster.node_types[0].gpu.vendor =
        std::get<0>(GetParam()) == "cuda" ? models::Vendor::kNvidia : models::Vendor::kAmd;
    const RunOutcome gpu = run_in_process(spec);
    for (int s = 0; s < 2; ++s) EXPECT_NEAR(gpu.steps[s].loss, cpu.steps[s].loss, 1e-4 * cpu.steps[s].loss);
    ASSERT_EQ(gpu.gradients.size(), cpu.gradients.size());
    for (const auto& [name, want] : cpu.gradients) {
      const auto& got = gpu.gradients.at(name);
      for (std::size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5 + 1e-3 * std::fabs(want[i])) << name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Runtimes, GpuBackendTest,
                         ::testing::Combine(::testing::Values("cuda", "hip"), ::testing::Values("vendor", "own")),
                         [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param); });

}  // namespace
}  // namespace hetsim::exec
