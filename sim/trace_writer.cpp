// SPDX-License-Identifier: Apache-2.0
// Chrome trace-event writer. Format: Google, "Trace Event Format" (2016 document used by
// chrome://tracing and Perfetto): {"traceEvents": [...]}, ts/dur in microseconds.
#include "trace_writer.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace hetsim::sim {
namespace {

void escape(std::string& out, const std::string& s) {
  for (char ch : s) {
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", ch);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
}

constexpr int kGpuPid = 1;
constexpr int kLinkPid = 2;

}  // namespace

std::string chrome_trace_json(const SimResult& r) {
  std::string out = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":\"GPUs\"}},\n"
                "{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":\"links\"}}",
                kGpuPid, kLinkPid);
  out += buf;
  // Tracks: GPU tracks come first in SimResult::tracks, then links (their names contain '/').
  std::vector<int> pid_of(r.tracks.size(), kGpuPid);
  for (std::size_t t = 0; t < r.tracks.size(); ++t) {
    if (r.tracks[t].rfind("gpu ", 0) != 0) pid_of[t] = kLinkPid;
    std::snprintf(buf, sizeof buf, ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%zu,\"name\":\"thread_name\",\"args\":{\"name\":\"", pid_of[t], t);
    out += buf;
    escape(out, r.tracks[t]);
    out += "\"}}";
  }
  for (const auto& sp : r.spans) {
    std::snprintf(buf, sizeof buf, ",\n{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"cat\":\"",
                  pid_of[sp.track], sp.track, sp.start_s * 1e6, (sp.end_s - sp.start_s) * 1e6);
    out += buf;
    escape(out, sp.category);
    out += "\",\"name\":\"";
    escape(out, sp.name);
    out += "\"}";
  }
  out += "\n]}\n";
  return out;
}

void write_chrome_trace(const SimResult& result, const std::string& path) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error("cannot write trace file '" + tmp + "'");
    f << chrome_trace_json(result);
    if (!f.flush()) throw std::runtime_error("cannot write trace file '" + tmp + "'");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw std::runtime_error("cannot rename '" + tmp + "' to '" + path + "': " + ec.message());
}

}  // namespace hetsim::sim
