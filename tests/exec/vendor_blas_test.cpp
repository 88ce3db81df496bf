// SPDX-License-Identifier: Apache-2.0
// Host logic of the GPU backends' vendor GEMM (exec/gpu/vendor_blas.hpp) and of the batch offsets
// its calls are built from (exec/gpu/batch_offsets.hpp), on the CPU: the row-major to column-major
// translation, the vendors' operation codes, status checks, the dlopen lookup and HETSIM_GPU_GEMM.
#include "gpu/vendor_blas.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <dlfcn.h>

#include "gpu/batch_offsets.hpp"

namespace hetsim::exec {
namespace {

// What the fake library saw last.
struct Call {
  int op_a = -1, op_b = -1, m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0, batch = 0;
  const void* a = nullptr;
  const void* b = nullptr;
  const void* c = nullptr;
  long long stride_a = 0, stride_b = 0, stride_c = 0;
  float alpha = 0, beta = 0;
  int destroyed = 0;
  int status = 0;  // what the next call returns
};
Call g_call;
int g_handle_token = 0;

int fake_create(void** handle) {
  *handle = &g_handle_token;
  return g_call.status;
}
int fake_destroy(void* handle) {
  EXPECT_EQ(handle, &g_handle_token);
  ++g_call.destroyed;
  return 0;
}
int fake_sgemm(void*, int op_a, int op_b, int m, int n, int k, const float* alpha, const float* a, int lda,
               const float* b, int ldb, const float* beta, float* c, int ldc) {
  g_call = {op_a, op_b, m, n, k, lda, ldb, ldc, 1, a, b, c, 0, 0, 0, *alpha, *beta, g_call.destroyed, g_call.status};
  return g_call.status;
}
int fake_strided(void*, int op_a, int op_b, int m, int n, int k, const float* alpha, const float* a, int lda,
                 long long sa, const float* b, int ldb, long long sb, const float* beta, float* c, int ldc,
                 long long sc, int batch) {
  g_call = {op_a, op_b, m, n, k, lda, ldb, ldc, batch, a, b, c, sa, sb, sc, *alpha, *beta, g_call.destroyed,
            g_call.status};
  return g_call.status;
}
int fake_batched(void*, int op_a, int op_b, int m, int n, int k, const float* alpha, const float* const* a, int lda,
                 const float* const* b, int ldb, const float* beta, float* const* c, int ldc, int batch) {
  g_call = {op_a, op_b, m, n, k, lda, ldb, ldc, batch, a, b, c, 0, 0, 0, *alpha, *beta, g_call.destroyed,
            g_call.status};
  return g_call.status;
}

// The fake with rocBLAS's operation codes (none 111, transpose 112), so that a swapped or
// defaulted code shows.
VendorBlas::Functions fake_functions() {
  return {fake_create, fake_destroy, fake_sgemm, fake_strided, fake_batched, 111, 112};
}

TEST(GpuHostLogic, VendorGemmSwapsOperandsForColumnMajor) {
  g_call = {};
  VendorBlas blas(fake_functions(), "fake BLAS");
  const float a = 0, b = 0;
  float c = 0;
  // Row-major C (m=3 x n=5) = A^T (A stored k x m, lda 3) B (k=7 x n, ldb 5): the library sees
  // C^T (5 x 3) = B^T A, i.e. B first without transpose and A transposed, m and n swapped.
  blas.gemm(Trans::kYes, Trans::kNo, 3, 5, 7, 2.0f, &a, 3, &b, 5, 0.5f, &c, 5);
  EXPECT_EQ(g_call.op_a, 111);  // first operand: B, not transposed
  EXPECT_EQ(g_call.op_b, 112);  // second operand: A, transposed
  EXPECT_EQ(g_call.m, 5);
  EXPECT_EQ(g_call.n, 3);
  EXPECT_EQ(g_call.k, 7);
  EXPECT_EQ(g_call.a, &b);
  EXPECT_EQ(g_call.lda, 5);
  EXPECT_EQ(g_call.b, &a);
  EXPECT_EQ(g_call.ldb, 3);
  EXPECT_EQ(g_call.c, &c);
  EXPECT_EQ(g_call.ldc, 5);
  EXPECT_FLOAT_EQ(g_call.alpha, 2.0f);
  EXPECT_FLOAT_EQ(g_call.beta, 0.5f);
}

TEST(GpuHostLogic, VendorGemmBatchedFormsSwapStridesAndPointerArraysToo) {
  g_call = {};
  VendorBlas blas(fake_functions(), "fake BLAS");
  const float a = 0, b = 0;
  float c = 0;
  blas.gemm_strided_batched(Trans::kNo, Trans::kYes, 4, 6, 8, 1.0f, &a, 8, 32, &b, 8, 48, 0.0f, &c, 6, 24, 9);
  EXPECT_EQ(g_call.op_a, 112);  // B, transposed
  EXPECT_EQ(g_call.op_b, 111);  // A as stored
  EXPECT_EQ(g_call.a, &b);
  EXPECT_EQ(g_call.stride_a, 48);
  EXPECT_EQ(g_call.b, &a);
  EXPECT_EQ(g_call.stride_b, 32);
  EXPECT_EQ(g_call.stride_c, 24);
  EXPECT_EQ(g_call.m, 6);
  EXPECT_EQ(g_call.n, 4);
  EXPECT_EQ(g_call.batch, 9);

  const float* a_ptrs[2] = {&a, &a};
  const float* b_ptrs[2] = {&b, &b};
  float* c_ptrs[2] = {&c, &c};
  blas.gemm_batched(Trans::kNo, Trans::kNo, 4, 6, 8, 1.0f, a_ptrs, 8, b_ptrs, 6, 0.0f, c_ptrs, 6, 2);
  EXPECT_EQ(g_call.a, b_ptrs);
  EXPECT_EQ(g_call.b, a_ptrs);
  EXPECT_EQ(g_call.c, c_ptrs);
  EXPECT_EQ(g_call.lda, 6);
  EXPECT_EQ(g_call.ldb, 8);
  EXPECT_EQ(g_call.batch, 2);
}

TEST(GpuHostLogic, VendorGemmFailuresAreBackendErrorsNamingTheLibrary) {
  g_call = {};
  {
    VendorBlas blas(fake_functions(), "fake BLAS (libfake.so.1)");
    g_call.status = 13;
    const float x = 0;
    float y = 0;
    try {
      blas.gemm(Trans::kNo, Trans::kNo, 1, 1, 1, 1.0f, &x, 1, &x, 1, 0.0f, &y, 1);
      FAIL() << "a failed sgemm must throw";
    } catch (const BackendError& e) {
      EXPECT_NE(std::string(e.what()).find("fake BLAS (libfake.so.1) sgemm failed with status 13"), std::string::npos)
          << e.what();
    }
    g_call.status = 0;
  }
  EXPECT_EQ(g_call.destroyed, 1);  // the handle is destroyed with the object
  g_call.status = 3;               // no device: the handle cannot be created
  EXPECT_THROW(VendorBlas(fake_functions(), "fake BLAS"), BackendError);
  g_call.status = 0;
}

TEST(GpuHostLogic, VendorBlasLoadSaysWhatIsMissing) {
  VendorBlasSymbols absent = cublas_symbols();
  absent.name = "NoBLAS";
  absent.libraries = {"libhetsim-no-such-blas.so.7"};
  std::string why;
  EXPECT_EQ(VendorBlas::load(absent, &why), nullptr);
  EXPECT_EQ(why, "NoBLAS: no libhetsim-no-such-blas.so.7 on the library path");

  // A library that loads but lacks the calls: the C library itself.
  VendorBlasSymbols wrong = cublas_symbols();
  wrong.libraries = {"libc.so.6"};
  EXPECT_FALSE(VendorBlas::resolve(wrong, nullptr, &why));
  EXPECT_NE(why.find("libc.so.6 lacks cublasCreate_v2, cublasDestroy_v2, cublasSgemm_v2"), std::string::npos) << why;
}

// Where the CUDA toolkit's cuBLAS is installed (as in CI), every name hetsim calls must be one of
// its exported calls: a misspelt symbol would silently fall back to hetsim's own kernel on a GPU.
TEST(GpuHostLogic, CublasExportsEveryCallHetsimUses) {
  void* probe = dlopen(cublas_symbols().libraries.front().c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!probe) GTEST_SKIP() << "no " << cublas_symbols().libraries.front() << " on this machine";
  std::string soname, why;
  EXPECT_TRUE(VendorBlas::resolve(cublas_symbols(), &soname, &why)) << why;
  EXPECT_EQ(soname, cublas_symbols().libraries.front());
}

TEST(GpuHostLogic, GpuGemmChoiceComesFromTheEnvironment) {
  const char* saved = std::getenv("HETSIM_GPU_GEMM");
  const std::string restore = saved ? saved : "";
  unsetenv("HETSIM_GPU_GEMM");
  EXPECT_EQ(gpu_gemm_choice_from_env(), GpuGemmChoice::kAuto);
  setenv("HETSIM_GPU_GEMM", "own", 1);
  EXPECT_EQ(gpu_gemm_choice_from_env(), GpuGemmChoice::kOwn);
  setenv("HETSIM_GPU_GEMM", "vendor", 1);
  EXPECT_EQ(gpu_gemm_choice_from_env(), GpuGemmChoice::kVendor);
  setenv("HETSIM_GPU_GEMM", "cublas", 1);
  EXPECT_THROW(gpu_gemm_choice_from_env(), BackendError);
  if (saved) setenv("HETSIM_GPU_GEMM", restore.c_str(), 1);
  else unsetenv("HETSIM_GPU_GEMM");
}

TEST(GpuHostLogic, BatchOffsetsOfAttentionBlocks) {
  // (batch 2, heads 4) blocks of Q in a [batch*seq, heads*head_dim] matrix, seq 3, head_dim 5:
  // batch z = (b, h) starts at row b*seq, column h*head_dim.
  const int seq = 3, heads = 4, head_dim = 5, ld = heads * head_dim;
  const BatchOffsets q{static_cast<long long>(seq) * ld, head_dim, heads, 1, 0, 1};
  EXPECT_EQ(batch_offset(q, 0), 0);
  EXPECT_EQ(batch_offset(q, 3), 3 * head_dim);
  EXPECT_EQ(batch_offset(q, 5), seq * ld + head_dim);
  long long stride = 0;
  EXPECT_FALSE(uniform_stride(q, 8, stride));  // the jump to the next sequence breaks the step
  EXPECT_TRUE(uniform_stride(q, 4, stride));   // one sequence: the heads are evenly spaced
  EXPECT_EQ(stride, head_dim);

  // Grouped-query keys: 2 key/value heads for 4 query heads (div 2): heads 0,1 read K head 0.
  const BatchOffsets k{static_cast<long long>(seq) * 2 * head_dim, head_dim, heads, 1, 0, 2};
  EXPECT_EQ(batch_offset(k, 1), 0);
  EXPECT_EQ(batch_offset(k, 2), head_dim);
  EXPECT_FALSE(uniform_stride(k, 4, stride));

  // Member g = 1 of each group (mul 2, add 1) of the probabilities [batch, heads, seq, seq]:
  // kv head j reads query head 2j + 1, a fixed step of 2 seq^2 from seq^2 on.
  const long long ss = seq * seq;
  const BatchOffsets p{heads * ss, ss, 2, 2, 1, 1};
  EXPECT_TRUE(uniform_stride(p, 4, stride));
  EXPECT_EQ(batch_offset(p, 0), ss);
  EXPECT_EQ(stride, 2 * ss);
  EXPECT_TRUE(uniform_stride(BatchOffsets{}, 1, stride));  // a plain GEMM
  EXPECT_EQ(stride, 0);
}

}  // namespace
}  // namespace hetsim::exec
