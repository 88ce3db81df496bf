// SPDX-License-Identifier: Apache-2.0
// A std::vector that reuses the storage of the vectors of its type dropped before it on the same
// thread: the predictor's per-evaluation tables.
#pragma once
#include <cstddef>
#include <utility>
#include <vector>

namespace hetsim::models {

/// A std::vector (it is one: pass it wherever a std::vector is read) whose storage comes from a
/// per-thread pool of vectors of its element type and goes back there when it is destroyed.
/// predict() builds some forty small tables per plan and drops them at the end: a malloc and a
/// free each, about a tenth of a uniform 1024-GPU plan's evaluation (bench/predictor_bench.cpp).
/// Taken from the pool, a table keeps the capacity an earlier evaluation gave it, so the same
/// plan size allocates nothing. Only for objects of function scope (the pool is the thread's,
/// and is gone at thread exit); huge tables are not kept, nor more than a few dozen.
template <class T>
class ScratchVector : public std::vector<T> {
 public:
  ScratchVector() {
    std::vector<std::vector<T>>& free = pool();
    if (!free.empty()) {
      std::vector<T>::swap(free.back());
      free.pop_back();
    }
  }
  explicit ScratchVector(std::size_t count, const T& value = T()) : ScratchVector() { this->assign(count, value); }
  ScratchVector(ScratchVector&&) noexcept = default;  // the moved-from one is empty: not pooled
  ScratchVector& operator=(ScratchVector&&) noexcept = default;
  ScratchVector(const ScratchVector& other) : ScratchVector() { this->assign(other.begin(), other.end()); }
  ScratchVector& operator=(const ScratchVector& other) {
    if (this != &other) this->assign(other.begin(), other.end());
    return *this;
  }
  ~ScratchVector() {
    std::vector<std::vector<T>>& free = pool();
    if (this->capacity() == 0 || this->capacity() * sizeof(T) > kLargestKeptBytes || free.size() >= kMostKept) return;
    this->clear();
    try {  // the pool grows a few times per thread; out of memory there, the table is just freed
      free.push_back(std::move(static_cast<std::vector<T>&>(*this)));
    } catch (...) {
    }
  }

 private:
  static constexpr std::size_t kLargestKeptBytes = std::size_t{1} << 20;  ///< a thread keeps 64 MiB a type at most
  static constexpr std::size_t kMostKept = 64;
  static std::vector<std::vector<T>>& pool() {
    thread_local std::vector<std::vector<T>> free;
    return free;
  }
};

}  // namespace hetsim::models
