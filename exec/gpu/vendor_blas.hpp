// SPDX-License-Identifier: Apache-2.0
// The vendor's BLAS (cuBLAS on CUDA, rocBLAS on HIP) for the GPU backend's GEMMs, loaded at run
// time with dlopen when the library is on the machine, so that a build runs (on hetsim's own
// kernel) where it is not: CUDA 13 ships cuBLAS, Debian's HIP has no rocBLAS (TOOLCHAIN.md).
// cuBLAS and rocBLAS spell the same five calls alike (handle, op_a, op_b, m, n, k, alpha, A, lda,
// B, ldb, beta, C, ldc, with the strided and pointer-array batched forms), with int-sized status
// and operation enums whose success value is 0, so one table of function pointers serves both.
// Host code only: no CUDA or HIP header is needed to build it or to test it.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend.hpp"

namespace hetsim::exec {

/// How one vendor names its library and calls.
struct VendorBlasSymbols {
  std::string name;                    ///< "cuBLAS"
  std::vector<std::string> libraries;  ///< sonames tried in order
  std::string create, destroy, sgemm, sgemm_strided_batched, sgemm_batched;
  int op_none = 0;       ///< the vendor's "no transpose"
  int op_transpose = 1;  ///< the vendor's "transpose"
};

/// cuBLAS of CUDA 13 (cublas_api.h) and rocBLAS (rocblas-functions.h; rocblas_operation_none = 111).
const VendorBlasSymbols& cublas_symbols();
const VendorBlasSymbols& rocblas_symbols();

/// One BLAS handle on the current device. Matrices are row-major, as everywhere in exec; the
/// vendor libraries are column-major, so C = op(A) op(B) is computed as C^T = op(B)^T op(A)^T:
/// A and B swap places, m and n swap, and a row-major operand is the column-major transpose.
class VendorBlas {
 public:
  using CreateFn = int (*)(void** handle);
  using DestroyFn = int (*)(void* handle);
  using SgemmFn = int (*)(void* handle, int op_a, int op_b, int m, int n, int k, const float* alpha, const float* a,
                          int lda, const float* b, int ldb, const float* beta, float* c, int ldc);
  using SgemmStridedBatchedFn = int (*)(void* handle, int op_a, int op_b, int m, int n, int k, const float* alpha,
                                        const float* a, int lda, long long stride_a, const float* b, int ldb,
                                        long long stride_b, const float* beta, float* c, int ldc, long long stride_c,
                                        int batch);
  using SgemmBatchedFn = int (*)(void* handle, int op_a, int op_b, int m, int n, int k, const float* alpha,
                                 const float* const* a, int lda, const float* const* b, int ldb, const float* beta,
                                 float* const* c, int ldc, int batch);
  struct Functions {
    CreateFn create = nullptr;
    DestroyFn destroy = nullptr;
    SgemmFn sgemm = nullptr;
    SgemmStridedBatchedFn sgemm_strided_batched = nullptr;
    SgemmBatchedFn sgemm_batched = nullptr;
    int op_none = 0;
    int op_transpose = 1;
  };

  /// dlopen's the vendor's library and finds its calls; nullopt, with the reason in *why, when the
  /// library or one of its calls is missing. *soname: the library that loaded.
  static std::optional<Functions> resolve(const VendorBlasSymbols& symbols, std::string* soname, std::string* why);
  /// resolve(), then a handle on the current device; nullptr, with the reason in *why, when either
  /// fails (no library, or no device for the handle).
  static std::unique_ptr<VendorBlas> load(const VendorBlasSymbols& symbols, std::string* why);

  /// From resolved functions (load() above; tests give their own). Throws BackendError when the
  /// handle cannot be created.
  VendorBlas(const Functions& functions, std::string description);
  ~VendorBlas();
  VendorBlas(const VendorBlas&) = delete;
  VendorBlas& operator=(const VendorBlas&) = delete;

  /// "cuBLAS (libcublas.so.13)"
  const std::string& description() const { return description_; }

  /// C = alpha op(A) op(B) + beta C (row-major; device pointers).
  void gemm(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
            int ldb, float beta, float* c, int ldc) const;
  /// The same for batch z at a + z stride_a, b + z stride_b, c + z stride_c (elements).
  void gemm_strided_batched(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                            long long stride_a, const float* b, int ldb, long long stride_b, float beta, float* c,
                            int ldc, long long stride_c, int batch) const;
  /// The same for batch z at a_ptrs[z], b_ptrs[z], c_ptrs[z] (arrays in device memory).
  void gemm_batched(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const float* const* a_ptrs,
                    int lda, const float* const* b_ptrs, int ldb, float beta, float* const* c_ptrs, int ldc,
                    int batch) const;

 private:
  int op(Trans t) const { return t == Trans::kYes ? functions_.op_transpose : functions_.op_none; }
  void check(int status, const char* call) const;

  Functions functions_;
  std::string description_;
  void* handle_ = nullptr;
};

/// Which GEMM the GPU backend runs, from HETSIM_GPU_GEMM: "auto" (unset: the vendor's BLAS when it
/// loads, else hetsim's own kernel), "vendor" (the vendor's BLAS, an error when it does not load)
/// or "own" (hetsim's own kernel). Throws BackendError for any other value.
enum class GpuGemmChoice { kAuto, kVendor, kOwn };
GpuGemmChoice gpu_gemm_choice_from_env();

}  // namespace hetsim::exec
