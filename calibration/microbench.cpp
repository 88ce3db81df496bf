// SPDX-License-Identifier: Apache-2.0
#include "microbench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "comm/in_process_communicator.hpp"

namespace hetsim::calibration {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void fill_host(exec::Backend& b, float* x, std::size_t count, float value) { b.fill(x, count, value); }

}  // namespace

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
  return median(per_call);
}

Grid make_grid(bool quick) {
  Grid g;
  const std::vector<double> ms = quick ? std::vector<double>{32, 128} : std::vector<double>{32, 64, 128, 256};
  const std::vector<double> ns = quick ? std::vector<double>{64, 256, 1024} : std::vector<double>{64, 128, 256, 512, 1024};
  const std::vector<double> ks = quick ? std::vector<double>{64, 256} : std::vector<double>{64, 256, 1024};
  for (double m : ms)
    for (double n : ns)
      for (double k : ks) {
        Sample s;
        s.kind = SampleKind::kGemm;
        s.op = "nn";
        s.m = m, s.n = n, s.k = k;
        g.gemm.push_back(s);
      }
  const std::vector<double> counts = quick ? std::vector<double>{2048, 16384, 131072}
                                           : std::vector<double>{1024, 4096, 16384, 65536, 262144, 1048576};
  // Bytes as the cost model counts them (models/compute_cost.cpp): axpy reads x, y and writes y;
  // GeLU reads x, writes y; LayerNorm reads x, writes y (statistics are per row, negligible).
  for (const char* op : {"axpy", "gelu", "layer_norm"})
    for (double c : counts) {
      Sample s;
      s.kind = SampleKind::kMemory;
      s.op = op;
      s.m = c;
      s.size_bytes = c * 4.0 * (std::string(op) == "axpy" ? 3.0 : 2.0);
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
    exec::DeviceArray<float> a(backend, static_cast<std::size_t>(m) * k), b(backend, static_cast<std::size_t>(k) * n),
        c(backend, static_cast<std::size_t>(m) * n);
    fill_host(backend, a.get(), a.size(), 0.01f);
    fill_host(backend, b.get(), b.size(), 0.02f);
    fill_host(backend, c.get(), c.size(), 0.0f);
    s.time_s = time_median(
        [&] { backend.gemm(exec::Trans::kNo, exec::Trans::kNo, m, n, k, 1.0f, a.get(), k, b.get(), n, 0.0f, c.get(), n); },
        sync, t);
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
    const int cols = 256, rows = static_cast<int>(count / cols);
    exec::DeviceArray<float> gamma(backend, cols), beta(backend, cols), mean(backend, rows), rstd(backend, rows);
    fill_host(backend, gamma.get(), cols, 1.0f);
    fill_host(backend, beta.get(), cols, 0.0f);
    s.time_s = time_median(
        [&] {
          backend.layer_norm_forward(rows, cols, 1e-5f, x.get(), gamma.get(), beta.get(), y.get(), mean.get(),
                                     rstd.get());
        },
        sync, t);
  } else {
    throw std::invalid_argument("unknown memory microbenchmark: " + s.op);
  }
}

void run_comm_sample(Sample& s, const TimingOptions& t) {
  const int ranks = s.kind == SampleKind::kP2p ? 2 : s.group;
  const std::size_t count = std::max<std::size_t>(1, static_cast<std::size_t>(s.size_bytes / 4));
  std::vector<double> per_call;  // written by rank 0 only
  exec::InProcessWorld::run(ranks, [&](exec::Communicator& comm) {
    exec::Group group;
    group.id = 1;
    for (int r = 0; r < ranks; ++r) group.ranks.push_back(r);
    std::vector<float> buf(count, 1.0f);
    const int me = comm.get_rank();
    auto once = [&] {
      if (s.kind == SampleKind::kAllReduce) {
        comm.all_reduce(buf.data(), count, group);
      } else if (me == 0) {  // ping-pong
        comm.send(buf.data(), count, 1, 7);
        comm.recv(buf.data(), count, 1, 8);
      } else {
        comm.recv(buf.data(), count, 0, 7);
        comm.send(buf.data(), count, 0, 8);
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
      const double dt = (exec::Communicator::now_s() - t0) / inner;
      if (me == 0) per_call.push_back(s.kind == SampleKind::kP2p ? dt / 2.0 : dt);
    }
    comm.clear_calls();
  });
  s.time_s = median(per_call);
}

}  // namespace hetsim::calibration
