// SPDX-License-Identifier: Apache-2.0
// The trace's JSON from a SimResult (no simulation): what a folded run says, and the link
// counters written from their busy bins.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>

#include "trace_writer.hpp"

namespace hetsim::sim {
namespace {

SimResult two_tracks(bool folded) {
  SimResult r;
  r.iteration_time_s = 2.0;
  r.folded = folded;
  r.replicas_total = 4;
  r.replicas_simulated = folded ? 1 : 4;
  r.tracks = {"gpu 0 (r0 s0)", "node[0]/nic[0]/up"};
  r.spans = {{0, "F mb0", "forward", 0.0, 1.0}};
  LinkBusy link;
  link.track = 1;
  link.busy_s.assign(kLinkBins, 0.0);
  for (int i = 0; i < kLinkBins / 2; ++i) link.busy_s[i] = 2.0 / kLinkBins;  // busy the first second
  r.link_busy = {link};
  return r;
}

TEST(TraceWriter, AFoldedRunSaysWhichReplicasItsGpuTracksAre) {
  const YAML::Node folded = YAML::Load(chrome_trace_json(two_tracks(true)));
  EXPECT_EQ(folded["traceEvents"][0]["args"]["name"].as<std::string>(),
            "GPUs of 1 of 4 replicas (the others are congruent: folded)");
  const YAML::Node whole = YAML::Load(chrome_trace_json(two_tracks(false)));
  EXPECT_EQ(whole["traceEvents"][0]["args"]["name"].as<std::string>(), "GPUs");
}

TEST(TraceWriter, LinkCountersComeFromTheBusyBins) {
  const YAML::Node doc = YAML::Load(chrome_trace_json(two_tracks(false)));
  std::vector<std::pair<double, double>> samples;  // (ts in us, busy)
  for (const auto& ev : doc["traceEvents"])
    if (ev["ph"].as<std::string>() == "C") samples.emplace_back(ev["ts"].as<double>(), ev["args"]["busy"].as<double>());
  // Busy the first second, idle the next: a sample at 0 (1.0), one at 1 s (0.0); equal values
  // are not repeated.
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_DOUBLE_EQ(samples[0].first, 0.0);
  EXPECT_DOUBLE_EQ(samples[0].second, 1.0);
  EXPECT_DOUBLE_EQ(samples[1].first, 1e6);
  EXPECT_DOUBLE_EQ(samples[1].second, 0.0);
}

}  // namespace
}  // namespace hetsim::sim
