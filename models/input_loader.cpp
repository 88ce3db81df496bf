// SPDX-License-Identifier: Apache-2.0
// Input-file plumbing shared by every loader: `kind:` detection and plan header comments.
#include "input_loader.hpp"

#include <filesystem>
#include <fstream>
#include <regex>

#include "loader_common.hpp"

namespace hetsim::models {

const char* to_string(InputKind k) {
  switch (k) {
    case InputKind::kGpuCatalog: return "gpu-catalog";
    case InputKind::kCluster: return "cluster";
    case InputKind::kWorkload: return "workload";
    case InputKind::kPlan: return "plan";
    case InputKind::kProfile: return "profile";
  }
  return "?";
}

namespace detail {

const EnumTable<InputKind>& input_kind_table() {
  static const EnumTable<InputKind> t = {{"gpu-catalog", InputKind::kGpuCatalog},
                                         {"cluster", InputKind::kCluster},
                                         {"workload", InputKind::kWorkload},
                                         {"plan", InputKind::kPlan},
                                         {"profile", InputKind::kProfile}};
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
    MapReader root(*doc, "", sink, doc->Mark());
    kind = root.get_enum("kind", Need::kRequired, detail::input_kind_table());
  }
  sink.throw_if_any();
  return *kind;
}

InputKind peek_kind(const std::string& path) { return peek_kind_text(detail::read_file_or_throw(path), path); }

PlanHeader read_plan_header(const std::string& plan_path) {
  namespace fs = std::filesystem;
  PlanHeader header;
  std::ifstream in(plan_path);
  std::string line;
  // "# cluster: a.yaml  workload: b.yaml", either key alone, in the leading comment block.
  static const std::regex kKey(R"((cluster|workload):\s*(\S+))");
  for (int n = 0; n < 20 && std::getline(in, line); ++n) {
    if (line.empty()) continue;
    if (line[0] != '#') break;
    for (std::sregex_iterator it(line.begin(), line.end(), kKey), end; it != end; ++it) {
      ((*it)[1] == "cluster" ? header.cluster : header.workload) = (*it)[2];
    }
  }
  // Find each path relative to the plan's folder or its ancestors (nearest first).
  const auto locate = [&](std::string& p) {
    if (p.empty() || fs::path(p).is_absolute()) return;
    std::error_code ec;
    for (fs::path dir = fs::absolute(plan_path, ec).parent_path(); !dir.empty(); dir = dir.parent_path()) {
      if (fs::exists(dir / p, ec)) {
        p = (dir / p).lexically_normal().string();
        return;
      }
      if (dir == dir.parent_path()) break;
    }
  };
  locate(header.cluster);
  locate(header.workload);
  return header;
}

}  // namespace hetsim::models
