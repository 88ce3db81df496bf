// SPDX-License-Identifier: Apache-2.0
// HIP build of gpu_memory_dense.cu (CMake gives a source one LANGUAGE; TOOLCHAIN.md section 6).
#include "gpu_memory_dense.cu"
