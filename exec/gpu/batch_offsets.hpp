// SPDX-License-Identifier: Apache-2.0
// Where batch z of a batched GEMM operand starts: the one formula the GPU kernel, the vendor-BLAS
// pointer arrays and the strided-call check all use (header-only: CPU tests check it too).
#pragma once

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>  // __host__ and __device__ (nvcc knows them without a header)
#endif
#if defined(__CUDACC__) || defined(__HIPCC__)
#define HETSIM_HOST_DEVICE __host__ __device__
#else
#define HETSIM_HOST_DEVICE
#endif

namespace hetsim::exec {

/// Offset (elements) of batch z of a strided batched GEMM operand:
///   (z / inner) * per_outer + (((z % inner) * mul + add) / div) * per_inner
/// which covers plain GEMMs (batch 1) and (batch, head) blocks with grouped-query heads (div: the
/// query heads per key/value head; mul, add: one member of each group).
struct BatchOffsets {
  long long per_outer = 0;
  long long per_inner = 0;
  int inner = 1;
  int mul = 1;
  int add = 0;
  int div = 1;
};

HETSIM_HOST_DEVICE inline long long batch_offset(const BatchOffsets& o, int z) {
  return static_cast<long long>(z / o.inner) * o.per_outer +
         static_cast<long long>(((z % o.inner) * o.mul + o.add) / o.div) * o.per_inner;
}

/// True when the offsets of batches 0..batch-1 advance by a fixed step (offset(z) = offset(0) +
/// z stride), with that step in `stride`: the vendor's strided batched call can run them.
inline bool uniform_stride(const BatchOffsets& o, int batch, long long& stride) {
  const long long base = batch_offset(o, 0);
  stride = batch > 1 ? batch_offset(o, 1) - base : 0;
  for (int z = 2; z < batch; ++z)
    if (batch_offset(o, z) != base + z * stride) return false;
  return true;
}

}  // namespace hetsim::exec
