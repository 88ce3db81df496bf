// SPDX-License-Identifier: Apache-2.0
// Every backend kernel against central finite differences of a random linear functional
// L = sum(R * f(x)), and GEMM against a naive triple loop; run for every CPU device type.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "backend.hpp"

namespace hetsim::exec {
namespace {

std::vector<float> random_vector(std::size_t n, unsigned seed, float scale = 1.0f) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

/// Compares analytic[i] with (L(x+e_i) - L(x-e_i)) / 2e at every index of x.
void expect_gradient(const char* what, std::vector<float> x, const std::vector<float>& analytic,
                     const std::function<double(const std::vector<float>&)>& loss, float eps = 1e-2f,
                     double rtol = 2e-2, double atol = 2e-3) {
  ASSERT_EQ(x.size(), analytic.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float saved = x[i];
    x[i] = saved + eps;
    const double up = loss(x);
    x[i] = saved - eps;
    const double down = loss(x);
    x[i] = saved;
    const double numeric = (up - down) / (2.0 * eps);
    ASSERT_NEAR(analytic[i], numeric, atol + rtol * std::fabs(numeric)) << what << "[" << i << "]";
  }
}

class KernelGradientTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { backend_ = make_backend(GetParam()); }
  /// Device copy of a host vector (kept alive by the fixture).
  template <class T>
  T* dev(const std::vector<T>& host) {
    arrays_.emplace_back(*backend_, host.size() * sizeof(T));
    backend_->upload_bytes(arrays_.back().get(), host.data(), host.size() * sizeof(T));
    return reinterpret_cast<T*>(arrays_.back().get());
  }
  template <class T>
  std::vector<T> host(const T* d, std::size_t n) {
    return backend_->to_host(d, n);
  }
  std::unique_ptr<Backend> backend_;
  std::vector<DeviceArray<char>> arrays_;
};

TEST_P(KernelGradientTest, GemmMatchesNaiveForAllTransposes) {
  const int m = 5, n = 7, k = 6;
  for (const Trans ta : {Trans::kNo, Trans::kYes}) {
    for (const Trans tb : {Trans::kNo, Trans::kYes}) {
      const auto a = random_vector(static_cast<std::size_t>(m) * k, 1);
      const auto b = random_vector(static_cast<std::size_t>(k) * n, 2);
      const auto c0 = random_vector(static_cast<std::size_t>(m) * n, 3);
      float* dc = dev(c0);
      const int lda = ta == Trans::kYes ? m : k;
      const int ldb = tb == Trans::kYes ? k : n;
      backend_->gemm(ta, tb, m, n, k, 0.5f, dev(a), lda, dev(b), ldb, 2.0f, dc, n);
      const auto c = host(dc, c0.size());
      for (int i = 0; i < m; ++i) {
        for (int j = 0; j < n; ++j) {
          double s = 0;
          for (int p = 0; p < k; ++p) {
            const float av = ta == Trans::kYes ? a[p * m + i] : a[i * k + p];
            const float bv = tb == Trans::kYes ? b[j * k + p] : b[p * n + j];
            s += static_cast<double>(av) * bv;
          }
          EXPECT_NEAR(c[i * n + j], 0.5 * s + 2.0 * c0[i * n + j], 1e-4);
        }
      }
    }
  }
}

// A linear layer Y = X W backpropagated with the transposed GEMMs the runner uses.
TEST_P(KernelGradientTest, LinearLayerGradients) {
  const int t = 4, in = 5, out = 3;
  const auto x = random_vector(t * in, 4), w = random_vector(in * out, 5), r = random_vector(t * out, 6);
  auto forward = [&](const std::vector<float>& xv, const std::vector<float>& wv) {
    float* y = dev(std::vector<float>(t * out));
    backend_->gemm(Trans::kNo, Trans::kNo, t, out, in, 1.0f, dev(xv), in, dev(wv), out, 0.0f, y, out);
    return dot(host(y, t * out), r);
  };
  float* dy = dev(r);
  float* dx = dev(std::vector<float>(t * in));
  float* dw = dev(std::vector<float>(in * out));
  backend_->gemm(Trans::kNo, Trans::kYes, t, in, out, 1.0f, dy, out, dev(w), out, 0.0f, dx, in);
  backend_->gemm(Trans::kYes, Trans::kNo, in, out, t, 1.0f, dev(x), in, dy, out, 0.0f, dw, out);
  expect_gradient("dx", x, host(dx, t * in), [&](const auto& xv) { return forward(xv, w); });
  expect_gradient("dw", w, host(dw, in * out), [&](const auto& wv) { return forward(x, wv); });
}

TEST_P(KernelGradientTest, LayerNormGradients) {
  const int rows = 3, cols = 8;
  const auto x = random_vector(rows * cols, 7), g = random_vector(cols, 8), b = random_vector(cols, 9);
  const auto r = random_vector(rows * cols, 10);
  auto forward = [&](const std::vector<float>& xv, const std::vector<float>& gv, const std::vector<float>& bv) {
    float* y = dev(std::vector<float>(rows * cols));
    float* mean = dev(std::vector<float>(rows));
    float* rstd = dev(std::vector<float>(rows));
    backend_->layer_norm_forward(rows, cols, 1e-5f, dev(xv), dev(gv), dev(bv), y, mean, rstd);
    return dot(host(y, rows * cols), r);
  };
  float* y = dev(std::vector<float>(rows * cols));
  float* mean = dev(std::vector<float>(rows));
  float* rstd = dev(std::vector<float>(rows));
  float* dx_x = dev(x);
  float* dg_x = dev(g);
  backend_->layer_norm_forward(rows, cols, 1e-5f, dx_x, dg_x, dev(b), y, mean, rstd);
  const auto residual = random_vector(rows * cols, 11);
  float* dx = dev(residual);  // dx accumulates onto what is there (the residual branch)
  float* dg = dev(std::vector<float>(cols, 1.0f));
  float* db = dev(std::vector<float>(cols, 1.0f));
  backend_->layer_norm_backward(rows, cols, dx_x, dg_x, mean, rstd, dev(r), dx, dg, db);
  auto gx = host(dx, rows * cols);
  for (int i = 0; i < rows * cols; ++i) gx[i] -= residual[i];
  auto gg = host(dg, cols), gb = host(db, cols);
  for (int i = 0; i < cols; ++i) gg[i] -= 1.0f, gb[i] -= 1.0f;
  expect_gradient("dx", x, gx, [&](const auto& v) { return forward(v, g, b); });
  expect_gradient("dgamma", g, gg, [&](const auto& v) { return forward(x, v, b); });
  expect_gradient("dbeta", b, gb, [&](const auto& v) { return forward(x, g, v); });
}

TEST_P(KernelGradientTest, CausalGroupedQueryAttentionGradients) {
  AttentionShape s{2, 5, 4, 2, 3};
  const std::size_t nq = static_cast<std::size_t>(s.batch) * s.seq * s.heads * s.head_dim;
  const std::size_t nkv = static_cast<std::size_t>(s.batch) * s.seq * s.kv_heads * s.head_dim;
  const auto q = random_vector(nq, 12), k = random_vector(nkv, 13), v = random_vector(nkv, 14);
  const auto r = random_vector(nq, 15);
  auto forward = [&](const std::vector<float>& qv, const std::vector<float>& kv, const std::vector<float>& vv) {
    float* probs = dev(std::vector<float>(s.probs_count()));
    float* out = dev(std::vector<float>(nq));
    backend_->attention_forward(s, dev(qv), dev(kv), dev(vv), probs, out);
    return dot(host(out, nq), r);
  };
  float* dq_ = dev(q);
  float* dk_ = dev(k);
  float* dv_ = dev(v);
  float* probs = dev(std::vector<float>(s.probs_count()));
  float* out = dev(std::vector<float>(nq));
  backend_->attention_forward(s, dq_, dk_, dv_, probs, out);
  // causality: row i of every head puts no weight on j > i
  const auto p = host(probs, s.probs_count());
  for (int i = 0; i < s.seq; ++i) {
    for (int j = i + 1; j < s.seq; ++j) EXPECT_EQ(p[static_cast<std::size_t>(i) * s.seq + j], 0.0f);
  }
  float* gq = dev(std::vector<float>(nq, 7.0f));  // overwritten
  float* gk = dev(std::vector<float>(nkv, 7.0f));
  float* gv = dev(std::vector<float>(nkv, 7.0f));
  backend_->attention_backward(s, dq_, dk_, dv_, probs, dev(r), gq, gk, gv);
  expect_gradient("dq", q, host(gq, nq), [&](const auto& x) { return forward(x, k, v); });
  expect_gradient("dk", k, host(gk, nkv), [&](const auto& x) { return forward(q, x, v); });
  expect_gradient("dv", v, host(gv, nkv), [&](const auto& x) { return forward(q, k, x); });
}

TEST_P(KernelGradientTest, GeluGradient) {
  const std::size_t n = 32;
  const auto x = random_vector(n, 16, 2.0f), r = random_vector(n, 17);
  auto forward = [&](const std::vector<float>& xv) {
    float* y = dev(std::vector<float>(n));
    backend_->gelu_forward(n, dev(xv), y);
    return dot(host(y, n), r);
  };
  float* dx = dev(std::vector<float>(n));
  backend_->gelu_backward(n, dev(x), dev(r), dx);
  expect_gradient("dx", x, host(dx, n), forward);
  // reference values: gelu(1) = 0.8412 with the tanh form (Hendrycks & Gimpel 2016)
  float* y = dev(std::vector<float>(1));
  backend_->gelu_forward(1, dev(std::vector<float>{1.0f}), y);
  EXPECT_NEAR(host(y, 1)[0], 0.841192f, 1e-5);
}

TEST_P(KernelGradientTest, SwigluGradients) {
  const std::size_t n = 24;
  const auto gate = random_vector(n, 18, 2.0f), up = random_vector(n, 19), r = random_vector(n, 20);
  auto forward = [&](const std::vector<float>& g, const std::vector<float>& u) {
    float* y = dev(std::vector<float>(n));
    backend_->swiglu_forward(n, dev(g), dev(u), y);
    return dot(host(y, n), r);
  };
  float* dg = dev(std::vector<float>(n));
  float* du = dev(std::vector<float>(n));
  backend_->swiglu_backward(n, dev(gate), dev(up), dev(r), dg, du);
  expect_gradient("dgate", gate, host(dg, n), [&](const auto& g) { return forward(g, up); });
  expect_gradient("dup", up, host(du, n), [&](const auto& u) { return forward(gate, u); });
}

TEST_P(KernelGradientTest, CrossEntropyGradient) {
  const int rows = 4, vocab = 9;
  const auto logits = random_vector(rows * vocab, 21, 2.0f);
  const std::vector<int> targets{0, 8, 3, 3};
  const float scale = 0.25f;
  auto forward = [&](const std::vector<float>& z) {
    float* probs = dev(std::vector<float>(rows * vocab));
    float* losses = dev(std::vector<float>(rows));
    backend_->cross_entropy_forward(rows, vocab, dev(z), dev(targets), probs, losses);
    const auto l = host(losses, rows);
    double total = 0;
    for (float x : l) total += x;
    return scale * total;
  };
  float* probs = dev(std::vector<float>(rows * vocab));
  float* losses = dev(std::vector<float>(rows));
  int* dt = dev(targets);
  backend_->cross_entropy_forward(rows, vocab, dev(logits), dt, probs, losses);
  float* dz = dev(std::vector<float>(rows * vocab));
  backend_->cross_entropy_backward(rows, vocab, probs, dt, scale, dz);
  expect_gradient("dlogits", logits, host(dz, rows * vocab), forward);
  // uniform logits: loss = log(vocab)
  float* flat_losses = dev(std::vector<float>(1));
  backend_->cross_entropy_forward(1, vocab, dev(std::vector<float>(vocab, 0.3f)), dev(std::vector<int>{2}), probs,
                                  flat_losses);
  EXPECT_NEAR(host(flat_losses, 1)[0], std::log(9.0), 1e-5);
}

TEST_P(KernelGradientTest, EmbeddingGradients) {
  const int seq = 3, hidden = 4, vocab = 5, count = 6;
  const std::vector<int> tokens{1, 4, 1, 0, 2, 4};
  const auto wte = random_vector(vocab * hidden, 22), wpe = random_vector(seq * hidden, 23);
  const auto r = random_vector(count * hidden, 24);
  auto forward = [&](const std::vector<float>& e, const std::vector<float>& p) {
    float* out = dev(std::vector<float>(count * hidden));
    backend_->embedding_forward(dev(tokens), count, seq, hidden, dev(e), dev(p), out);
    return dot(host(out, count * hidden), r);
  };
  float* de = dev(std::vector<float>(vocab * hidden));
  float* dp = dev(std::vector<float>(seq * hidden));
  backend_->embedding_backward(dev(tokens), count, seq, hidden, dev(r), de, dp);
  expect_gradient("dwte", wte, host(de, vocab * hidden), [&](const auto& e) { return forward(e, wpe); });
  expect_gradient("dwpe", wpe, host(dp, seq * hidden), [&](const auto& p) { return forward(wte, p); });
}

// Adam against Algorithm 1 of Kingma & Ba (2015) evaluated in double for three steps.
TEST_P(KernelGradientTest, AdamMatchesAlgorithm1) {
  const std::size_t n = 10;
  AdamConfig c;
  c.learning_rate = 0.01f;
  c.weight_decay = 0.1f;
  auto p = random_vector(n, 25);
  float* dp = dev(p);
  float* dm = dev(std::vector<float>(n));
  float* dv = dev(std::vector<float>(n));
  std::vector<double> rp(p.begin(), p.end()), rm(n), rv(n);
  for (int step = 1; step <= 3; ++step) {
    const auto g = random_vector(n, 30 + step);
    backend_->adam_step(n, c, step, dp, dev(g), dm, dv);
    for (std::size_t i = 0; i < n; ++i) {
      rm[i] = 0.9 * rm[i] + 0.1 * g[i];
      rv[i] = 0.999 * rv[i] + 0.001 * g[i] * g[i];
      const double mh = rm[i] / (1 - std::pow(0.9, step)), vh = rv[i] / (1 - std::pow(0.999, step));
      rp[i] -= 0.01 * (mh / (std::sqrt(vh) + 1e-8) + 0.1 * rp[i]);
    }
  }
  const auto got = host(dp, n);
  for (std::size_t i = 0; i < n; ++i) EXPECT_NEAR(got[i], rp[i], 1e-5) << i;
}

TEST_P(KernelGradientTest, MemoryCountersTrackAllocations) {
  const double before = backend_->get_memory_used_bytes();
  {
    DeviceArray<float> a(*backend_, 1000);
    EXPECT_DOUBLE_EQ(backend_->get_memory_used_bytes(), before + 4000);
    EXPECT_GE(backend_->get_memory_peak_bytes(), before + 4000);
  }
  EXPECT_DOUBLE_EQ(backend_->get_memory_used_bytes(), before);
}

INSTANTIATE_TEST_SUITE_P(CpuVariants, KernelGradientTest, ::testing::ValuesIn(cpu_device_types()),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (auto& ch : name) ch = ch == '-' ? '_' : ch;
                           return name;
                         });

TEST(BackendFactory, UnknownDeviceTypeIsAClearError) {
  try {
    make_backend("cpu-avx9000");
    FAIL() << "expected BackendError";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("cpu-avx9000"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("cpu-scalar"), std::string::npos);
  }
}

}  // namespace
}  // namespace hetsim::exec
