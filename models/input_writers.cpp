// SPDX-License-Identifier: Apache-2.0
// Cluster / Workload -> YAML inputs, written atomically.
#include "input_writers.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <unistd.h>

namespace hetsim::models {

namespace {

/// Shortest of %.15g / %.17g that reads back as the same double ("1.25", not "1.2500000000000002").
std::string exact(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  if (std::strtod(buf, nullptr) != v) std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}
/// A value with its unit ("\"1.25GB/s\"").
std::string with_unit(double v, double scale, const char* unit) { return "\"" + exact(v / scale) + unit + "\""; }
std::string bandwidth(double Bps) { return with_unit(Bps, 1e9, "GB/s"); }
std::string duration(double s) { return with_unit(s, 1e-6, "us"); }
std::string price_per_hour(double dollars) {
  return "\"$" + exact(dollars) + "/h\"";
}

void header(std::ostringstream& y, const std::string& comment) {
  std::istringstream lines(comment);
  for (std::string line; std::getline(lines, line);) y << "# " << line << "\n";
}

/// Double-quoted YAML scalar.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

}  // namespace

std::string cluster_to_yaml(const Cluster& c, const std::string& comment) {
  std::ostringstream y;
  header(y, comment);
  y << "kind: cluster\n";
  y << "name: " << quoted(c.name) << "\n";
  y << "cross_vendor_rdma: " << (c.cross_vendor_rdma ? "true" : "false") << "\n";
  y << "node_types:\n";
  for (const NodeType& nt : c.node_types) {
    y << "  " << quoted(nt.name) << ":\n";
    y << "    gpu: " << nt.gpu.name << "\n";
    y << "    gpus: " << nt.gpus_per_node << "\n";
    if (nt.intra.kind != IntraFabricKind::kNone && nt.intra.bandwidth_Bps > 0)
      y << "    intra: {kind: " << to_string(nt.intra.kind) << ", bandwidth: " << bandwidth(nt.intra.bandwidth_Bps)
        << ", latency: " << duration(nt.intra.latency_s) << "}\n";
    y << "    nics: {count: " << nt.nics.count << ", bandwidth: " << bandwidth(nt.nics.bandwidth_Bps)
      << ", kind: " << to_string(nt.nics.kind) << ", latency: " << duration(nt.nics.latency_s)
      << ", gpu_direct: " << (nt.nics.gpu_direct ? "true" : "false") << "}\n";
    y << "    host_link: " << bandwidth(nt.host_link_Bps) << "\n";
    y << "    price: " << price_per_hour(nt.price_per_hour) << "\n";
    if (nt.spot_price_per_hour) y << "    spot_price: " << price_per_hour(*nt.spot_price_per_hour) << "\n";
    if (nt.preemption_rate_per_hour > 0) {
      y << "    preemption_rate: \"" << exact(nt.preemption_rate_per_hour) << "/h\"\n";
    }
  }
  y << "zones:\n";
  for (const Zone& z : c.zones) {
    y << "  - name: " << quoted(z.name) << "\n";
    y << "    fabric: {kind: " << to_string(z.fabric.kind) << ", oversubscription: " << exact(z.fabric.oversubscription)
      << ", latency: " << duration(z.fabric.latency_s);
    if (z.fabric.bandwidth_Bps > 0) y << ", bandwidth: " << bandwidth(z.fabric.bandwidth_Bps);
    y << "}\n";
    y << "    nodes:\n";
    for (const NodeGroup& g : z.groups)
      y << "      - {type: " << quoted(c.node_types[g.node_type].name) << ", count: " << g.count << "}\n";
  }
  if (!c.links.empty()) {
    y << "links:\n";
    for (const InterZoneLink& l : c.links) {
      const std::string egress = "\"$" + exact(l.egress_price_per_byte * 1e9) + "/GB\"";
      y << "  - {between: [" << quoted(c.zones[l.zone_a].name) << ", " << quoted(c.zones[l.zone_b].name)
        << "], bandwidth: " << bandwidth(l.bandwidth_Bps) << ", latency: " << duration(l.latency_s)
        << ", egress: " << egress << "}\n";
    }
  }
  return y.str();
}

std::string workload_to_yaml(const Workload& w, const std::string& comment) {
  std::ostringstream y;
  header(y, comment);
  const ModelSpec& m = w.model;
  y << "kind: workload\n";
  y << "name: " << quoted(w.name) << "\n";
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
  y << "training:\n";
  y << "  global_batch: " << w.training.global_batch << "\n";
  y << "  dtype: " << to_string(w.training.dtype) << "\n";
  y << "  optimizer: " << to_string(w.training.optimizer) << "\n";
  y << "  flash_attention: " << (w.training.flash_attention ? "true" : "false") << "\n";
  return y.str();
}

void write_text_file_atomic(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + tmp);
    out << text;
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw std::runtime_error("cannot write " + tmp);
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot rename " + tmp + " to " + path);
  }
}

}  // namespace hetsim::models
