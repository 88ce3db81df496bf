// SPDX-License-Identifier: Apache-2.0
// Chrome trace-event writer. Format: Google, "Trace Event Format" (2016 document used by
// chrome://tracing and Perfetto): {"traceEvents": [...]}, ts/dur in microseconds. GPU tracks
// hold "X" spans (passes, sends, waits, DP sync, optimizer); each busy link is a "C" counter
// track of the fraction of time it carried traffic.
#include "trace_writer.hpp"

#include "atomic_file.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace hetsim::sim {
namespace {

template <class Out>
void escape(Out& out, const std::string& s) {
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

/// Output in pieces of about 1 MB: the stream sees few, large writes.
class Chunked {
 public:
  explicit Chunked(std::ostream& out) : out_(out) { buf_.reserve(kChunk + 4096); }
  ~Chunked() { flush(); }
  Chunked& operator+=(const std::string& s) { return append(s.data(), s.size()); }
  Chunked& operator+=(const char* s) { return append(s, std::strlen(s)); }
  Chunked& operator+=(char c) { return append(&c, 1); }
  void flush() {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }

 private:
  static constexpr std::size_t kChunk = 1 << 20;
  Chunked& append(const char* s, std::size_t n) {
    buf_.append(s, n);
    if (buf_.size() >= kChunk) flush();
    return *this;
  }
  std::ostream& out_;
  std::string buf_;
};

std::string count_text(double n) {
  char buf[32];
  if (n >= 1e6) std::snprintf(buf, sizeof buf, "%.3gM", n / 1e6);
  else if (n >= 1e3) std::snprintf(buf, sizeof buf, "%.3gK", n / 1e3);
  else std::snprintf(buf, sizeof buf, "%.0f", n);
  return buf;
}

}  // namespace

double trace_event_bound(double gpu_spans, double gpu_tracks, double links) {
  return gpu_spans + links * (kLinkBins + 1) + gpu_tracks + links + 2;
}

std::string trace_refusal(double events, double gpu_spans, double links, double limit) {
  return "the timeline could hold up to " + count_text(events) + " events (" + count_text(gpu_spans) + " GPU spans, " +
         count_text(links * (kLinkBins + 1)) + " link counter samples over " + count_text(links) +
         " links), above the limit of " + count_text(limit) +
         " (about 100 bytes each in the JSON; expected fewer GPUs or replicas simulated)";
}

std::string chrome_trace_json(const SimResult& r) {
  std::ostringstream out;
  write_chrome_trace_json(r, out);
  return out.str();
}

void write_chrome_trace_json(const SimResult& r, std::ostream& stream) {
  Chunked out(stream);
  out += "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  char buf[256];
  // A folded run has tracks for the simulated replicas only: the process name says so (the
  // trace alone read as if the plan had those GPUs only; s65 trace hunt).
  char gpus[128] = "GPUs";
  if (r.folded && r.replicas_simulated < r.replicas_total)
    std::snprintf(gpus, sizeof gpus, "GPUs of %d of %d replicas (the others are congruent: folded)",
                  r.replicas_simulated, r.replicas_total);
  std::snprintf(buf, sizeof buf,
                "{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":\"%s\"}},\n"
                "{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":\"links\"}}",
                kGpuPid, gpus, kLinkPid);
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
  const double t_end = r.iteration_time_s > 0 ? r.iteration_time_s : 1.0;
  const double bin = t_end / kLinkBins;
  for (const auto& sp : r.spans) {
    std::snprintf(buf, sizeof buf, ",\n{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"cat\":\"",
                  pid_of[sp.track], sp.track, sp.start_s * 1e6, (sp.end_s - sp.start_s) * 1e6);
    out += buf;
    escape(out, sp.category);
    out += "\",\"name\":\"";
    escape(out, sp.name);
    out += "\"}";
  }
  for (const LinkBusy& link : r.link_busy) {
    double last = -1;
    for (int i = 0; i <= kLinkBins; ++i) {
      const double busy_s = i < kLinkBins && i < static_cast<int>(link.busy_s.size()) ? link.busy_s[i] : 0.0;
      const double v = std::round(1000 * busy_s / bin) / 1000;
      if (v == last) continue;
      last = v;
      std::snprintf(buf, sizeof buf, ",\n{\"ph\":\"C\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"cat\":\"link\",\"name\":\"", kLinkPid,
                    link.track, i * bin * 1e6);
      out += buf;
      escape(out, r.tracks[link.track]);
      std::snprintf(buf, sizeof buf, "\",\"args\":{\"busy\":%.3f}}", v);
      out += buf;
    }
  }
  out += "\n]}\n";
}

void write_chrome_trace(const SimResult& result, const std::string& path) {
  models::write_file_atomic(path, [&](std::ostream& out) { write_chrome_trace_json(result, out); });
}

}  // namespace hetsim::sim
