// SPDX-License-Identifier: Apache-2.0
// Single-source CUDA/HIP portability: one kernel source compiles with nvcc and with clang-HIP.
// gpu* names map to cuda* or hip* (TOOLCHAIN.md section 6); HETSIM_GPU_CHECK(call) throws
// GpuError with the call text and file:line (CUTLASS's check macro, without exit()).
#pragma once
#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP_PLATFORM_HCC__)
#include <hip/hip_runtime.h>
#define HETSIM_GPU_RUNTIME "HIP"
using gpuError_t = hipError_t;
#define gpuSuccess hipSuccess
#define gpuGetDeviceCount hipGetDeviceCount
#define gpuSetDevice hipSetDevice
#define gpuGetErrorName hipGetErrorName
#define gpuGetErrorString hipGetErrorString
#define gpuGetLastError hipGetLastError
#define gpuMalloc hipMalloc
#define gpuErrorMemoryAllocation hipErrorOutOfMemory
#define gpuFree hipFree
#define gpuMemcpy hipMemcpy
#define gpuMemset hipMemset
#define gpuMemcpyHostToDevice hipMemcpyHostToDevice
#define gpuMemcpyDeviceToHost hipMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define gpuDeviceSynchronize hipDeviceSynchronize
#define gpuVendorBlasSymbols ::hetsim::exec::rocblas_symbols
#else
#include <cuda_runtime.h>
#define HETSIM_GPU_RUNTIME "CUDA"
using gpuError_t = cudaError_t;
#define gpuSuccess cudaSuccess
#define gpuGetDeviceCount cudaGetDeviceCount
#define gpuSetDevice cudaSetDevice
#define gpuGetErrorName cudaGetErrorName
#define gpuGetErrorString cudaGetErrorString
#define gpuGetLastError cudaGetLastError
#define gpuMalloc cudaMalloc
#define gpuErrorMemoryAllocation cudaErrorMemoryAllocation
#define gpuFree cudaFree
#define gpuMemcpy cudaMemcpy
#define gpuMemset cudaMemset
#define gpuMemcpyHostToDevice cudaMemcpyHostToDevice
#define gpuMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define gpuDeviceSynchronize cudaDeviceSynchronize
#define gpuVendorBlasSymbols ::hetsim::exec::cublas_symbols
#endif

#include "gpu/gpu_error.hpp"

#define HETSIM_GPU_CHECK(call)                                                                         \
  do {                                                                                                 \
    const gpuError_t hetsim_gpu_status_ = (call);                                                      \
    if (hetsim_gpu_status_ != gpuSuccess) {                                                            \
      throw ::hetsim::exec::GpuError(#call, gpuGetErrorName(hetsim_gpu_status_),                       \
                                     gpuGetErrorString(hetsim_gpu_status_), __FILE__, __LINE__);       \
    }                                                                                                  \
  } while (0)

/// After a kernel launch: launch-configuration errors surface through gpuGetLastError().
#define HETSIM_GPU_CHECK_LAUNCH() HETSIM_GPU_CHECK(gpuGetLastError())

#ifndef GPU_NS
#error "compile the GPU sources with -DGPU_NS=<namespace> (cuda_backend | hip_backend)"
#endif
