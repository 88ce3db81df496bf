// SPDX-License-Identifier: Apache-2.0
// GPU backend: device memory, a tiled strided-batched SGEMM, dense helpers, and the factory.
// One source for CUDA and HIP (gpu_compat.hpp); the HIP build includes it from a .hip file.
#include <memory>

#include "gpu/gpu_backend_impl.hpp"

namespace hetsim::exec::GPU_NS {
namespace {

constexpr int kThreads = 256;
constexpr int kTile = 16;  // 16x16 output tile per block, K in steps of 16 through shared memory

unsigned blocks_for(std::size_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

__device__ long long batch_offset(const BatchOffsets& o, int z) {
  return static_cast<long long>(z / o.inner) * o.per_outer +
         static_cast<long long>(((z % o.inner) * o.mul + o.add) / o.div) * o.per_inner;
}

// Classic shared-memory tiling (Kirk & Hwu, "Programming Massively Parallel Processors", ch. 5).
__global__ void gemm_kernel(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda,
                            BatchOffsets ab, const float* b, int ldb, BatchOffsets bb, float beta, float* c, int ldc,
                            BatchOffsets cb) {
  __shared__ float as[kTile][kTile + 1];
  __shared__ float bs[kTile][kTile + 1];
  const int z = blockIdx.z;
  a += batch_offset(ab, z);
  b += batch_offset(bb, z);
  c += batch_offset(cb, z);
  const int row = blockIdx.y * kTile + threadIdx.y;
  const int col = blockIdx.x * kTile + threadIdx.x;
  float acc = 0.0f;
  for (int p0 = 0; p0 < k; p0 += kTile) {
    const int pa = p0 + threadIdx.x;  // A tile: rows of C, columns p
    const int pb = p0 + threadIdx.y;  // B tile: rows p, columns of C
    as[threadIdx.y][threadIdx.x] =
        (row < m && pa < k) ? (ta ? a[static_cast<long long>(pa) * lda + row] : a[static_cast<long long>(row) * lda + pa])
                            : 0.0f;
    bs[threadIdx.y][threadIdx.x] =
        (pb < k && col < n) ? (tb ? b[static_cast<long long>(col) * ldb + pb] : b[static_cast<long long>(pb) * ldb + col])
                            : 0.0f;
    __syncthreads();
    for (int p = 0; p < kTile; ++p) acc += as[threadIdx.y][p] * bs[p][threadIdx.x];
    __syncthreads();
  }
  if (row < m && col < n) {
    float* out = c + static_cast<long long>(row) * ldc + col;
    *out = beta == 0.0f ? alpha * acc : alpha * acc + beta * *out;
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

unsigned grid_for(std::size_t n) {
  const unsigned b = blocks_for(n);
  return b < 4096u ? (b == 0 ? 1u : b) : 4096u;  // grid-stride loops cover the rest
}

}  // namespace

GpuBackend::GpuBackend(std::string device_type, int device) : device_type_(std::move(device_type)), device_(device) {
  HETSIM_GPU_CHECK(gpuSetDevice(device_));
  HETSIM_GPU_CHECK(gpuMalloc(reinterpret_cast<void**>(&sum_scratch_), sizeof(double)));
}

GpuBackend::~GpuBackend() {
  if (sum_scratch_) (void)gpuFree(sum_scratch_);
}

void* GpuBackend::allocate_bytes(std::size_t size_bytes) {
  void* p = nullptr;
  HETSIM_GPU_CHECK(gpuMalloc(&p, size_bytes == 0 ? 1 : size_bytes));
  std::lock_guard lock(mutex_);
  sizes_[p] = size_bytes;
  used_bytes_ += static_cast<long long>(size_bytes);
  if (used_bytes_ > peak_bytes_) peak_bytes_ = used_bytes_;
  return p;
}

void GpuBackend::release(void* p) {
  if (!p) return;
  {
    std::lock_guard lock(mutex_);
    auto it = sizes_.find(p);
    if (it != sizes_.end()) {
      used_bytes_ -= static_cast<long long>(it->second);
      sizes_.erase(it);
    }
  }
  HETSIM_GPU_CHECK(gpuFree(p));
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
  const dim3 threads(kTile, kTile);
  const dim3 grid((n + kTile - 1) / kTile, (m + kTile - 1) / kTile, batch);
  gemm_kernel<<<grid, threads>>>(trans_a == Trans::kYes, trans_b == Trans::kYes, m, n, k, alpha, a, lda, a_batch, b,
                                 ldb, b_batch, beta, c, ldc, c_batch);
  HETSIM_GPU_CHECK_LAUNCH();
}

void GpuBackend::gemm(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                      const float* b, int ldb, float beta, float* c, int ldc) {
  batched_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, {}, b, ldb, {}, beta, c, ldc, {}, 1);
}

void GpuBackend::copy_2d(int rows, int cols, const float* src, int src_ld, float* dst, int dst_ld) {
  HETSIM_GPU_CHECK(gpuMemcpy2D(dst, sizeof(float) * dst_ld, src, sizeof(float) * src_ld, sizeof(float) * cols, rows,
                               gpuMemcpyDeviceToDevice));
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
