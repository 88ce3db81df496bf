// SPDX-License-Identifier: Apache-2.0
// HIP build of gpu_transformer.cu (CMake gives a source one LANGUAGE; TOOLCHAIN.md section 6).
#include "gpu_transformer.cu"
