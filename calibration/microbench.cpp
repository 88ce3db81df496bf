// SPDX-License-Identifier: Apache-2.0
#include "microbench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "comm/in_process_communicator.hpp"
#include "stats.hpp"

namespace hetsim::calibration {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void fill_host(exec::Backend& b, float* x, std::size_t count, float value) { b.fill(x, count, value); }

}  // namespace

const MemoryKernel& memory_kernel(const std::string& op) {
  for (const MemoryKernel& k : kMemoryKernels)
    if (op == k.op) return k;
  throw std::invalid_argument("unknown memory microbenchmark: " + op);
}

int p2p_peer(int rank, int ranks) {
  if (ranks < 2 || ranks % 2 || rank < 0 || rank >= ranks)
    throw std::invalid_argument("p2p: rank " + std::to_string(rank) + " of " + std::to_string(ranks) +
                                " (expected an even number of ranks, at least 2)");
  const int half = ranks / 2;
  return rank < half ? rank + half : rank - half;
}

double time_median(const std::function<void()>& call, const std::function<void()>& sync, const TimingOptions& t) {
  for (int i = 0; i < t.warmup; ++i) call();
  sync();
  // One probe call sizes the inner loop.
  double t0 = now_s();
  call();
  sync();
  const double probe = std::max(1e-7, now_s() - t0);
  const int inner = std::clamp(static_cast<int>(t.target_repeat_s / probe), 1, 10000);
  std::vector<double> per_call;
  for (int r = 0; r < std::max(1, t.repeats); ++r) {
    t0 = now_s();
    for (int i = 0; i < inner; ++i) call();
    sync();
    per_call.push_back((now_s() - t0) / inner);
  }
  return models::median(per_call);
}

namespace {

// CPU shapes: around those of the CPU workloads, forward layout only (the CPU backend's GEMM
// runs every layout through the same Eigen product).
void add_cpu_gemms(bool quick, std::vector<Sample>& out) {
  const std::vector<double> ms = quick ? std::vector<double>{32, 128} : std::vector<double>{32, 64, 128, 256};
  const std::vector<double> ns = quick ? std::vector<double>{64, 256, 1024} : std::vector<double>{64, 128, 256, 512, 1024};
  const std::vector<double> ks = quick ? std::vector<double>{64, 256} : std::vector<double>{64, 256, 1024};
  for (double m : ms)
    for (double n : ns)
      for (double k : ks) out.push_back(gemm_sample("nn", m, n, k));
}

// GPU shapes: from a few hundred MFLOP (a block per SM or less) to tens of GFLOP (the saturated
// rate; a grid sized for a CPU never leaves the rising part of the curve on a GPU, and its fitted
// asymptote then predicted an H200's steps 3x fast, 2026-12-04), each in the three layouts of a
// linear layer's passes (exec/runner/block_passes.cpp): forward nn, input gradient nt, weight
// gradient tn, whose kernels load their tiles differently.
void add_device_gemms(bool quick, std::vector<Sample>& out) {
  const std::vector<double> ms = quick ? std::vector<double>{256, 2048} : std::vector<double>{64, 256, 1024, 4096};
  const std::vector<double> ns = quick ? std::vector<double>{1024, 4096} : std::vector<double>{256, 1024, 4096};
  const std::vector<double> ks = quick ? std::vector<double>{256, 1024, 4096} : std::vector<double>{256, 1024, 4096};
  for (const char* layout : {"nn", "nt", "tn"})
    for (double m : ms)
      for (double n : ns)
        for (double k : ks) out.push_back(gemm_sample(layout, m, n, k));
}

}  // namespace

void check_gemm_layout(const std::string& layout) {
  if (layout.size() != 2 || (layout[0] != 'n' && layout[0] != 't') || (layout[1] != 'n' && layout[1] != 't'))
    throw std::invalid_argument("GEMM layout '" + layout + "' (expected nn, nt, tn or tt)");
}

Sample gemm_sample(const std::string& layout, double m, double n, double k) {
  check_gemm_layout(layout);
  Sample s;
  s.kind = SampleKind::kGemm;
  s.op = layout;
  s.m = m, s.n = n, s.k = k;
  return s;
}

Grid make_grid(bool quick, bool device_memory) {
  Grid g;
  if (device_memory) add_device_gemms(quick, g.gemm);
  else add_cpu_gemms(quick, g.gemm);
  // Element counts from launch-bound to streaming; a GPU streams only from tens of MB on.
  const std::vector<double> counts =
      device_memory ? (quick ? std::vector<double>{262144, 4194304, 33554432}
                             : std::vector<double>{65536, 262144, 1048576, 4194304, 16777216, 67108864})
                    : (quick ? std::vector<double>{2048, 16384, 131072}
                             : std::vector<double>{1024, 4096, 16384, 65536, 262144, 1048576});
  for (const MemoryKernel& kernel : kMemoryKernels)
    for (double c : counts) {
      Sample s;
      s.kind = SampleKind::kMemory;
      s.op = kernel.op;
      s.m = c;
      s.size_bytes = c * kernel.bytes_per_element;
      g.memory.push_back(s);
    }
  const std::vector<double> sizes = quick ? std::vector<double>{4096, 65536, 1048576}
                                          : std::vector<double>{1024, 8192, 65536, 262144, 1048576, 4194304};
  for (int group : {2, 4})
    for (double b : sizes) {
      Sample s;
      s.kind = SampleKind::kAllReduce;
      s.op = "ring";
      s.group = group;
      s.size_bytes = b;
      g.comm.push_back(s);
    }
  for (double b : sizes) {
    Sample s;
    s.kind = SampleKind::kP2p;
    s.op = "send_recv";
    s.group = 2;
    s.size_bytes = b;
    g.comm.push_back(s);
  }
  return g;
}

void run_device_sample(exec::Backend& backend, Sample& s, const TimingOptions& t) {
  auto sync = [&] { backend.synchronize(); };
  if (s.kind == SampleKind::kGemm) {
    const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
    // The layout names op(A) op(B) as BLAS does: "tn" reads A as k x m, transposed.
    check_gemm_layout(s.op);  // a checkpoint is a file: its layout may be anything
    const exec::Trans ta = s.op[0] == 't' ? exec::Trans::kYes : exec::Trans::kNo;
    const exec::Trans tb = s.op[1] == 't' ? exec::Trans::kYes : exec::Trans::kNo;
    exec::DeviceArray<float> a(backend, static_cast<std::size_t>(m) * k), b(backend, static_cast<std::size_t>(k) * n),
        c(backend, static_cast<std::size_t>(m) * n);
    fill_host(backend, a.get(), a.size(), 0.01f);
    fill_host(backend, b.get(), b.size(), 0.02f);
    fill_host(backend, c.get(), c.size(), 0.0f);
    const int lda = ta == exec::Trans::kYes ? m : k, ldb = tb == exec::Trans::kYes ? k : n;
    s.time_s = time_median(
        [&] { backend.gemm(ta, tb, m, n, k, 1.0f, a.get(), lda, b.get(), ldb, 0.0f, c.get(), n); }, sync, t);
    return;
  }
  if (s.kind != SampleKind::kMemory) throw std::invalid_argument("not a device microbenchmark: " + s.key());
  const std::size_t count = static_cast<std::size_t>(s.m);
  exec::DeviceArray<float> x(backend, count), y(backend, count);
  fill_host(backend, x.get(), count, 0.5f);
  fill_host(backend, y.get(), count, 0.25f);
  if (s.op == "axpy") {
    s.time_s = time_median([&] { backend.axpy(count, 1e-6f, x.get(), y.get()); }, sync, t);
  } else if (s.op == "gelu") {
    s.time_s = time_median([&] { backend.gelu_forward(count, x.get(), y.get()); }, sync, t);
  } else if (s.op == "layer_norm") {
    const int cols = kLayerNormBenchCols, rows = static_cast<int>(count / cols);
    exec::DeviceArray<float> gamma(backend, cols), beta(backend, cols), mean(backend, rows), rstd(backend, rows);
    fill_host(backend, gamma.get(), cols, 1.0f);
    fill_host(backend, beta.get(), cols, 0.0f);
    s.time_s = time_median(
        [&] {
          backend.layer_norm_forward(rows, cols, 1e-5f, x.get(), gamma.get(), beta.get(), y.get(), mean.get(),
                                     rstd.get());
        },
        sync, t);
  } else if (s.op == "adam") {
    exec::DeviceArray<float> m(backend, count), v(backend, count);
    fill_host(backend, m.get(), count, 0.0f);
    fill_host(backend, v.get(), count, 0.0f);
    // x the parameters, y their gradients; step 1 every call (its bias correction is a scalar).
    s.time_s = time_median([&] { backend.adam_step(count, exec::AdamConfig{}, 1, x.get(), y.get(), m.get(), v.get()); },
                           sync, t);
  } else {
    throw std::invalid_argument("unknown memory microbenchmark: " + s.op);
  }
}

void run_comm_sample(Sample& s, const TimingOptions& t) {
  const int ranks = s.group;
  if (s.kind == SampleKind::kP2p) p2p_peer(0, ranks);  // validates the rank count
  else if (ranks < 2) throw std::invalid_argument("all-reduce microbenchmark needs 2 ranks or more: " + s.key());
  const std::size_t count = std::max<std::size_t>(1, static_cast<std::size_t>(s.size_bytes / 4));
  std::vector<double> per_call;  // written by rank 0 only
  exec::InProcessWorld::run(ranks, [&](exec::Communicator& comm) {
    exec::Group group;
    group.id = 1;
    for (int r = 0; r < ranks; ++r) group.ranks.push_back(r);
    std::vector<float> buf(count, 1.0f);
    const int me = comm.get_rank();
    const bool pinger = me < ranks / 2;
    auto once = [&] {
      if (s.kind == SampleKind::kAllReduce) {
        comm.all_reduce(buf.data(), count, group);
      } else if (pinger) {  // ping-pong with the peer on the other node, all pairs at once
        comm.send(buf.data(), count, p2p_peer(me, ranks), 7);
        comm.recv(buf.data(), count, p2p_peer(me, ranks), 8);
      } else {
        comm.recv(buf.data(), count, p2p_peer(me, ranks), 7);
        comm.send(buf.data(), count, p2p_peer(me, ranks), 8);
      }
    };
    for (int i = 0; i < t.warmup; ++i) once();
    // Enough calls per repeat to last about target_repeat_s, agreed by all ranks via rank 0's probe.
    comm.barrier(group);
    double t0 = exec::Communicator::now_s();
    once();
    std::vector<float> probe(1, static_cast<float>(exec::Communicator::now_s() - t0));
    comm.all_reduce(probe.data(), 1, group);  // the sum over ranks: every rank gets the same value
    const int inner = std::clamp(static_cast<int>(t.target_repeat_s * ranks / std::max(1e-7f, probe[0])), 1, 2000);
    for (int r = 0; r < std::max(1, t.repeats); ++r) {
      comm.barrier(group);
      t0 = exec::Communicator::now_s();
      for (int i = 0; i < inner; ++i) once();
      // Each rank's own time per call; their mean is the per-device figure (pairs finish at
      // slightly different times when they share cores or a transport).
      std::vector<float> dt(1, static_cast<float>((exec::Communicator::now_s() - t0) / inner));
      comm.all_reduce(dt.data(), 1, group);
      const double mean_dt = dt[0] / ranks;
      if (me == 0) per_call.push_back(s.kind == SampleKind::kP2p ? mean_dt / 2.0 : mean_dt);
    }
    comm.clear_calls();
  });
  s.time_s = models::median(per_call);
}

}  // namespace hetsim::calibration
