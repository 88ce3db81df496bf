// SPDX-License-Identifier: Apache-2.0
#include "input_test_support.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "catalog.hpp"
#include "input_loader.hpp"
#include "sweep_spec.hpp"

namespace hetsim::test {

std::vector<std::string> list_files(const std::string& dir, const std::string& ext) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file() && e.path().extension() == ext) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void load_any(const std::string& path) {
  using namespace hetsim::models;
  switch (peek_kind(path)) {
    case InputKind::kGpuCatalog: load_catalog_file(path); break;
    case InputKind::kCluster: load_cluster(path, Catalog::builtin()); break;
    case InputKind::kWorkload: load_workload(path); break;
    case InputKind::kPlan: {
      const PlanHeader h = read_plan_header(path);
      if (h.cluster.empty() || h.workload.empty()) {
        load_plan_spec(path);
      } else {
        const Cluster c = load_cluster(h.cluster, Catalog::builtin());
        const Workload w = load_workload(h.workload);
        load_plan(path, c, w);
      }
      break;
    }
    case InputKind::kProfile: load_profile(path); break;
    case InputKind::kSweep: load_sweep_inputs(path, Catalog::builtin()); break;  // checked against its cluster
  }
}

std::string test_name_of(const std::string& path) {
  std::string s = std::filesystem::path(path).stem().string();
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

}  // namespace hetsim::test
