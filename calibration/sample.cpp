// SPDX-License-Identifier: Apache-2.0
#include "sample.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>
#include <sstream>

#include "jsonl_file.hpp"

namespace hetsim::calibration {

const char* to_string(SampleKind k) {
  switch (k) {
    case SampleKind::kGemm: return "gemm";
    case SampleKind::kMemory: return "memory";
    case SampleKind::kAllReduce: return "all_reduce";
    case SampleKind::kP2p: return "p2p";
  }
  return "?";
}

double Sample::busbw_Bps() const {
  if (kind == SampleKind::kAllReduce && group > 0) return algbw_Bps() * 2.0 * (group - 1) / group;
  return algbw_Bps();
}

std::string Sample::key() const {
  std::ostringstream o;
  o << to_string(kind) << '/' << target << '/' << op << '/' << m << 'x' << n << 'x' << k << '/' << size_bytes << '/'
    << group << "/r" << repeats;
  return o.str();
}

std::string to_json_line(const Sample& s) {
  char buf[640];
  std::snprintf(buf, sizeof buf,
                "{\"kind\": \"%s\", \"target\": \"%s\", \"op\": \"%s\", \"m\": %.17g, \"n\": %.17g, \"k\": %.17g, "
                "\"size_bytes\": %.17g, \"group\": %d, \"repeats\": %d, \"time_s\": %.17g, \"algbw_Bps\": %.17g, "
                "\"busbw_Bps\": %.17g, \"measured_at\": \"%s\"}",
                to_string(s.kind), s.target.c_str(), s.op.c_str(), s.m, s.n, s.k, s.size_bytes, s.group, s.repeats, s.time_s,
                s.algbw_Bps(), s.busbw_Bps(), s.measured_at.c_str());
  return buf;
}

std::vector<Sample> read_checkpoint(const std::string& path) {
  std::vector<Sample> out;
  for (const YAML::Node& j : models::read_json_lines(path)) {
    try {
      Sample s;
      const std::string kind = j["kind"].as<std::string>();
      bool known = false;
      for (SampleKind k : {SampleKind::kGemm, SampleKind::kMemory, SampleKind::kAllReduce, SampleKind::kP2p}) {
        if (kind == to_string(k)) {
          s.kind = k;
          known = true;
        }
      }
      if (!known) continue;
      s.target = j["target"].as<std::string>();
      s.op = j["op"].as<std::string>();
      s.m = j["m"].as<double>();
      s.n = j["n"].as<double>();
      s.k = j["k"].as<double>();
      s.size_bytes = j["size_bytes"].as<double>();
      s.group = j["group"].as<int>();
      if (j["repeats"]) s.repeats = j["repeats"].as<int>();  // absent in older checkpoints: measured again
      if (j["measured_at"]) s.measured_at = j["measured_at"].as<std::string>();
      if (j["time_s"].Tag() == "!") continue;  // a quoted "0.001": not what calibrate writes
      s.time_s = j["time_s"].as<double>();
      // ".inf" parses; "1e300" and "1e-300" are finite: none is a call's time.
      if (std::isfinite(s.time_s) && s.time_s >= kMinSampleTime_s && s.time_s <= kMaxSampleTime_s) out.push_back(s);
    } catch (const YAML::Exception&) {
      continue;
    }
  }
  return out;
}

void append_checkpoint(const std::string& path, const Sample& s) { models::append_json_line(path, to_json_line(s)); }

}  // namespace hetsim::calibration
