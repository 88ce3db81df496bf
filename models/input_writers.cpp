// SPDX-License-Identifier: Apache-2.0
// Cluster / Workload -> YAML inputs, written atomically.
#include "input_writers.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <unistd.h>

#include "units.hpp"
#include "utf8.hpp"

namespace hetsim::models {

namespace {

/// v in units of `scale`, in the fewest digits (15 to 17) that the loader, which converts with
/// to_si(number, scale), reads back to the same double: "1.25", not "1.2500000000000002";
/// 5e-6 s in us is "5", not "5.0000000000000009".
std::string exact(double v, double scale = 1) {
  char buf[64];
  for (int digits : {15, 16, 17}) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v / scale);
    if (to_si(std::strtod(buf, nullptr), scale) == v) break;
  }
  return buf;
}
/// A value with its unit ("\"1.25GB/s\"").
std::string with_unit(double v, double scale, const char* unit) { return "\"" + exact(v, scale) + unit + "\""; }
std::string bandwidth(double Bps) { return with_unit(Bps, 1e9, "GB/s"); }
std::string duration(double s) { return with_unit(s, 1e-6, "us"); }
std::string price_per_hour(double dollars) {
  return "\"$" + exact(dollars) + "/h\"";
}

/// Appends s[i...]'s character to `out` and returns its bytes: a UTF-8 sequence as it is, a
/// control character or a byte that is not UTF-8 as YAML's \xNN (in a quoted scalar it reads back
/// as U+00NN; in a comment it keeps the line whole and the file UTF-8).
std::size_t append_readable(std::string& out, const std::string& s, std::size_t i) {
  static const char* const kHex = "0123456789abcdef";
  const auto c = static_cast<unsigned char>(s[i]);
  const std::size_t n = utf8_sequence_bytes(s, i);
  if (n == 0 || c < 0x20 || c == 0x7f) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 15];
    return 1;
  }
  out.append(s, i, n);
  return n;
}

}  // namespace

std::string yaml_comment_lines(const std::string& text) {
  std::string out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    out += "# ";
    for (std::size_t i = 0; i < line.size();) i += append_readable(out, line, i);
    out += '\n';
  }
  return out;
}

std::string yaml_quoted(const std::string& s) {
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size();) {
    if (s[i] == '"' || s[i] == '\\') {
      out += '\\';
      out += s[i++];
    } else {
      // A name read from a file stays one line; a Latin-1 path in a profile's source reads back
      // as U+00NN instead of failing the file hetsim wrote.
      i += append_readable(out, s, i);
    }
  }
  return out + "\"";
}

std::string cluster_to_yaml(const Cluster& c, const std::string& comment) {
  std::ostringstream y;
  y << yaml_comment_lines(comment);
  y << "kind: cluster\n";
  y << "name: " << yaml_quoted(c.name) << "\n";
  y << "cross_vendor_rdma: " << (c.cross_vendor_rdma ? "true" : "false") << "\n";
  y << "node_types:\n";
  for (const NodeType& nt : c.node_types) {
    y << "  " << yaml_quoted(nt.name) << ":\n";
    y << "    gpu: " << nt.gpu.name << "\n";
    y << "    gpus: " << nt.gpus_per_node << "\n";
    if (nt.intra.kind != IntraFabricKind::kNone && nt.intra.bandwidth_Bps > 0)
      y << "    intra: {kind: " << to_string(nt.intra.kind) << ", bandwidth: " << bandwidth(nt.intra.bandwidth_Bps)
        << ", latency: " << duration(nt.intra.latency_s) << (nt.intra.measured ? ", measured: true" : "")
        << (nt.intra.peer_to_peer ? ", peer_to_peer: true" : "") << (nt.intra.mesh ? ", mesh: true" : "") << "}\n";
    y << "    nics: {count: " << nt.nics.count << ", bandwidth: " << bandwidth(nt.nics.bandwidth_Bps)
      << ", kind: " << to_string(nt.nics.kind) << ", latency: " << duration(nt.nics.latency_s)
      << ", gpu_direct: " << (nt.nics.gpu_direct ? "true" : "false") << (nt.nics.measured ? ", measured: true" : "")
      << "}\n";
    y << "    host_link: " << bandwidth(nt.host_link_Bps) << "\n";
    y << "    price: " << price_per_hour(nt.price_per_hour) << "\n";
    if (nt.spot_price_per_hour) y << "    spot_price: " << price_per_hour(*nt.spot_price_per_hour) << "\n";
    if (nt.preemption_rate_per_hour > 0) {
      y << "    preemption_rate: \"" << exact(nt.preemption_rate_per_hour) << "/h\"\n";
    }
    if (nt.checkpoint_bandwidth_Bps) y << "    checkpoint_bandwidth: " << bandwidth(*nt.checkpoint_bandwidth_Bps) << "\n";
    if (nt.restart_time_s != kDefaultRestartTime_s) y << "    restart_time: " << duration(nt.restart_time_s) << "\n";
  }
  y << "zones:\n";
  for (const Zone& z : c.zones) {
    y << "  - name: " << yaml_quoted(z.name) << "\n";
    y << "    fabric: {kind: " << to_string(z.fabric.kind) << ", oversubscription: " << exact(z.fabric.oversubscription)
      << ", latency: " << duration(z.fabric.latency_s);
    if (z.fabric.bandwidth_Bps > 0) y << ", bandwidth: " << bandwidth(z.fabric.bandwidth_Bps);
    y << "}\n";
    y << "    nodes:\n";
    for (const NodeGroup& g : z.groups)
      y << "      - {type: " << yaml_quoted(c.node_types[g.node_type].name) << ", count: " << g.count << "}\n";
  }
  if (!c.links.empty()) {
    y << "links:\n";
    for (const InterZoneLink& l : c.links) {
      const std::string egress = "\"$" + exact(l.egress_price_per_byte, 1e-9) + "/GB\"";
      y << "  - {between: [" << yaml_quoted(c.zones[l.zone_a].name) << ", " << yaml_quoted(c.zones[l.zone_b].name)
        << "], bandwidth: " << bandwidth(l.bandwidth_Bps) << ", latency: " << duration(l.latency_s)
        << ", egress: " << egress << "}\n";
    }
  }
  return y.str();
}

std::string workload_to_yaml(const Workload& w, const std::string& comment) {
  std::ostringstream y;
  y << yaml_comment_lines(comment);
  const ModelSpec& m = w.model;
  y << "kind: workload\n";
  y << "name: " << yaml_quoted(w.name) << "\n";
  y << "model:\n";
  y << "  layers: " << m.layers << "\n";
  y << "  hidden: " << m.hidden << "\n";
  y << "  heads: " << m.heads << "\n";
  y << "  kv_heads: " << m.kv_heads << "\n";
  y << "  ffn_hidden: " << m.ffn_hidden << "\n";
  y << "  vocab: " << m.vocab << "\n";
  y << "  seq_len: " << m.seq_len << "\n";
  y << "  activation: " << to_string(m.activation) << "\n";
  y << "  tied_embeddings: " << (m.tied_embeddings ? "true" : "false") << "\n";
  y << "  dropout: " << exact(m.dropout) << "\n";
  y << "training:\n";
  y << "  global_batch: " << w.training.global_batch << "\n";
  y << "  dtype: " << to_string(w.training.dtype) << "\n";
  y << "  optimizer: " << to_string(w.training.optimizer) << "\n";
  y << "  flash_attention: " << (w.training.flash_attention ? "true" : "false") << "\n";
  if (w.training.fp32_grad_allreduce) y << "  fp32_grad_allreduce: true\n";
  if (!w.training.allow_tf32) y << "  allow_tf32: false\n";
  return y.str();
}

}  // namespace hetsim::models
