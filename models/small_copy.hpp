// SPDX-License-Identifier: Apache-2.0
// Copies of a few table entries without a library call: the predictor's copied replicas.
#pragma once

namespace hetsim::models {

/// to[i] = from[i] for i < n, for the few entries of one replica's slots (its depth: one to a
/// few dozen). std::copy_n, and any plain loop that GCC recognises as a copy
/// (-ftree-loop-distribute-patterns), become a memmove call per replica: with three tables and
/// fifteen copied replicas, a twentieth of a uniform 1024-GPU plan's evaluation. The empty asm
/// statement keeps the loop a loop (it tells the compiler nothing changes, emits no instruction).
template <class T>
inline void copy_few(const T* from, T* to, int n) {
  for (int i = 0; i < n; ++i) {
    to[i] = from[i];
#if defined(__GNUC__)
    asm("" : "+r"(i));
#endif
  }
}

}  // namespace hetsim::models
