// SPDX-License-Identifier: Apache-2.0
// GPU backend: device memory, a tiled strided-batched SGEMM, dense helpers, and the factory.
// One source for CUDA and HIP (gpu_compat.hpp); the HIP build includes it from a .hip file.
#include <memory>

#include "gpu/gpu_backend_impl.hpp"

namespace hetsim::exec::GPU_NS {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::size_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

// Register-blocked SGEMM (Volkov & Demmel, "Benchmarking GPUs to tune dense linear algebra",
// SC'08): a block of 256 threads computes a 128x128 tile of C, each thread an 8x8 grid of it,
// K in steps of 8 through shared memory. Per step a thread reads 8 + 8 shared words for 64 FMAs
// (the one-output-per-thread tiling of Kirk & Hwu, PMPP ch. 5, reads 2 per FMA and ran at ~6% of
// an H200's FP32 peak, 2026-12-04). A thread's rows are ty + 16 i and its columns tx + 16 j, so
// neighbouring threads read neighbouring shared words and write neighbouring C elements.
constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 8;
constexpr int kThreadTile = 8;                      // outputs per thread in each direction
constexpr int kThreadsM = kBlockM / kThreadTile;    // 16 thread rows
constexpr int kThreadsN = kBlockN / kThreadTile;    // 16 thread columns
constexpr int kGemmThreads = kThreadsM * kThreadsN;  // 256
constexpr int kSharedPad = 4;  // tile rows 132 words apart: the transposing stores hit 32 banks
static_assert(kBlockM * kBlockK % kGemmThreads == 0 && kBlockN * kBlockK % kGemmThreads == 0);

// Loads one K step of a block's A or B tile into shared memory as tile[p][o]: p along K, o along
// the tile's other dimension (A's rows or B's columns), zero outside the matrix. A tile element
// (o, p) lives at src[o * ld + p] when K is the contiguous dimension (A as stored, or B transposed:
// TB) and at src[p * ld + o] otherwise (A transposed: TA, or B as stored). Element e of the tile is
// ordered along the contiguous dimension, so that neighbouring threads load neighbouring addresses.
template <bool KContiguous, int kBlockOuter>
__device__ void load_tile_step(const float* src, int ld, int outer_size, int outer0, int k, int p0,
                               float (*tile)[kBlockOuter + kSharedPad], int tid) {
#pragma unroll
  for (int load = 0; load < kBlockOuter * kBlockK / kGemmThreads; ++load) {
    const int e = tid + load * kGemmThreads;
    const int o = KContiguous ? e / kBlockK : e % kBlockOuter;
    const int p = KContiguous ? e % kBlockK : e / kBlockOuter;
    const int go = outer0 + o, gp = p0 + p;
    tile[p][o] = (go < outer_size && gp < k)
                     ? src[KContiguous ? static_cast<long long>(go) * ld + gp : static_cast<long long>(gp) * ld + go]
                     : 0.0f;
  }
}

template <bool TA, bool TB>
__global__ void __launch_bounds__(kGemmThreads)
    gemm_kernel(int m, int n, int k, float alpha, const float* a, int lda, BatchOffsets ab, const float* b, int ldb,
                BatchOffsets bb, float beta, float* c, int ldc, BatchOffsets cb) {
  __shared__ float as[kBlockK][kBlockM + kSharedPad];
  __shared__ float bs[kBlockK][kBlockN + kSharedPad];
  const int z = blockIdx.z;
  a += batch_offset(ab, z);
  b += batch_offset(bb, z);
  c += batch_offset(cb, z);
  const int tid = threadIdx.x, tx = tid % kThreadsN, ty = tid / kThreadsN;
  const int row0 = blockIdx.y * kBlockM, col0 = blockIdx.x * kBlockN;
  float acc[kThreadTile][kThreadTile] = {};
  for (int p0 = 0; p0 < k; p0 += kBlockK) {
    load_tile_step<!TA, kBlockM>(a, lda, m, row0, k, p0, as, tid);
    load_tile_step<TB, kBlockN>(b, ldb, n, col0, k, p0, bs, tid);
    __syncthreads();
#pragma unroll
    for (int p = 0; p < kBlockK; ++p) {
      float af[kThreadTile], bf[kThreadTile];
#pragma unroll
      for (int i = 0; i < kThreadTile; ++i) af[i] = as[p][ty + kThreadsM * i];
#pragma unroll
      for (int j = 0; j < kThreadTile; ++j) bf[j] = bs[p][tx + kThreadsN * j];
#pragma unroll
      for (int i = 0; i < kThreadTile; ++i)
#pragma unroll
        for (int j = 0; j < kThreadTile; ++j) acc[i][j] += af[i] * bf[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kThreadTile; ++i) {
    const int row = row0 + ty + kThreadsM * i;
    if (row >= m) continue;
#pragma unroll
    for (int j = 0; j < kThreadTile; ++j) {
      const int col = col0 + tx + kThreadsN * j;
      if (col >= n) continue;
      float* out = c + static_cast<long long>(row) * ldc + col;
      *out = beta == 0.0f ? alpha * acc[i][j] : alpha * acc[i][j] + beta * *out;
    }
  }
}

__global__ void fill_kernel(std::size_t n, float value, float* x) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    x[i] = value;
  }
}

__global__ void scale_kernel(std::size_t n, float alpha, float* x) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    x[i] *= alpha;
  }
}

__global__ void axpy_kernel(std::size_t n, float alpha, const float* x, float* y) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    y[i] += alpha * x[i];
  }
}

// Block partial sums in double, then one atomicAdd per block.
__global__ void sum_kernel(std::size_t n, const float* x, double* out) {
  __shared__ double part[kThreads];
  double s = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    s += x[i];
  }
  part[threadIdx.x] = s;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (static_cast<int>(threadIdx.x) < stride) part[threadIdx.x] += part[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, part[0]);
}

// The operands' addresses of every batch of a GEMM, for the vendor's pointer-array batched call:
// ptrs[z] = A_z, ptrs[batch + z] = B_z, ptrs[2 batch + z] = C_z. Written on the device, in stream
// order, so that no host copy (and no host wait) sits between the GEMMs of an attention pass.
__global__ void batch_pointers_kernel(int batch, const float* a, BatchOffsets ab, const float* b, BatchOffsets bb,
                                      float* c, BatchOffsets cb, float** ptrs) {
  const int z = blockIdx.x * blockDim.x + threadIdx.x;
  if (z >= batch) return;
  ptrs[z] = const_cast<float*>(a) + batch_offset(ab, z);  // read only: the call takes const float* const*
  ptrs[batch + z] = const_cast<float*>(b) + batch_offset(bb, z);
  ptrs[2 * batch + z] = c + batch_offset(cb, z);
}

unsigned grid_for(std::size_t n) {
  const unsigned b = blocks_for(n);
  return b < 4096u ? (b == 0 ? 1u : b) : 4096u;  // grid-stride loops cover the rest
}

}  // namespace

namespace {

// cudaMalloc for the block cache: nullptr when the device is full (the cache then frees what it
// keeps and tries again); any other failure throws.
void* device_malloc(std::size_t size_bytes) {
  void* p = nullptr;
  const gpuError_t status = gpuMalloc(&p, size_bytes);
  if (status == gpuErrorMemoryAllocation) {
    (void)gpuGetLastError();  // not sticky: clear it so the next launch check does not see it
    return nullptr;
  }
  HETSIM_GPU_CHECK(status);
  return p;
}

}  // namespace

GpuBackend::GpuBackend(std::string device_type, int device)
    : device_type_(std::move(device_type)), device_(device),
      cache_(device_malloc, [](void* p) { (void)gpuFree(p); }) {
  // The GEMM first: a bad HETSIM_GPU_GEMM or a missing library throws before anything is allocated
  // (a throwing constructor runs no destructor). The handle binds to the device set here.
  const GpuGemmChoice choice = gpu_gemm_choice_from_env();
  HETSIM_GPU_CHECK(gpuSetDevice(device_));
  const std::string own = "GEMMs by hetsim's own FP32 kernel";
  if (choice == GpuGemmChoice::kOwn) {
    gemm_note_ = own + " (HETSIM_GPU_GEMM=own)";
  } else {
    std::string why;
    blas_ = VendorBlas::load(gpuVendorBlasSymbols(), &why);
    if (!blas_ && choice == GpuGemmChoice::kVendor) throw BackendError("HETSIM_GPU_GEMM=vendor, but " + why);
    gemm_note_ = blas_ ? "GEMMs by " + blas_->description() : own + " (" + why + ")";
  }
  HETSIM_GPU_CHECK(gpuMalloc(reinterpret_cast<void**>(&sum_scratch_), sizeof(double)));
}

GpuBackend::~GpuBackend() {
  if (sum_scratch_) (void)gpuFree(sum_scratch_);
}

void* GpuBackend::allocate_bytes(std::size_t size_bytes) {
  std::lock_guard lock(mutex_);
  void* p = cache_.take(size_bytes);
  if (!p)
    throw GpuError("gpuMalloc(" + std::to_string(size_bytes) + " bytes)", "out of memory",
                   "the device has no room left, with no cached blocks to free", __FILE__, __LINE__);
  used_bytes_ += static_cast<long long>(size_bytes);
  if (used_bytes_ > peak_bytes_) peak_bytes_ = used_bytes_;
  return p;
}

void GpuBackend::release(void* p) {
  if (!p) return;
  std::lock_guard lock(mutex_);
  used_bytes_ -= static_cast<long long>(cache_.give_back(p));
}

void GpuBackend::upload_bytes(void* dst, const void* src, std::size_t n) {
  HETSIM_GPU_CHECK(gpuMemcpy(dst, src, n, gpuMemcpyHostToDevice));
}
void GpuBackend::download_bytes(void* dst, const void* src, std::size_t n) {
  HETSIM_GPU_CHECK(gpuMemcpy(dst, src, n, gpuMemcpyDeviceToHost));
}
void GpuBackend::copy_bytes(void* dst, const void* src, std::size_t n) {
  HETSIM_GPU_CHECK(gpuMemcpy(dst, src, n, gpuMemcpyDeviceToDevice));
}
void GpuBackend::synchronize() { HETSIM_GPU_CHECK(gpuDeviceSynchronize()); }

void GpuBackend::batched_gemm(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                              const BatchOffsets& a_batch, const float* b, int ldb, const BatchOffsets& b_batch,
                              float beta, float* c, int ldc, const BatchOffsets& c_batch, int batch) {
  if (m == 0 || n == 0 || batch == 0) return;
  if (blas_) {
    vendor_batched_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, a_batch, b, ldb, b_batch, beta, c, ldc, c_batch,
                        batch);
    return;
  }
  const dim3 grid((n + kBlockN - 1) / kBlockN, (m + kBlockM - 1) / kBlockM, batch);
  const bool ta = trans_a == Trans::kYes, tb = trans_b == Trans::kYes;
  const auto launch = [&](auto kernel) {
    kernel<<<grid, kGemmThreads>>>(m, n, k, alpha, a, lda, a_batch, b, ldb, b_batch, beta, c, ldc, c_batch);
  };
  if (ta && tb) launch(gemm_kernel<true, true>);
  else if (ta) launch(gemm_kernel<true, false>);
  else if (tb) launch(gemm_kernel<false, true>);
  else launch(gemm_kernel<false, false>);
  HETSIM_GPU_CHECK_LAUNCH();
}

void GpuBackend::vendor_batched_gemm(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const float* a,
                                     int lda, const BatchOffsets& a_batch, const float* b, int ldb,
                                     const BatchOffsets& b_batch, float beta, float* c, int ldc,
                                     const BatchOffsets& c_batch, int batch) {
  long long sa = 0, sb = 0, sc = 0;
  const float* a0 = a + batch_offset(a_batch, 0);
  const float* b0 = b + batch_offset(b_batch, 0);
  float* c0 = c + batch_offset(c_batch, 0);
  if (batch == 1) {
    blas_->gemm(trans_a, trans_b, m, n, k, alpha, a0, lda, b0, ldb, beta, c0, ldc);
  } else if (uniform_stride(a_batch, batch, sa) && uniform_stride(b_batch, batch, sb) &&
             uniform_stride(c_batch, batch, sc)) {
    blas_->gemm_strided_batched(trans_a, trans_b, m, n, k, alpha, a0, lda, sa, b0, ldb, sb, beta, c0, ldc, sc, batch);
  } else {
    // (batch, head) blocks with grouped-query heads: the operands' addresses as device arrays.
    auto* ptrs = static_cast<float**>(allocate_bytes(3 * sizeof(float*) * static_cast<std::size_t>(batch)));
    batch_pointers_kernel<<<blocks_for(static_cast<std::size_t>(batch)), kThreads>>>(batch, a, a_batch, b, b_batch, c,
                                                                                    c_batch, ptrs);
    HETSIM_GPU_CHECK_LAUNCH();
    blas_->gemm_batched(trans_a, trans_b, m, n, k, alpha, ptrs, lda, ptrs + batch, ldb, beta,
                        ptrs + 2 * batch, ldc, batch);
    release(ptrs);  // stream order: a later kernel reuses the block only after the GEMM has run
  }
}

void GpuBackend::gemm(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                      const float* b, int ldb, float beta, float* c, int ldc) {
  batched_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, {}, b, ldb, {}, beta, c, ldc, {}, 1);
}

void GpuBackend::fill(float* x, std::size_t n, float value) {
  fill_kernel<<<grid_for(n), kThreads>>>(n, value, x);
  HETSIM_GPU_CHECK_LAUNCH();
}

void GpuBackend::scale(std::size_t n, float alpha, float* x) {
  scale_kernel<<<grid_for(n), kThreads>>>(n, alpha, x);
  HETSIM_GPU_CHECK_LAUNCH();
}

void GpuBackend::axpy(std::size_t n, float alpha, const float* x, float* y) {
  axpy_kernel<<<grid_for(n), kThreads>>>(n, alpha, x, y);
  HETSIM_GPU_CHECK_LAUNCH();
}

double GpuBackend::sum(const float* x, std::size_t n) {
  HETSIM_GPU_CHECK(gpuMemset(sum_scratch_, 0, sizeof(double)));
  sum_kernel<<<grid_for(n), kThreads>>>(n, x, sum_scratch_);
  HETSIM_GPU_CHECK_LAUNCH();
  double s = 0;
  HETSIM_GPU_CHECK(gpuMemcpy(&s, sum_scratch_, sizeof(double), gpuMemcpyDeviceToHost));
  return s;
}

// ---- entry points used by exec/gpu/gpu_backend_select.cpp --------------------------------
int device_count(std::string* why) {
  int count = 0;
  const gpuError_t err = gpuGetDeviceCount(&count);
  if (err != gpuSuccess || count == 0) {
    if (why) {
      *why = std::string(HETSIM_GPU_RUNTIME) + ": no device (" +
             (err != gpuSuccess ? std::string(gpuGetErrorName(err)) + ": " + gpuGetErrorString(err) : "0 devices") + ")";
    }
    (void)gpuGetLastError();  // clear the sticky error
    return 0;
  }
  return count;
}

std::unique_ptr<Backend> make_backend(const std::string& device_type, int local_device) {
  return std::make_unique<GpuBackend>(device_type, local_device);
}

}  // namespace hetsim::exec::GPU_NS
