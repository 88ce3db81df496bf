// SPDX-License-Identifier: Apache-2.0
// Element-wise kernels of every CPU device type through the Backend interface the runner uses:
// GeLU forward and backward, SwiGLU forward, and LayerNorm forward (the rate `hetsim calibrate`
// fits the memory efficiency on), at a micro-batch's activation size (32 768 elements: seq 32 x
// ffn 1024) and a larger one. Counter: GB/s of the bytes each kernel must move (GeLU forward
// reads x and writes y: 8 bytes an element; backward 12; SwiGLU 12; LayerNorm 8), so a kernel
// priced as memory-bound by the cost model can be read against LayerNorm's rate.
#include <benchmark/benchmark.h>

#include <vector>

#include "backend.hpp"

namespace {

using hetsim::exec::DeviceArray;

enum class Kernel { kGeluForward, kGeluBackward, kSwigluForward, kLayerNormForward };

void elementwise_bench(benchmark::State& state, const std::string& device_type, Kernel kernel) {
  const auto count = static_cast<std::size_t>(state.range(0));
  auto backend = hetsim::exec::make_backend(device_type);
  DeviceArray<float> x(*backend, count), dy(*backend, count), y(*backend, count), dx(*backend, count);
  std::vector<float> host(count);
  for (std::size_t i = 0; i < count; ++i) host[i] = static_cast<float>(i % 1000) * 0.01f - 5.0f;  // -5..5
  backend->upload_bytes(x.get(), host.data(), count * sizeof(float));
  backend->upload_bytes(dy.get(), host.data(), count * sizeof(float));
  const int row = 256;  // LayerNorm: rows of the hidden size
  const int rows = static_cast<int>(count / row);
  DeviceArray<float> gamma(*backend, row), beta(*backend, row), mean(*backend, rows), rstd(*backend, rows);
  backend->fill(gamma.get(), row, 1.0f);
  backend->fill(beta.get(), row, 0.0f);
  const double bytes_per_element =
      kernel == Kernel::kGeluBackward || kernel == Kernel::kSwigluForward ? 12 : 8;  // see the header
  const auto run = [&] {
    switch (kernel) {
      case Kernel::kGeluForward: backend->gelu_forward(count, x.get(), y.get()); break;
      case Kernel::kGeluBackward: backend->gelu_backward(count, x.get(), dy.get(), dx.get()); break;
      case Kernel::kSwigluForward: backend->swiglu_forward(count, x.get(), dy.get(), y.get()); break;
      case Kernel::kLayerNormForward:
        backend->layer_norm_forward(rows, row, 1e-5f, x.get(), gamma.get(), beta.get(), y.get(), mean.get(), rstd.get());
        break;
    }
  };
  run();  // warm-up, outside the timed loop
  for (auto _ : state) {
    run();
    backend->synchronize();
  }
  state.counters["GB/s"] = benchmark::Counter(bytes_per_element * static_cast<double>(count) *
                                                  static_cast<double>(state.iterations()) / 1e9,
                                              benchmark::Counter::kIsRate);
}

}  // namespace

#define HETSIM_ELEMENTWISE(name, kernel)                                                                    \
  BENCHMARK_CAPTURE(elementwise_bench, name##_cpu_avx2, std::string("cpu-avx2"), kernel)                   \
      ->Arg(32768)->Arg(1 << 22)->Unit(benchmark::kMicrosecond)->UseRealTime();                              \
  BENCHMARK_CAPTURE(elementwise_bench, name##_cpu_scalar, std::string("cpu-scalar"), kernel)               \
      ->Arg(32768)->Arg(1 << 22)->Unit(benchmark::kMicrosecond)->UseRealTime();

HETSIM_ELEMENTWISE(gelu_forward, Kernel::kGeluForward)
HETSIM_ELEMENTWISE(gelu_backward, Kernel::kGeluBackward)
HETSIM_ELEMENTWISE(swiglu_forward, Kernel::kSwigluForward)
HETSIM_ELEMENTWISE(layer_norm_forward, Kernel::kLayerNormForward)

BENCHMARK_MAIN();
