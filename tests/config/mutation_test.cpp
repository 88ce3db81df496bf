// SPDX-License-Identifier: Apache-2.0
// Robustness: thousands of deterministic random mutations of the bundled inputs (bytes flipped,
// deleted, duplicated, truncated, YAML punctuation inserted) must each either load or fail with
// a ConfigError; never another exception, a crash or a hang.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>

#include <sys/resource.h>

#include "catalog.hpp"
#include "diagnostics.hpp"
#include "input_loader.hpp"
#include "sweep_spec.hpp"
#include "input_test_support.hpp"

namespace {

using namespace hetsim::models;

constexpr rlim_t kAddressSpaceCap = rlim_t{8} << 30;  // 8 GiB: far above what loading needs

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string mutate(std::string text, std::mt19937& rng) {
  static const std::string kPunctuation = ":-[]{},\"'#&*!|>%@`\t\n ";
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !text.empty(); ++e) {
    const size_t at = rng() % text.size();
    switch (rng() % 6) {
      case 0: text[at] = static_cast<char>(rng() % 256); break;              // any byte
      case 1: text[at] = kPunctuation[rng() % kPunctuation.size()]; break;  // YAML syntax
      case 2: text.erase(at, 1 + rng() % 8); break;
      case 3: text.insert(at, text.substr(at, 1 + rng() % 16)); break;
      case 4: text.resize(at); break;
      case 5: text.insert(at, 1, kPunctuation[rng() % kPunctuation.size()]); break;
    }
  }
  return text;
}

/// Loads `text` as the kind of input it claims to be; returns whether it loaded.
bool load_text(const std::string& text, const Cluster& cluster, const Workload& workload) {
  switch (peek_kind_text(text, "mutant.yaml")) {
    case InputKind::kGpuCatalog: parse_catalog(text, "mutant.yaml"); break;
    case InputKind::kCluster: parse_cluster(text, Catalog::builtin(), "mutant.yaml"); break;
    case InputKind::kWorkload: parse_workload(text, "mutant.yaml"); break;
    case InputKind::kPlan: parse_plan(text, cluster, workload, "mutant.yaml"); break;
    case InputKind::kProfile: break;
    case InputKind::kSweep: parse_sweep_spec(text, "mutant.yaml"); break;
  }
  return true;
}

TEST(Mutation, EveryMutantLoadsOrFailsWithAConfigError) {
  // A parser that allocates without bound must fail this test, not exhaust the machine:
  // cap the address space (this process only) so that it shows up as std::bad_alloc.
  rlimit cap{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &cap), 0);
  cap.rlim_cur = std::min(cap.rlim_cur, kAddressSpaceCap);  // only ever lowered
  ASSERT_EQ(setrlimit(RLIMIT_AS, &cap), 0);
  const std::string config = HETSIM_CONFIG_TEST_DIR;
  const Cluster cluster = load_cluster(config + "/fixtures/two-boxes.yaml", Catalog::builtin());
  const Workload workload = load_workload(config + "/fixtures/tiny-model.yaml");
  std::vector<std::string> seeds;
  for (const char* dir : {"/clusters", "/clusters/catalog", "/workloads"}) {
    for (const auto& f : hetsim::test::list_files(std::string(HETSIM_SOURCE_DIR) + dir)) seeds.push_back(read_all(f));
  }
  seeds.push_back(read_all(config + "/fixtures/ok-plan.yaml"));
  std::mt19937 rng(20240601);  // fixed seed: the same mutants on every run
  int loaded = 0, rejected = 0;
  for (int i = 0; i < 3000; ++i) {
    const std::string mutant = mutate(seeds[i % seeds.size()], rng);
    try {
      load_text(mutant, cluster, workload);
      ++loaded;
    } catch (const ConfigError& e) {
      ++rejected;
      ASSERT_NE(std::string(e.what()).find("mutant.yaml"), std::string::npos) << e.what();
      ASSERT_EQ(std::string(e.what()).find("bad_alloc"), std::string::npos) << "mutant " << i << ":\n" << mutant;
    } catch (const std::exception& e) {
      FAIL() << "mutant " << i << " threw " << typeid(e).name() << ": " << e.what() << "\n--- input ---\n" << mutant;
    }
  }
  // Both outcomes occur, so the mutations neither always break nor never break the inputs.
  EXPECT_GT(loaded, 0);
  EXPECT_GT(rejected, 0);
}

}  // namespace
