// SPDX-License-Identifier: Apache-2.0
// The fitters recover known parameters from synthetic samples generated with the cost model's
// own formulas (models/compute_cost.cpp, models/comm_cost.cpp), with and without noise.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "calibrate.hpp"
#include "comm_cost.hpp"
#include "compute_cost.hpp"
#include "fit.hpp"
#include "profile.hpp"

namespace hetsim::calibration {
namespace {

constexpr double kPeak = 80e9, kBandwidth = 20e9;

models::DeviceRates rates(double e, double h, double me, double launch) {
  models::DeviceRates d;
  d.peak_flops = kPeak;
  d.memory_Bps = kBandwidth;
  d.eff.gemm_efficiency = e;
  d.eff.gemm_half_work_flop = h;
  d.eff.memory_efficiency = me;
  d.eff.kernel_launch_s = launch;
  return d;
}

std::vector<Sample> synthetic_device(const models::DeviceRates& d, double noise, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(1.0 - noise, 1.0 + noise);
  std::vector<Sample> out;
  for (const Sample& g : make_grid(false).gemm) {
    Sample s = g;
    // fp32 inputs: the GEMMs of the grid are compute-bound at these rates, as gemm_time's roofline assumes.
    s.time_s = models::gemm_time(d, s.m, s.n, s.k, 1, 4) * u(rng);
    out.push_back(s);
  }
  for (const Sample& m : make_grid(false).memory) {
    Sample s = m;
    s.time_s = models::memory_time(d, s.size_bytes) * u(rng);
    out.push_back(s);
  }
  return out;
}

TEST(FitTest, RecoversDeviceParametersExactly) {
  const auto d = rates(0.6, 2e5, 0.7, 400e-9);
  const auto samples = synthetic_device(d, 0.0, 1);
  const MemoryFit m = fit_memory(samples);
  EXPECT_NEAR(m.achieved_Bps / kBandwidth, 0.7, 1e-6);
  EXPECT_NEAR(m.kernel_launch_s, 400e-9, 1e-12);
  const GemmFit g = fit_gemm(samples, kPeak, m.kernel_launch_s);
  EXPECT_NEAR(g.gemm_efficiency, 0.6, 1e-6);
  EXPECT_NEAR(g.gemm_half_work_flop / 2e5, 1.0, 1e-4);
}

TEST(FitTest, RecoversDeviceParametersWithNoise) {
  const auto d = rates(0.45, 5e5, 0.5, 1e-6);
  const auto samples = synthetic_device(d, 0.03, 7);
  const MemoryFit m = fit_memory(samples);
  EXPECT_NEAR(m.achieved_Bps / kBandwidth, 0.5, 0.03);
  const GemmFit g = fit_gemm(samples, kPeak, m.kernel_launch_s);
  EXPECT_NEAR(g.gemm_efficiency, 0.45, 0.03);
  EXPECT_NEAR(g.gemm_half_work_flop / 5e5, 1.0, 0.25);
}

TEST(FitTest, RecoversAlphaBetaFromRingAllReduceAndP2p) {
  models::GroupCost g;
  g.bus_bandwidth_Bps = 3e9;
  g.hop_latency_s = 7e-6;
  std::vector<Sample> ring, p2p;
  for (const Sample& c : make_grid(false).comm) {
    Sample s = c;
    if (s.kind == SampleKind::kAllReduce) {
      g.size = s.group;
      s.time_s = models::ring_time(models::CollectiveKind::kAllReduce, s.size_bytes, g);
      ring.push_back(s);
    } else {
      s.time_s = models::p2p_time(s.size_bytes, {3e9, 7e-6, true, false});
      p2p.push_back(s);
    }
  }
  for (const auto* set : {&ring, &p2p}) {
    const LinkFit f = fit_link(*set, set == &ring ? models::kCollectiveLaunch_s : 0.0);
    EXPECT_NEAR(f.bandwidth_Bps / 3e9, 1.0, 1e-6);
    EXPECT_NEAR(f.latency_s, 7e-6, 1e-11);
  }
}

// Times that do not grow with the size fit a bandwidth term of ~0: a link of 1e21 B/s, which
// the profile check then refused with a position in a file never written (s60 hunt). Refused at
// the fit, with why.
TEST(FitTest, FlatLinkTimesAreRefused) {
  std::vector<Sample> p2p;
  for (const Sample& c : make_grid(false).comm)
    if (c.kind == SampleKind::kP2p) {
      Sample s = c;
      s.time_s = 0.5;
      p2p.push_back(s);
    }
  ASSERT_GE(p2p.size(), 2u);
  try {
    fit_link(p2p, 0.0);
    FAIL() << "a flat link fit was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "link fit: time does not grow with the message size");
  }
}

TEST(FitTest, BandwidthFiguresFollowNcclTests) {
  Sample s;
  s.kind = SampleKind::kAllReduce;
  s.group = 4;
  s.size_bytes = 1e6;
  s.time_s = 1e-3;
  EXPECT_DOUBLE_EQ(s.algbw_Bps(), 1e9);
  EXPECT_DOUBLE_EQ(s.busbw_Bps(), 1.5e9);  // 2(n-1)/n
}

TEST(FitTest, RejectsTooFewSamples) {
  EXPECT_THROW(fit_relative_least_squares({{1.0, 1.0}}, {1.0}), std::invalid_argument);
  EXPECT_THROW(fit_memory({}), std::invalid_argument);
}

TEST(CheckpointTest, ResumesAndSkipsACutLine) {
  const auto path = std::filesystem::temp_directory_path() / ("hetsim_ckpt_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + ".jsonl");
  std::filesystem::remove(path);
  Sample a;
  a.kind = SampleKind::kGemm;
  a.target = "cpu-avx2";
  a.op = "nn";
  a.m = 32, a.n = 64, a.k = 64;
  a.time_s = 1.5e-6;
  a.repeats = 3;
  append_checkpoint(path.string(), a);
  {
    std::ofstream cut(path, std::ios::app);
    cut << "{\"kind\": \"gemm\", \"target\": \"cpu-av";  // a kill mid-write
  }
  const auto back = read_checkpoint(path.string());
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].key(), a.key());
  EXPECT_DOUBLE_EQ(back[0].time_s, a.time_s);
  EXPECT_EQ(back[0].repeats, 3);
  Sample timed_otherwise = a;
  timed_otherwise.repeats = 7;
  EXPECT_NE(timed_otherwise.key(), a.key());  // not resumed under other --repeats
  std::filesystem::remove(path);
}

TEST(CheckpointTest, DamagedTimesAreMeasuredAgainAndTheTimeOfEachSampleIsKept) {
  // A time no call takes (1e300 s gave a profile with gemm 0 that every verb rejected; 1e-300 s a
  // 31-digit error) or a quoted number (calibrate never writes one) is damage, not a measurement.
  const auto path = std::filesystem::temp_directory_path() /
                    ("hetsim_ckpt_damaged_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + ".jsonl");
  std::filesystem::remove(path);
  Sample a;
  a.kind = SampleKind::kMemory;
  a.target = "cpu-avx2";
  a.op = "axpy";
  a.m = 1024;
  a.size_bytes = 12288;
  a.repeats = 7;
  a.measured_at = "2026-12-02T16:18:23Z";
  for (double t : {1e300, 1e-300, 2.5e-6}) {
    a.time_s = t;
    append_checkpoint(path.string(), a);
  }
  {
    std::ofstream quoted(path, std::ios::app);
    quoted << R"({"kind": "memory", "target": "cpu-avx2", "op": "axpy", "m": 4096, "n": 0, "k": 0, "size_bytes": 49152, )"
           << R"("group": 0, "repeats": 7, "time_s": "0.001"})" << '\n';
    quoted << R"({"kind": "memory", "target": "cpu-avx2", "op": "axpy", "m": 8192, "n": 0, "k": 0, "size_bytes": 98304, )"
           << R"("group": 0, "repeats": 7, "time_s": 1e400})" << '\n';
    quoted << "not json at all\n";
  }
  std::vector<CheckpointSkip> skipped;
  const auto back = read_checkpoint(path.string(), &skipped);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_DOUBLE_EQ(back[0].time_s, 2.5e-6);
  EXPECT_EQ(back[0].measured_at, "2026-12-02T16:18:23Z");
  // Each damaged line is named with its line and why; sizes print whole in the key.
  ASSERT_EQ(skipped.size(), 5u);
  EXPECT_EQ(skipped[0].line, 1);
  EXPECT_EQ(skipped[0].key, "memory/cpu-avx2/axpy/1024x0x0/12288/0/r7");
  EXPECT_NE(skipped[0].why.find("is no call's time"), std::string::npos) << skipped[0].why;
  EXPECT_EQ(skipped[2].line, 4);
  EXPECT_EQ(skipped[2].key, "memory/cpu-avx2/axpy/4096x0x0/49152/0/r7");
  EXPECT_EQ(skipped[3].key, "memory/cpu-avx2/axpy/8192x0x0/98304/0/r7");
  EXPECT_NE(skipped[3].why.find("time_s 1e400"), std::string::npos) << skipped[3].why;
  EXPECT_EQ(skipped[4].line, 6);
  EXPECT_EQ(skipped[4].key, "");
  EXPECT_NE(skipped[4].why.find("not a complete JSON object"), std::string::npos) << skipped[4].why;
  std::filesystem::remove(path);
}

TEST(ProfileWriterTest, WrittenProfileLoadsBack) {
  models::Profile p;
  p.name = "x";
  p.source = "synthetic";
  models::DeviceProfile d;
  d.gemm_efficiency = 0.5;
  d.gemm_half_work_flop = 123456;
  d.memory_efficiency = 0.25;
  d.kernel_launch_s = 3.5e-7;
  d.framework_op_host_s = 0.0;
  p.devices["cpu-avx2"] = d;
  p.links["pcie"] = {2.5e9, 6e-6};
  const models::Profile back = models::parse_profile(profile_to_yaml(p, {"a comment"}));
  ASSERT_EQ(back.devices.count("cpu-avx2"), 1u);
  const auto& b = back.devices.at("cpu-avx2");
  EXPECT_NEAR(*b.gemm_efficiency, 0.5, 1e-9);
  EXPECT_NEAR(*b.gemm_half_work_flop, 123456, 0.5);
  EXPECT_NEAR(*b.kernel_launch_s, 3.5e-7, 1e-12);
  EXPECT_EQ(*b.framework_op_host_s, 0.0);
  EXPECT_FALSE(b.framework_pass_host_s.has_value());
  EXPECT_NEAR(back.links.at("pcie").bandwidth_Bps, 2.5e9, 1e3);
  EXPECT_NEAR(back.links.at("pcie").latency_s, 6e-6, 1e-12);
}

// A path with a newline or a byte that is not UTF-8 in the header ("Produced by `hetsim calibrate
// --cluster ...`") or the source (the checkpoint's path) still gives a profile that loads: the
// newline had started a YAML line of its own ("kind: evil.yaml") and calibrate refused its output.
TEST(ProfileWriterTest, PathsWithNewlinesOrLatin1StayInsideTheirComment) {
  models::Profile p;
  p.name = "c";
  p.source = "resumed from ck\xe9.jsonl";
  p.links["pcie"] = {2.5e9, 6e-6};
  const std::string yaml = profile_to_yaml(p, {"Produced by `hetsim calibrate --cluster nl\nkind: evil.yaml`", "caf\xe9"});
  EXPECT_NE(yaml.find("# Produced by `hetsim calibrate --cluster nl\n# kind: evil.yaml`\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("# caf\\xe9\n"), std::string::npos) << yaml;
  const models::Profile back = models::parse_profile(yaml);
  EXPECT_EQ(back.source, "resumed from ck\u00e9.jsonl");  // \xe9 reads back as U+00E9
  EXPECT_EQ(back.links.count("pcie"), 1u);
}

}  // namespace
}  // namespace hetsim::calibration
