// SPDX-License-Identifier: Apache-2.0
#include "sample.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>
#include <iomanip>
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
  o << std::setprecision(17);  // sizes whole: 12582912, not 1.25829e+07
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

std::vector<Sample> read_checkpoint(const std::string& path, std::vector<CheckpointSkip>* skipped) {
  std::vector<Sample> out;
  const auto skip = [&](int line, const std::string& key, const std::string& why) {
    if (skipped) skipped->push_back({line, key, why});
  };
  for (const models::JsonLine& l : models::read_json_lines_numbered(path)) {
    const YAML::Node& j = l.record;
    if (!j.IsMap()) {
      skip(l.line, "", "not a complete JSON object (a write cut short by a kill, or damage)");
      continue;
    }
    Sample s;
    try {
      const std::string kind = j["kind"].as<std::string>();
      bool known = false;
      for (SampleKind k : {SampleKind::kGemm, SampleKind::kMemory, SampleKind::kAllReduce, SampleKind::kP2p}) {
        if (kind == to_string(k)) {
          s.kind = k;
          known = true;
        }
      }
      if (!known) {
        skip(l.line, "", "kind '" + kind + "' is no microbenchmark (expected gemm, memory, all_reduce or p2p)");
        continue;
      }
      s.target = j["target"].as<std::string>();
      s.op = j["op"].as<std::string>();
      s.m = j["m"].as<double>();
      s.n = j["n"].as<double>();
      s.k = j["k"].as<double>();
      s.size_bytes = j["size_bytes"].as<double>();
      s.group = j["group"].as<int>();
      if (j["repeats"]) s.repeats = j["repeats"].as<int>();  // absent in older checkpoints: measured again
      if (j["measured_at"]) s.measured_at = j["measured_at"].as<std::string>();
    } catch (const YAML::Exception&) {
      skip(l.line, "", "a field of the record is missing or unreadable (expected a line hetsim calibrate wrote)");
      continue;
    }
    // As written: a quoted value with its quotes, null as null.
    const YAML::Node t = j["time_s"];
    const std::string written = !t                 ? std::string("missing")
                                : t.IsNull()       ? std::string("null")
                                : t.Tag() == "!"   ? "\"" + t.Scalar() + "\""
                                : t.IsScalar()     ? t.Scalar()
                                                   : std::string("not a number");
    const std::string why_time = "time_s " + written + " is no call's time (expected seconds between 1e-9 and 900, unquoted)";
    if (!j["time_s"] || j["time_s"].Tag() == "!") {  // a quoted "0.001": not what calibrate writes
      skip(l.line, s.key(), why_time);
      continue;
    }
    try {
      s.time_s = j["time_s"].as<double>();
    } catch (const YAML::Exception&) {  // 1e400 and words do not convert
      skip(l.line, s.key(), why_time);
      continue;
    }
    // ".inf" parses; "1e300" and "1e-300" are finite: none is a call's time.
    if (std::isfinite(s.time_s) && s.time_s >= kMinSampleTime_s && s.time_s <= kMaxSampleTime_s) out.push_back(s);
    else skip(l.line, s.key(), why_time);
  }
  return out;
}

void append_checkpoint(const std::string& path, const Sample& s) { models::append_json_line(path, to_json_line(s)); }

}  // namespace hetsim::calibration
