// SPDX-License-Identifier: Apache-2.0
#include "gpu/vendor_blas.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <utility>

namespace hetsim::exec {

const VendorBlasSymbols& cublas_symbols() {
  // The _v2 names: plain "cublasSgemm" is the legacy API without a handle.
  static const VendorBlasSymbols symbols{
      "cuBLAS",       {"libcublas.so.13", "libcublas.so.12", "libcublas.so"},
      "cublasCreate_v2", "cublasDestroy_v2", "cublasSgemm_v2", "cublasSgemmStridedBatched", "cublasSgemmBatched",
      0,  // CUBLAS_OP_N
      1,  // CUBLAS_OP_T
  };
  return symbols;
}

const VendorBlasSymbols& rocblas_symbols() {
  static const VendorBlasSymbols symbols{
      "rocBLAS",
      {"librocblas.so.4", "librocblas.so.3", "librocblas.so"},
      "rocblas_create_handle",
      "rocblas_destroy_handle",
      "rocblas_sgemm",
      "rocblas_sgemm_strided_batched",
      "rocblas_sgemm_batched",
      111,  // rocblas_operation_none
      112,  // rocblas_operation_transpose
  };
  return symbols;
}

std::optional<VendorBlas::Functions> VendorBlas::resolve(const VendorBlasSymbols& symbols, std::string* soname,
                                                        std::string* why) {
  void* library = nullptr;
  for (const auto& name : symbols.libraries) {
    // Never dlclose'd: the library may hold device state and exit handlers for the process's life.
    library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library) {
      if (soname) *soname = name;
      break;
    }
  }
  if (!library) {
    if (why) *why = symbols.name + ": no " + symbols.libraries.front() + " on the library path";
    return std::nullopt;
  }
  std::string missing;
  const auto resolve_one = [&](const std::string& name) {
    void* f = dlsym(library, name.c_str());
    if (!f) missing += (missing.empty() ? "" : ", ") + name;
    return f;
  };
  Functions f;
  f.create = reinterpret_cast<CreateFn>(resolve_one(symbols.create));
  f.destroy = reinterpret_cast<DestroyFn>(resolve_one(symbols.destroy));
  f.sgemm = reinterpret_cast<SgemmFn>(resolve_one(symbols.sgemm));
  f.sgemm_strided_batched = reinterpret_cast<SgemmStridedBatchedFn>(resolve_one(symbols.sgemm_strided_batched));
  f.sgemm_batched = reinterpret_cast<SgemmBatchedFn>(resolve_one(symbols.sgemm_batched));
  f.op_none = symbols.op_none;
  f.op_transpose = symbols.op_transpose;
  if (!missing.empty()) {
    if (why) *why = symbols.name + ": " + (soname ? *soname : symbols.libraries.front()) + " lacks " + missing;
    return std::nullopt;
  }
  return f;
}

std::unique_ptr<VendorBlas> VendorBlas::load(const VendorBlasSymbols& symbols, std::string* why) {
  std::string soname;
  const std::optional<Functions> functions = resolve(symbols, &soname, why);
  if (!functions) return nullptr;
  try {
    return std::make_unique<VendorBlas>(*functions, symbols.name + " (" + soname + ")");
  } catch (const BackendError& e) {
    if (why) *why = e.what();
    return nullptr;
  }
}

VendorBlas::VendorBlas(const Functions& functions, std::string description)
    : functions_(functions), description_(std::move(description)) {
  const int status = functions_.create(&handle_);
  if (status != 0) {
    throw BackendError("creating a " + description_ + " handle failed with status " + std::to_string(status));
  }
}

VendorBlas::~VendorBlas() {
  if (handle_) (void)functions_.destroy(handle_);
}

void VendorBlas::check(int status, const char* call) const {
  if (status != 0) {
    throw BackendError(description_ + " " + call + " failed with status " + std::to_string(status));
  }
}

// Row-major C (m x n) is column-major C^T (n x m): C^T = op(B)^T op(A)^T, so B goes first, then A,
// with their own transpose flags (a row-major op(B) read column-major is op(B)^T already).
void VendorBlas::gemm(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                      const float* b, int ldb, float beta, float* c, int ldc) const {
  check(functions_.sgemm(handle_, op(trans_b), op(trans_a), n, m, k, &alpha, b, ldb, a, lda, &beta, c, ldc), "sgemm");
}

void VendorBlas::gemm_strided_batched(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const float* a,
                                      int lda, long long stride_a, const float* b, int ldb, long long stride_b,
                                      float beta, float* c, int ldc, long long stride_c, int batch) const {
  check(functions_.sgemm_strided_batched(handle_, op(trans_b), op(trans_a), n, m, k, &alpha, b, ldb, stride_b, a, lda,
                                         stride_a, &beta, c, ldc, stride_c, batch),
        "sgemm_strided_batched");
}

void VendorBlas::gemm_batched(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha,
                              const float* const* a_ptrs, int lda, const float* const* b_ptrs, int ldb, float beta,
                              float* const* c_ptrs, int ldc, int batch) const {
  check(functions_.sgemm_batched(handle_, op(trans_b), op(trans_a), n, m, k, &alpha, b_ptrs, ldb, a_ptrs, lda, &beta,
                                 c_ptrs, ldc, batch),
        "sgemm_batched");
}

GpuGemmChoice gpu_gemm_choice_from_env() {
  const char* set = std::getenv("HETSIM_GPU_GEMM");
  const std::string value = set ? set : "";
  if (value.empty() || value == "auto") return GpuGemmChoice::kAuto;
  if (value == "vendor") return GpuGemmChoice::kVendor;
  if (value == "own") return GpuGemmChoice::kOwn;
  throw BackendError("HETSIM_GPU_GEMM: '" + value + "' is not a GEMM choice (expected auto, vendor or own)");
}

}  // namespace hetsim::exec
