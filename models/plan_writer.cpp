// SPDX-License-Identifier: Apache-2.0
// Plan -> `kind: plan` YAML, written atomically.
#include "plan_writer.hpp"

#include "atomic_file.hpp"
#include "input_writers.hpp"
#include "json_writer.hpp"
#include "utf8.hpp"
#include "yaml_reader.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <stdexcept>

#include <unistd.h>

namespace hetsim::models {

std::string index_ranges(const std::vector<int>& indices, const char* separator) {
  std::string out;
  for (size_t i = 0; i < indices.size();) {
    size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    if (!out.empty()) out += separator;
    out += std::to_string(indices[i]);
    if (j > i) out += "-" + std::to_string(indices[j]);
    i = j + 1;
  }
  return out;
}

std::string gpu_selector(const std::vector<int>& gpus, const Cluster& c) {
  const int node = c.node_of_gpu(gpus.front());
  bool one_node = true;
  std::vector<int> local;
  for (int g : gpus) {
    one_node = one_node && c.node_of_gpu(g) == node;
    local.push_back(c.gpus[g].local);
  }
  if (!one_node) return "gpu[" + index_ranges(gpus) + "]";
  return c.node_name(node) + "/gpu[" + index_ranges(local) + "]";
}

std::string plan_header_path(const std::string& path) {
  // The reader takes a name up to the first blank (read_plan_header): "My Projects/c.yaml" came
  // back as "My", a newline ended the comment (the plan no longer loaded), and ": workload:" in
  // a folder's name read as a second key. Such a path is written quoted, as a JSON string.
  const bool plain = !path.empty() && path[0] != '"' &&
                     std::none_of(path.begin(), path.end(), [](char c) {
                       return static_cast<unsigned char>(c) <= 0x20 || c == '#' || c == '\\' || c == 0x7f;
                     }) &&
                     path.find("cluster:") == std::string::npos && path.find("workload:") == std::string::npos;
  return plain ? path : "\"" + json_escape_string(path) + "\"";
}

std::string plan_to_yaml(const Plan& plan, const Cluster& cluster, const PlanWriteOptions& o) {
  std::ostringstream y;
  // A path that is not UTF-8 (a file name in another encoding) cannot be written into the plan,
  // whose reader accepts UTF-8 only: the plan hetsim wrote was refused at its first line. The
  // header is left out, and the verbs then ask for --cluster / --workload.
  for (const auto& [key, path] : {std::pair{"cluster", &o.cluster_path}, std::pair{"workload", &o.workload_path}}) {
    if (path->empty()) continue;
    if (is_valid_utf8(*path)) y << "# " << key << ": " << plan_header_path(*path) << "\n";
    else y << "# (the " << key << " file's path is not UTF-8: give it with --" << key << ")\n";
  }
  y << yaml_comment_lines(o.comment);
  y << "kind: plan\n";
  if (!plan.name.empty()) y << "name: " << yaml_quoted(plan.name) << "\n";
  y << "micro_batch: " << plan.micro_batch << "\n";
  y << "schedule: " << to_string(plan.schedule) << "\n";
  y << "interleave: " << plan.interleave << "\n";
  y << "recompute: " << to_string(plan.recompute) << "\n";
  y << "sequence_parallel: " << (plan.sequence_parallel ? "true" : "false") << "\n";
  y << "zero: " << plan.zero << "\n";
  y << "grad_sync: " << to_string(plan.grad_sync) << "\n";
  y << "overlap_grad_sync: " << (plan.overlap_grad_sync ? "true" : "false") << "\n";
  if (plan.tp_comm_overlap) y << "tp_comm_overlap: true\n";
  if (plan.overlap_p2p_comm) y << "overlap_p2p_comm: true\n";
  if (!plan.zero3_prefetch) y << "zero3_prefetch: false\n";
  if (plan.sharded_collectives != ShardedCollectives::kMemberNic)
    y << "sharded_collectives: " << to_string(plan.sharded_collectives) << "\n";
  y << "replicas:\n";
  for (const Replica& r : plan.replicas) {
    y << "  - micro_batches: " << r.micro_batches << "\n";
    y << "    stages:\n";
    for (const Stage& s : r.stages) {
      y << "      - {layers: " << s.layers << ", gpus: " << yaml_quoted(gpu_selector(s.gpus, cluster)) << "}\n";
    }
  }
  return y.str();
}

std::string header_path(const std::string& input, const std::string& plan_path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path target = fs::weakly_canonical(fs::absolute(input, ec), ec);
  const fs::path folder = fs::weakly_canonical(fs::absolute(plan_path, ec), ec).parent_path();
  const fs::path rel = target.lexically_relative(folder);
  int climbs = 0;
  for (const auto& part : rel)
    if (part == "..") ++climbs;
  return rel.empty() || climbs > 1 ? target.string() : rel.string();
}

void write_plan_file(const std::string& path, const Plan& plan, const Cluster& cluster, const PlanWriteOptions& o) {
  const std::string text = plan_to_yaml(plan, cluster, o);
  // What hetsim writes it must read back: the loaders refuse inputs above kMaxInputBytes (a
  // plan of a million replicas came to 84 MB, which predict then refused with exit 2).
  if (text.size() > kMaxInputBytes) {
    char mib[32];
    std::snprintf(mib, sizeof mib, "%.1f", static_cast<double>(text.size()) / (1 << 20));
    throw std::runtime_error(path + ": not written: the plan's " + std::to_string(plan.replicas.size()) +
                             " replicas take " + mib + " MiB of YAML, above the " +
                             std::to_string(kMaxInputBytes >> 20) + " MiB that hetsim reads back");
  }
  write_text_file_atomic(path, text);
}

}  // namespace hetsim::models
