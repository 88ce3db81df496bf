// SPDX-License-Identifier: Apache-2.0
// Input-file plumbing shared by every loader: `kind:` detection and plan header comments.
#include "input_loader.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iterator>
#include <regex>
#include <sstream>

#include "loader_common.hpp"

namespace hetsim::models {

const char* to_string(InputKind k) {
  switch (k) {
    case InputKind::kGpuCatalog: return "gpu-catalog";
    case InputKind::kCluster: return "cluster";
    case InputKind::kWorkload: return "workload";
    case InputKind::kPlan: return "plan";
    case InputKind::kProfile: return "profile";
    case InputKind::kSweep: return "sweep";
  }
  return "?";
}

namespace detail {

const EnumTable<InputKind>& input_kind_table() {
  static const EnumTable<InputKind> t = {{"gpu-catalog", InputKind::kGpuCatalog},
                                         {"cluster", InputKind::kCluster},
                                         {"workload", InputKind::kWorkload},
                                         {"plan", InputKind::kPlan},
                                         {"profile", InputKind::kProfile},
                                         {"sweep", InputKind::kSweep}};
  return t;
}

const EnumTable<Dtype>& dtype_table() {
  static const EnumTable<Dtype> t = {{"fp32", Dtype::kFp32},
                                     {"tf32", Dtype::kTf32},
                                     {"fp16", Dtype::kFp16},
                                     {"bf16", Dtype::kBf16},
                                     {"fp8", Dtype::kFp8}};
  return t;
}

const EnumTable<Recompute>& recompute_table() {
  static const EnumTable<Recompute> t = {
      {"none", Recompute::kNone}, {"selective", Recompute::kSelective}, {"full", Recompute::kFull}};
  return t;
}

const EnumTable<Activation>& activation_table() {
  static const EnumTable<Activation> t = {{"gelu", Activation::kGelu}, {"swiglu", Activation::kSwiglu}};
  return t;
}

const EnumTable<ShardedCollectives>& sharded_collectives_table() {
  static const EnumTable<ShardedCollectives> t = {{"member_nic", ShardedCollectives::kMemberNic},
                                                  {"node_nics", ShardedCollectives::kNodeNics}};
  return t;
}

std::optional<MapReader> open_document(std::string_view text, DiagnosticSink& sink, InputKind expected) {
  const auto doc = parse_yaml_document(text, sink);
  if (!doc) return std::nullopt;
  MapReader root(*doc, "", sink, doc->Mark());
  const auto kind = root.get_enum("kind", Need::kRequired, input_kind_table());
  if (!kind) return std::nullopt;
  if (*kind != expected) {
    sink.error(root.value_mark_of("kind"), "kind",
               std::string("this file is a '") + to_string(*kind) + "' (expected '" + to_string(expected) + "')");
    return std::nullopt;
  }
  return root;
}

std::string read_file_or_throw(const std::string& path) {
  DiagnosticSink sink(path);
  auto text = read_input_text(path, sink);
  sink.throw_if_any();
  return std::move(*text);
}

}  // namespace detail

InputKind peek_kind_text(std::string_view text, const std::string& name) {
  DiagnosticSink sink(name);
  const auto doc = parse_yaml_document(text, sink);
  std::optional<InputKind> kind;
  if (doc) {
    // A ground-truth suite has no `kind:` (its format is the shared one, ../shared/validation):
    // say what it is and which verb reads it, not that a key is missing.
    if (!(*doc)["kind"] && (*doc)["suite"] && (*doc)["rows"]) {
      sink.error(doc->Mark(), "",
                 "a validation suite (it has 'suite:' and 'rows:', no 'kind:'), read by `hetsim validate` and "
                 "`hetsim fit` (expected here an input with 'kind:': gpu-catalog, cluster, workload, plan, profile "
                 "or sweep)");
      sink.throw_if_any();
    }
    MapReader root(*doc, "", sink, doc->Mark());
    kind = root.get_enum("kind", Need::kRequired, detail::input_kind_table());
  }
  // Other problems the parse found (a YAML tag) are left to the file's loader, which reports
  // them with the rest of the file's errors.
  if (!kind) sink.throw_if_any();
  return *kind;
}

InputKind peek_kind(const std::string& path) { return peek_kind_text(detail::read_file_or_throw(path), path); }

namespace {

/// A header's name as written: a bare word as is, a JSON string (plan_header_path) unescaped by
/// the YAML reader (JSON's escapes are YAML double-quoted ones).
std::string header_name(const std::string& written) {
  if (written.size() < 2 || written.front() != '"' || written.back() != '"') return written;
  try {
    return YAML::Load(written).as<std::string>();
  } catch (const YAML::Exception&) {
    return written;  // a hand-edited header the reader refuses: the name as written, which the loader reports
  }
}

}  // namespace

PlanHeader read_plan_header(const std::string& plan_path) {
  namespace fs = std::filesystem;
  PlanHeader header;
  // Through read_input_text, as the plan's loader reads it: a pipe is read once for both.
  DiagnosticSink ignored(plan_path);  // a file that cannot be read has no header; its loader says why
  std::istringstream in(read_input_text(plan_path, ignored).value_or(""));
  std::string line;
  // Lines of the leading comment block that start with "# cluster:" or "# workload:"; one line
  // may name both ("# cluster: a.yaml  workload: b.yaml").
  // Either case: "# Cluster:" was read as a plain comment (s67 walkthrough).
  static const std::regex kStart(R"(^#\s*(cluster|workload):)", std::regex::icase);
  // A name is a word up to the first blank, or a JSON string (plan_header_path quotes a path
  // with blanks, '#', control characters or a key's name in it).
  static const std::regex kKey(R"re((cluster|workload):\s*("(?:[^"\\]|\\.)*"|\S+))re", std::regex::icase);
  for (int n = 0; n < 50 && std::getline(in, line); ++n) {
    if (n == 0 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // a UTF-8 BOM, as the YAML reader skips
    if (!line.empty() && line.back() == '\r') line.pop_back();            // CRLF
    if (line.empty()) continue;
    if (line[0] != '#') break;
    if (!std::regex_search(line, kStart)) continue;
    for (std::sregex_iterator it(line.begin(), line.end(), kKey), end; it != end; ++it) {
      // What follows the name up to the next key must be blank or a comment.
      const auto next = std::next(it);
      const std::size_t from = static_cast<std::size_t>(it->position() + it->length());
      const std::size_t to = next == end ? line.size() : static_cast<std::size_t>(next->position());
      const std::size_t text_at = line.find_first_not_of(" \t", from);
      if (text_at < to && line[text_at] != '#') {
        const std::size_t text_end = line.find_last_not_of(" \t", to - 1) + 1;
        header.extras.push_back({n + 1, static_cast<int>(text_at) + 1, (*it)[1], line.substr(text_at, text_end - text_at)});
      }
      std::string key = (*it)[1];
      std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
      const bool is_cluster = key == "cluster";
      std::string& slot = is_cluster ? header.cluster : header.workload;
      const std::string name = header_name((*it)[2]);
      if (!slot.empty()) {  // the first mention wins; another name is a conflict to report
        if (slot != name) header.conflicts.push_back({n + 1, key, name});
        continue;
      }
      slot = name;
      (is_cluster ? header.cluster_line : header.workload_line) = n + 1;
    }
  }
  // A bare name ("mixed-a100-v100") means clusters/<name>.yaml or workloads/<name>.yaml.
  // Paths are looked up relative to the plan's folder and its ancestors, nearest first.
  const auto locate = [&](std::string& p, const char* folder) {
    if (p.empty() || fs::path(p).is_absolute()) return;
    std::vector<fs::path> candidates = {fs::path(p)};
    if (p.find('/') == std::string::npos && fs::path(p).extension() != ".yaml") {
      candidates.insert(candidates.begin(), fs::path(folder) / (p + ".yaml"));
    }
    std::error_code ec;
    for (fs::path dir = fs::absolute(plan_path, ec).parent_path(); !dir.empty(); dir = dir.parent_path()) {
      for (const auto& c : candidates) {
        // A symlink that cannot be followed (a loop) is found too: the loader then says why.
        std::error_code follow;
        const bool unfollowable = fs::is_symlink(dir / c, ec) && !fs::exists(dir / c, follow) && follow &&
                                  follow != std::errc::no_such_file_or_directory;
        if (fs::is_regular_file(dir / c, ec) || unfollowable) {
          // Shown to users: relative to the working folder when it is below it.
          const fs::path found = (dir / c).lexically_normal();
          const fs::path rel = found.lexically_relative(fs::current_path(ec));
          p = (!rel.empty() && *rel.begin() != "..") ? rel.string() : found.string();
          return;
        }
      }
      if (dir == dir.parent_path()) break;
    }
  };
  locate(header.cluster, "clusters");
  locate(header.workload, "workloads");
  return header;
}

}  // namespace hetsim::models
