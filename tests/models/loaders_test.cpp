// SPDX-License-Identifier: Apache-2.0
// The input loaders (models/input_loader.hpp): SI values, defaults, cross-checks, positions.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include <unistd.h>

#include "compute_cost.hpp"
#include "diagnostics.hpp"
#include "input_loader.hpp"
#include "input_writers.hpp"

namespace hetsim::models {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const char* kCatalog = R"(kind: gpu-catalog
gpus:
  big:
    vendor: nvidia
    peak: {bf16: "312TFLOP/s", fp32: "19.5TFLOP/s"}
    memory: "80GiB"
    memory_bandwidth: "2039GB/s"
    source: "test"
  small:
    vendor: amd
    peak: {fp16: "100TFLOP/s"}
    memory: "16GiB"
    memory_bandwidth: "1TB/s"
    host_link: "63GB/s"
    efficiency: {gemm: 0.7, gemm_fp32: 0.9, gemm_half_work: "2GFLOP", memory: 0.9, kernel_launch: "8us", flash: 0.5}
    source: "test"
)";

const char* kCluster = R"(kind: cluster
name: two-zones
node_types:
  box:
    gpu: big
    gpus: 4
    intra: {bandwidth: "300GB/s"}
    nics: {count: 2, bandwidth: "200Gbps"}
    price: "$10/h"
    spot_price: "$4/h"
  single:
    gpu: small
    gpus: 1
    nics: {count: 1, bandwidth: "25Gbps", kind: ethernet, gpu_direct: false}
zones:
  - name: east
    fabric: {kind: fat-tree, oversubscription: 2}
    nodes: [{type: box, count: 2}]
  - name: west
    fabric: {kind: switch, latency: "10us"}
    nodes: [{type: single, count: 3}]
links:
  - {between: [west, east], bandwidth: "10Gbps", latency: "30ms", egress: "$0.05/GB"}
)";

const char* kWorkload = R"(kind: workload
name: w
model: {layers: 4, hidden: 64, heads: 4, vocab: 128, seq_len: 16}
training: {global_batch: 8}
)";

Catalog test_catalog() {
  Catalog c;
  for (auto& t : parse_catalog(kCatalog, "catalog.yaml")) c.add(std::move(t));
  return c;
}

std::vector<std::string> messages_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    std::vector<std::string> out;
    for (const auto& d : e.get_diagnostics()) out.push_back(d.to_string());
    return out;
  }
  return {"(no error)"};
}

TEST(CatalogLoader, ReadsPeaksAndEfficiencyDefaults) {
  const Catalog c = test_catalog();
  const GpuType& big = c.by_name("big");
  EXPECT_EQ(big.vendor, Vendor::kNvidia);
  EXPECT_DOUBLE_EQ(big.peak_flops.at(Dtype::kBf16), 312e12);
  EXPECT_FALSE(big.supports(Dtype::kFp8));
  EXPECT_DOUBLE_EQ(big.memory_bytes, 80.0 * (1ull << 30));
  EXPECT_DOUBLE_EQ(big.efficiency.gemm_efficiency, EfficiencyModel{}.gemm_efficiency);
  EXPECT_DOUBLE_EQ(big.efficiency.flash_scale, 1.0);
  const GpuType& small = c.by_name("small");
  EXPECT_DOUBLE_EQ(small.efficiency.gemm_half_work_flop, 2e9);
  EXPECT_DOUBLE_EQ(small.efficiency.flash_scale, 0.5);
  // gemm_fp32 applies to FP32 only; without it FP32 reads `gemm`.
  EXPECT_DOUBLE_EQ(small.gemm_efficiency_in(Dtype::kFp32), 0.9);
  EXPECT_DOUBLE_EQ(small.gemm_efficiency_in(Dtype::kFp16), 0.7);
  EXPECT_DOUBLE_EQ(big.gemm_efficiency_in(Dtype::kFp32), big.efficiency.gemm_efficiency);
  EXPECT_DOUBLE_EQ(small.sustained_flops(Dtype::kFp16), 100e12 * 0.7);
  EXPECT_DOUBLE_EQ(small.sustained_flops(Dtype::kBf16), 0.0);  // no bf16 peak
  EXPECT_DOUBLE_EQ(DeviceRates::of(small, Dtype::kFp16).eff.gemm_efficiency, 0.7);
  GpuType with_fp32 = small;
  with_fp32.peak_flops[Dtype::kFp32] = 50e12;
  EXPECT_DOUBLE_EQ(DeviceRates::of(with_fp32, Dtype::kFp32).eff.gemm_efficiency, 0.9);
  EXPECT_DOUBLE_EQ(small.efficiency.kernel_launch_s, 8e-6);
  EXPECT_EQ(c.by_name_or_null("nope"), nullptr);
  try {
    c.by_name("bigg");
    FAIL();
  } catch (const std::out_of_range& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown GPU 'bigg' (did you mean 'big'? known: big, small)"));
  }
}

TEST(CatalogLoader, FolderRejectsATypeDefinedTwice) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("hetsim_catalog_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "a.yaml") << kCatalog;
  std::ofstream(dir / "b.yaml") << kCatalog;
  const auto msgs = messages_of([&] { load_catalog_dir(dir.string()); });
  // Each repeated name at both of its places: the file read first may be the one to fix.
  ASSERT_EQ(msgs.size(), 4u);
  EXPECT_THAT(msgs, Contains(HasSubstr("b.yaml:3:3: error: gpus.big: GPU type 'big' is already defined in")));
  EXPECT_THAT(msgs, Contains(HasSubstr("a.yaml:3:3: error: gpus.big: GPU type 'big' is defined again in " +
                                       (dir / "b.yaml").string() + " (expected unique names)")));
  fs::remove(dir / "b.yaml");
  // A name the folder lacks: the error says which folder was read (a type added to another
  // checkout's catalog is the usual cause).
  const Catalog one = load_catalog_dir(dir.string());
  EXPECT_THAT(one.unknown_gpu_message("mi455x"),
              HasSubstr("; GPU types are read from " + dir.string() + ", or from $HETSIM_CATALOG_DIR when set"));
  fs::remove_all(dir);
}

// A type's alias that reads like a type of another file: the error points at the alias and says
// where the other type is defined.
TEST(CatalogLoader, FolderNamesTheFileOfATypeThatReadsAlike) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("hetsim_catalog_alike_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "a.yaml") << kCatalog;
  std::ofstream(dir / "b.yaml") << R"(kind: gpu-catalog
gpus:
  other:
    aliases: ["Other Card", "NVIDIA BIG"]
    vendor: nvidia
    peak: {bf16: "100TFLOP/s"}
    memory: "16GiB"
    memory_bandwidth: "1TB/s"
    source: "test"
)";
  const auto msgs = messages_of([&] { load_catalog_dir(dir.string()); });
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_THAT(msgs, Contains(HasSubstr("b.yaml:4:29: error: gpus.other.aliases[1]: 'NVIDIA BIG' reads as 'big', as "
                                       "GPU type 'big' in " + (dir / "a.yaml").string() + " does")));
  EXPECT_THAT(msgs, Contains(HasSubstr("a.yaml:3:3: error: gpus.big: 'big' of GPU type 'big' reads as 'big', as GPU "
                                       "type 'other' in " + (dir / "b.yaml").string() + " (gpus.other.aliases[1]) does")));
  // The other way round (s60 walkthrough): the new type's file is read first and its alias takes
  // a bundled type's name, which then failed alone, at the bundled entry, as if it were the slip.
  fs::rename(dir / "b.yaml", dir / "0-mine.yaml");
  const auto reversed = messages_of([&] { load_catalog_dir(dir.string()); });
  fs::remove_all(dir);
  ASSERT_EQ(reversed.size(), 2u);
  EXPECT_THAT(reversed, Contains(HasSubstr("0-mine.yaml:4:29: error: gpus.other.aliases[1]: 'NVIDIA BIG' of GPU type "
                                           "'other' reads as 'big', as GPU type 'big' in " + (dir / "a.yaml").string() +
                                           " does")));
  EXPECT_THAT(reversed, Contains(HasSubstr("a.yaml:3:3: error: gpus.big: 'big' reads as 'big', as an alias of GPU type "
                                           "'other' in " + (dir / "0-mine.yaml").string() + " does")));
}

TEST(CatalogLoader, FolderReadsYmlFilesToo) {
  // A catalog written as gpus.yml was skipped; the cluster then met "unknown GPU" (s25 audit).
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("hetsim_catalog_yml_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "gpus.YML") << kCatalog;
  std::ofstream(dir / "notes.txt") << "not a catalog\n";
  const Catalog c = load_catalog_dir(dir.string());
  fs::remove_all(dir);
  EXPECT_NE(c.by_name_or_null("big"), nullptr);
  EXPECT_TRUE(is_catalog_file_name("a.yaml") && is_catalog_file_name("b.Yml") && !is_catalog_file_name("c.txt"));
  EXPECT_FALSE(is_catalog_file_name(".#nvidia.yaml") || is_catalog_file_name(".nvidia.yaml"));
}

TEST(CatalogLoader, BuiltinCatalogLoads) { EXPECT_FALSE(Catalog::builtin().get_names().empty()); }

TEST(CatalogLoader, ExactNameIsABoolean) {
  std::string text = kCatalog;
  text.replace(text.find("    vendor: amd"), 0, "    exact_name: true\n");
  EXPECT_TRUE(parse_catalog(text, "c.yaml").at(1).exact_name);
  EXPECT_FALSE(parse_catalog(text, "c.yaml").at(0).exact_name);
  text.replace(text.find("exact_name: true"), 16, "exact_name: yes");
  const auto msgs = messages_of([&] { parse_catalog(text, "c.yaml"); });
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_THAT(msgs[0], HasSubstr("c.yaml:10:17: error: gpus.small.exact_name:"));
}

TEST(Catalog, ReplacingATypeDropsTheAliasesItNoLongerHas) {
  Catalog c = test_catalog();
  GpuType t = c.by_name("big");
  t.aliases = {"Big Card"};
  c.add(t);
  ASSERT_NE(c.by_name_or_null("NVIDIA Big Card"), nullptr);
  t.aliases.clear();
  c.add(t);
  EXPECT_EQ(c.by_name_or_null("NVIDIA Big Card"), nullptr);
  EXPECT_EQ(c.by_name("NVIDIA BIG").name, "big");
  t.name = "other";
  t.aliases = {"Big Card"};  // free again
  c.add(t);
  EXPECT_EQ(c.by_name("big card").name, "other");
}

TEST(ClusterLoader, AGpuSpelledAsPrintedLoadsUnderItsCatalogName) {
  std::string text = kCluster;
  text.replace(text.find("gpu: big"), 8, "gpu: NVIDIA BIG");
  const Cluster c = parse_cluster(text, test_catalog(), "c.yaml");
  EXPECT_EQ(c.node_types.at(0).gpu.name, "big");
}

TEST(Catalog, AddingATypeThatReadsLikeAnotherThrows) {
  Catalog c = test_catalog();
  GpuType t = c.by_name("big");
  t.name = "BIG";
  EXPECT_THROW(c.add(t), std::invalid_argument);
  t.name = "big";  // the same type again replaces it
  t.aliases = {"Big Card"};
  c.add(t);
  EXPECT_EQ(c.by_name("NVIDIA Big Card").name, "big");
}

TEST(ClusterLoader, ConvertsToSiAndAppliesDefaults) {
  const Cluster c = parse_cluster(kCluster, test_catalog(), "c.yaml");
  EXPECT_EQ(c.name, "two-zones");
  ASSERT_EQ(c.node_types.size(), 2u);
  const NodeType& box = c.node_types[0];
  EXPECT_EQ(box.gpu.name, "big");
  EXPECT_EQ(box.intra.kind, IntraFabricKind::kNvswitch);
  EXPECT_DOUBLE_EQ(box.intra.bandwidth_Bps, 300e9);
  EXPECT_DOUBLE_EQ(box.intra.latency_s, 2e-6);
  EXPECT_DOUBLE_EQ(box.nics.bandwidth_Bps, 25e9);
  EXPECT_TRUE(box.nics.gpu_direct);
  EXPECT_DOUBLE_EQ(box.host_link_Bps, 32e9);  // its GPU type gives none: PCIe 4.0 x16
  EXPECT_DOUBLE_EQ(box.price_per_hour, 10);
  EXPECT_EQ(box.spot_price_per_hour, 4);
  const NodeType& single = c.node_types[1];
  EXPECT_EQ(single.intra.kind, IntraFabricKind::kNone);  // one GPU: no intra-node fabric
  EXPECT_DOUBLE_EQ(single.host_link_Bps, 63e9);          // its GPU type's host interface
  EXPECT_EQ(single.nics.kind, NicKind::kEthernet);
  EXPECT_FALSE(single.nics.gpu_direct);
  ASSERT_EQ(c.zones.size(), 2u);
  EXPECT_DOUBLE_EQ(c.zones[0].fabric.oversubscription, 2);
  EXPECT_DOUBLE_EQ(c.zones[0].fabric.latency_s, 5e-6);
  EXPECT_EQ(c.zones[1].fabric.kind, ZoneFabricKind::kSwitch);
  EXPECT_DOUBLE_EQ(c.zones[1].fabric.latency_s, 10e-6);
  ASSERT_EQ(c.links.size(), 1u);
  EXPECT_EQ(c.links[0].zone_a, 0);  // stored in zone order whatever the file's order
  EXPECT_EQ(c.links[0].zone_b, 1);
  EXPECT_DOUBLE_EQ(c.links[0].egress_price_per_byte, 0.05e-9);
  EXPECT_EQ(c.gpu_count(), 2 * 4 + 3);
  EXPECT_EQ(c.nodes.size(), 5u);
}

TEST(ClusterLoader, MeshFabricIsReadAndWrittenBack) {
  std::string text = kCluster;
  const std::string intra = R"(intra: {bandwidth: "300GB/s"})";
  text.replace(text.find(intra), intra.size(), R"(intra: {bandwidth: "450GB/s", kind: nvlink, mesh: true})");
  const Cluster c = parse_cluster(text, test_catalog());
  EXPECT_TRUE(c.node_types[0].intra.mesh);
  EXPECT_FALSE(parse_cluster(kCluster, test_catalog()).node_types[0].intra.mesh);  // switch by default
  EXPECT_TRUE(parse_cluster(cluster_to_yaml(c), test_catalog()).node_types[0].intra.mesh);
}

TEST(ClusterLoader, ReportsAllErrorsOfTheFileAtOnce) {
  const std::string text = R"(kind: cluster
name: c
node_types:
  box: {gpu: bigg, gpus: 2, nics: {count: 1, bandwidth: 25}}
zones:
  - {name: z, fabric: {kind: fat-tre}, nodes: [{type: boxx, count: 1}]}
)";
  EXPECT_THAT(messages_of([&] { parse_cluster(text, test_catalog(), "c.yaml"); }),
              ElementsAre(HasSubstr("c.yaml:4:3: error: node_types.box: missing key 'intra'"),
                          "c.yaml:4:14: error: node_types.box.gpu: unknown GPU 'bigg' (did you mean 'big'? known: big, small)",
                          "c.yaml:4:57: error: node_types.box.nics.bandwidth: missing unit in \"25\" (expected a bandwidth such as \"25Gbps\")",
                          HasSubstr("c.yaml:6:30: error: zones[0].fabric.kind: unknown value 'fat-tre' (did you mean 'fat-tree'?"),
                          HasSubstr("c.yaml:6:55: error: zones[0].nodes[0].type: unknown node type 'boxx'")));
}

TEST(ClusterLoader, WrongKindIsNamed) {
  EXPECT_THAT(messages_of([&] { parse_cluster(kWorkload, test_catalog(), "w.yaml"); }),
              ElementsAre("w.yaml:1:7: error: kind: this file is a 'workload' (expected 'cluster')"));
}

TEST(WorkloadLoader, AppliesDefaults) {
  const Workload w = parse_workload(kWorkload);
  EXPECT_EQ(w.model.kv_heads, 4);
  EXPECT_EQ(w.model.ffn_hidden, 256);
  EXPECT_TRUE(w.model.tied_embeddings);
  EXPECT_EQ(w.model.activation, Activation::kGelu);
  EXPECT_EQ(w.training.dtype, Dtype::kBf16);
  EXPECT_EQ(w.training.optimizer, Optimizer::kAdam);
  EXPECT_FALSE(w.training.flash_attention);
  EXPECT_TRUE(w.training.allow_tf32);  // NGC PyTorch containers' default
  EXPECT_DOUBLE_EQ(w.model.dropout, 0.1);  // GPT-3 / Megatron-LM default
}

// Names are UTF-8: a character of several bytes is printable (its bytes 0x80-0x9F are not C1
// controls: U+20AC is E2 82 AC), while C1 controls and U+2028 are refused (tests/config/bad).
TEST(WorkloadLoader, NamesMayHoldAnyPrintableCharacter) {
  std::string text = kWorkload;
  text.replace(text.find("name: w"), 7, "name: \"GPT-\u20ac \u00e9t\u00e9 \u4e2d\"");
  EXPECT_EQ(parse_workload(text).name, "GPT-\u20ac \u00e9t\u00e9 \u4e2d");
}

TEST(WorkloadLoader, Tf32CanBeTurnedOffAndIsWrittenBack) {
  std::string text = kWorkload;
  const std::string key = "training: {";
  text.replace(text.find(key), key.size(), key + "allow_tf32: false, ");
  const Workload w = parse_workload(text);
  EXPECT_FALSE(w.training.allow_tf32);
  EXPECT_FALSE(parse_workload(workload_to_yaml(w)).training.allow_tf32);  // the writer keeps it
  EXPECT_TRUE(parse_workload(workload_to_yaml(parse_workload(kWorkload))).training.allow_tf32);
}

TEST(WorkloadLoader, DropoutIsAProbability) {
  std::string text = kWorkload;
  const std::string model = "model: {layers: 4, hidden: 64, heads: 4, vocab: 128, seq_len: 16";
  const auto with = [&](const std::string& value) {
    std::string t = text;
    t.replace(t.find(model), model.size(), model + ", dropout: " + value);
    return t;
  };
  EXPECT_DOUBLE_EQ(parse_workload(with("0")).model.dropout, 0.0);
  EXPECT_FALSE(parse_workload(with("0")).model.has_dropout());
  EXPECT_THAT(messages_of([&] { parse_workload(with("1.5"), "w.yaml"); }),
              ::testing::Contains(HasSubstr("w.yaml:3:")));
  EXPECT_THAT(messages_of([&] { parse_workload(with("-0.1"), "w.yaml"); }),
              ::testing::Contains(HasSubstr("model.dropout")));
}

TEST(InputKind, PeekReadsOnlyTheKind) {
  EXPECT_EQ(peek_kind_text(kCluster), InputKind::kCluster);
  EXPECT_EQ(peek_kind_text("kind: plan\nwhatever: 1\n"), InputKind::kPlan);
  EXPECT_THAT(messages_of([] { peek_kind_text("kind: clustr\n", "x.yaml"); }),
              ElementsAre(HasSubstr("x.yaml:1:7: error: kind: unknown value 'clustr' (did you mean 'cluster'?")));
}

const char* kPlan = R"(kind: plan
name: p
micro_batch: 2
schedule: gpipe
replicas:
  - micro_batches: 2
    stages:
      - {layers: 3, gpus: "east/box[0]/gpu[0-3]"}
      - {layers: 1, gpus: "box[1]"}
  - micro_batches: 1
    stages:
      - {layers: 4, gpus: [8]}
  - micro_batches: 1
    stages:
      - {layers: 4, gpus: ["west/single[2]"]}
)";

TEST(PlanLoader, ResolvesSelectorsListsAndIndices) {
  const Cluster c = parse_cluster(kCluster, test_catalog());
  const Plan p = parse_plan(kPlan, c, parse_workload(kWorkload));
  EXPECT_EQ(p.name, "p");
  EXPECT_EQ(p.schedule, Schedule::kGpipe);
  ASSERT_EQ(p.dp(), 3);
  EXPECT_THAT(p.replicas[0].stages[0].gpus, ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(p.replicas[0].stages[1].gpus, ElementsAre(4, 5, 6, 7));
  EXPECT_THAT(p.replicas[1].stages[0].gpus, ElementsAre(8));
  EXPECT_THAT(p.replicas[2].stages[0].gpus, ElementsAre(10));
  EXPECT_EQ(p.global_batch(), 8);
}

TEST(PlanLoader, AGlobalBatchBeyondIntIsReportedNotOverflowed) {
  // 2^24 sequences a micro-batch x 1024 micro-batches = 2^34 (the fuzzer's "large" values;
  // the product once overflowed an int, undefined behaviour under UBSan).
  std::string text = kPlan;
  text.replace(text.find("micro_batch: 2"), 14, "micro_batch: 16777216");
  text.replace(text.find("micro_batches: 2"), 16, "micro_batches: 1022");
  const Cluster c = parse_cluster(kCluster, test_catalog());
  const auto messages = messages_of([&] { parse_plan(text, c, parse_workload(kWorkload), "p.yaml"); });
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_THAT(messages[0], HasSubstr("micro_batch x sum of micro_batches = 17179869184"));
}

TEST(PlanLoader, SpecKeepsSelectorsAsWritten) {
  const PlanSpec s = parse_plan_spec(kPlan);
  ASSERT_EQ(s.gpus_text.size(), 3u);
  EXPECT_EQ(s.gpus_text[0][0], "east/box[0]/gpu[0-3]");
  EXPECT_EQ(s.gpus_text[1][0], "[8]");
  EXPECT_TRUE(s.plan.replicas[0].stages[0].gpus.empty());
  EXPECT_THAT(s.plan.replicas[1].stages[0].gpus, ElementsAre(8));
}

TEST(PlanLoader, CrossCheckErrorsPointAtTheirField) {
  const Cluster c = parse_cluster(kCluster, test_catalog());
  const std::string text = R"(kind: plan
micro_batch: 1
replicas:
  - micro_batches: 8
    stages:
      - {layers: 3, gpus: "gpu[0-2]"}
      - {layers: 1, gpus: "gpu[2-3]"}
)";
  const auto msgs = messages_of([&] { parse_plan(text, c, parse_workload(kWorkload), "p.yaml"); });
  EXPECT_THAT(msgs, ::testing::Contains("p.yaml:6:27: error: replicas[0].stages[0].gpus: tp 3 does not divide model.heads (4) (expected a number of GPUs that divides it)"));
  EXPECT_THAT(msgs, ::testing::Contains(HasSubstr("p.yaml:7:27: error: replicas[0].stages[1].gpus: GPU 2")));
}

// A TP degree that does not divide the model is the plan's infeasibility, a result with a reason,
// when the caller asks for it and it is the file's only kind of problem; with another error in
// the file it is reported with it, all at once.
TEST(PlanLoader, ADegreeNotDividingTheModelIsAReasonWhenAskedFor) {
  const Cluster c = parse_cluster(kCluster, test_catalog());
  const Workload w = parse_workload(kWorkload);
  const std::string text = "kind: plan\nmicro_batch: 1\nreplicas:\n  - micro_batches: 8\n    stages:\n"
                           "      - {layers: 4, gpus: \"gpu[0-2]\"}\n";
  std::string reason;
  const Plan p = parse_plan(text, c, w, "p.yaml", &reason);
  EXPECT_EQ(p.replicas.at(0).stages.at(0).tp(), 3);
  EXPECT_EQ(reason, "p.yaml:6:27: replicas[0].stages[0].gpus: tp 3 does not divide model.heads (4) (expected a number "
                    "of GPUs that divides it); p.yaml:6:27: replicas[0].stages[0].gpus: tp 3 does not divide "
                    "model.ffn_hidden (256) (expected a number of GPUs that divides it)");
  const std::string with_error = "kind: plan\nmicro_batch: 1\nreplicas:\n  - micro_batches: 8\n    stages:\n"
                                 "      - {layers: 3, gpus: \"gpu[0-2]\"}\n";
  const auto msgs = messages_of([&] { parse_plan(with_error, c, w, "p.yaml", &reason); });
  ASSERT_EQ(msgs.size(), 3u);
  EXPECT_THAT(msgs, ::testing::Contains(HasSubstr("p.yaml:6:7: error: replicas[0].stages: layers sum to 3")));
  EXPECT_THAT(msgs, ::testing::Contains(HasSubstr("p.yaml:6:27: error: replicas[0].stages[0].gpus: tp 3 does not divide model.heads")));
  // A plan that divides leaves the reason empty.
  parse_plan("kind: plan\nmicro_batch: 1\nreplicas:\n  - micro_batches: 8\n    stages:\n"
             "      - {layers: 4, gpus: \"gpu[0-3]\"}\n", c, w, "p.yaml", &reason);
  EXPECT_EQ(reason, "");
}

TEST(PlanLoader, BadSelectorIsReportedAtItsPosition) {
  const Cluster c = parse_cluster(kCluster, test_catalog());
  const std::string text = "kind: plan\nmicro_batch: 1\nreplicas:\n  - micro_batches: 8\n    stages:\n"
                           "      - {layers: 4, gpus: [0, \"mars/box[0]\", 99]}\n";
  const auto msgs = messages_of([&] { parse_plan(text, c, parse_workload(kWorkload), "p.yaml"); });
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_THAT(msgs[0], HasSubstr("p.yaml:6:31: error: replicas[0].stages[0].gpus[1]: unknown zone 'mars'"));
  EXPECT_EQ(msgs[1], "p.yaml:6:46: error: replicas[0].stages[0].gpus[2]: value 99 out of range (expected an integer between 0 and 10)");
}

// One bad entry in a stage's list left the stage with the others, and the cross-checks reported on
// them: "tp 3 does not divide model.heads" of a stage written with four GPUs.
TEST(PlanLoader, ABadEntryOfAGpuListIsTheStagesOnlyError) {
  const Cluster c = parse_cluster(kCluster, test_catalog());
  const std::string text = "kind: plan\nmicro_batch: 1\nreplicas:\n  - micro_batches: 8\n    stages:\n"
                           "      - {layers: 4, gpus: [0, 1, 2, -1]}\n";
  const auto msgs = messages_of([&] { parse_plan(text, c, parse_workload(kWorkload), "p.yaml"); });
  ASSERT_EQ(msgs.size(), 1u) << msgs.front();
  EXPECT_EQ(msgs[0], "p.yaml:6:37: error: replicas[0].stages[0].gpus[3]: value -1 out of range (expected an integer between 0 and 10)");
}

// `gpus: true` was looked up as a node type named 'true'.
TEST(PlanLoader, ABooleanIsNoGpuSelector) {
  const Cluster c = parse_cluster(kCluster, test_catalog());
  const std::string text = "kind: plan\nmicro_batch: 1\nreplicas:\n  - micro_batches: 8\n    stages:\n"
                           "      - {layers: 4, gpus: yes}\n";
  const auto msgs = messages_of([&] { parse_plan(text, c, parse_workload(kWorkload), "p.yaml"); });
  ASSERT_EQ(msgs.size(), 1u) << msgs.front();
  EXPECT_EQ(msgs[0], "p.yaml:6:27: error: replicas[0].stages[0].gpus: expected a GPU selector such as "
                     "\"zone/type[0]/gpu[0-7]\" or a list of them, got the boolean 'yes' (quote it if it names a node type)");
}

// A selector out of range, or a misspelt key, stopped the plan's other checks: the layer and
// batch sums of the same file came only after the user had fixed the first error.
TEST(PlanLoader, ASelectorOrKeyErrorDoesNotHideTheOtherChecks) {
  const Cluster c = parse_cluster(kCluster, test_catalog());
  const std::string text = "kind: plan\nmicro_batch: 1\nzeroo: 1\nreplicas:\n  - micro_batches: 6\n    stages:\n"
                           "      - {layers: 3, gpus: \"box[0]/gpu[9]\"}\n";
  const auto msgs = messages_of([&] { parse_plan(text, c, parse_workload(kWorkload), "p.yaml"); });
  ASSERT_EQ(msgs.size(), 4u) << ::testing::PrintToString(msgs);
  EXPECT_THAT(msgs[0], HasSubstr("p.yaml:3:1: error: unknown key 'zeroo'"));
  EXPECT_THAT(msgs[1], HasSubstr("p.yaml:5:3: error: replicas: micro_batch x sum of micro_batches = 6 (expected"));
  EXPECT_THAT(msgs[2], HasSubstr("p.yaml:7:7: error: replicas[0].stages: layers sum to 3 (expected model.layers = 4 of workload w)"));
  // The stage's GPUs did not resolve: its selector error alone, not also "no GPUs".
  EXPECT_THAT(msgs[3], HasSubstr("p.yaml:7:27: error: replicas[0].stages[0].gpus: GPU 9 out of range"));
}

// A setting that needs another (zero3_prefetch without ZeRO-3) is about values read as written:
// it stopped the cross-checks, and the layer sum appeared only once it was fixed (s58 docs hunt).
TEST(PlanLoader, ASettingThatNeedsAnotherDoesNotHideTheOtherChecks) {
  const Cluster c = parse_cluster(kCluster, test_catalog());
  const std::string text = "kind: plan\nmicro_batch: 1\nzero3_prefetch: true\nreplicas:\n  - micro_batches: 8\n"
                           "    stages:\n      - {layers: 3, gpus: \"gpu[0]\"}\n";
  const auto msgs = messages_of([&] { parse_plan(text, c, parse_workload(kWorkload), "p.yaml"); });
  ASSERT_EQ(msgs.size(), 2u) << ::testing::PrintToString(msgs);
  EXPECT_THAT(msgs[0], HasSubstr("p.yaml:3:17: error: zero3_prefetch: prefetching gathers weights that only ZeRO-3"));
  EXPECT_THAT(msgs[1], HasSubstr("p.yaml:7:7: error: replicas[0].stages: layers sum to 3 (expected model.layers = 4 of workload w)"));
}

// After an error that leaves a value unread, the checks would report on its default instead.
TEST(PlanLoader, ChecksDoNotRunOnValuesThatDidNotRead) {
  const Cluster c = parse_cluster(kCluster, test_catalog());
  const std::string text = "kind: plan\nmicro_batch: two\nreplicas:\n  - micro_batches: 8\n    stages:\n"
                           "      - {layers: 3, gpus: \"gpu[0]\"}\n";
  const auto msgs = messages_of([&] { parse_plan(text, c, parse_workload(kWorkload), "p.yaml"); });
  ASSERT_EQ(msgs.size(), 1u) << ::testing::PrintToString(msgs);
  EXPECT_THAT(msgs[0], HasSubstr("p.yaml:2:14: error: micro_batch:"));
}

TEST(PlanHeader, FindsNamesAndPathsInAncestorFolders) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("hetsim_header_" + std::to_string(::getpid()));
  fs::create_directories(root / "clusters");
  fs::create_directories(root / "workloads");
  fs::create_directories(root / "plans" / "sub");
  std::ofstream(root / "clusters" / "c1.yaml") << kCluster;
  std::ofstream(root / "workloads" / "w1.yaml") << kWorkload;
  std::ofstream(root / "plans" / "sub" / "p.yaml") << "# cluster: c1\n# workload: workloads/w1.yaml\n# cluster: later-lines-do-not-override\nkind: plan\n";
  std::ofstream(root / "plans" / "q.yaml") << "# cluster: c1  workload: nowhere\nkind: plan\n";
  std::ofstream(root / "plans" / "r.yaml") << "kind: plan\n# cluster: c1\n";
  // A UTF-8 BOM and CRLF line ends, which the YAML reader takes: the header is still found (a BOM
  // hid it, and describe skipped the plan's cross-check; s26 audit F5).
  std::ofstream(root / "plans" / "bom.yaml") << "\xEF\xBB\xBF# cluster: c1\r\n# workload: w1\r\nkind: plan\r\n";
  // Either case: "# Cluster:" had been a plain comment (s67 walkthrough).
  std::ofstream(root / "plans" / "caps.yaml") << "# Cluster: c1\n# WORKLOAD: w1\nkind: plan\n";
  const PlanHeader p = read_plan_header((root / "plans" / "sub" / "p.yaml").string());
  const PlanHeader q = read_plan_header((root / "plans" / "q.yaml").string());
  const PlanHeader r = read_plan_header((root / "plans" / "r.yaml").string());
  const PlanHeader bom = read_plan_header((root / "plans" / "bom.yaml").string());
  const PlanHeader caps = read_plan_header((root / "plans" / "caps.yaml").string());
  EXPECT_TRUE(fs::equivalent(caps.cluster, root / "clusters" / "c1.yaml")) << caps.cluster;
  EXPECT_TRUE(fs::equivalent(caps.workload, root / "workloads" / "w1.yaml")) << caps.workload;
  EXPECT_TRUE(fs::equivalent(bom.cluster, root / "clusters" / "c1.yaml")) << bom.cluster;
  EXPECT_TRUE(fs::equivalent(bom.workload, root / "workloads" / "w1.yaml")) << bom.workload;
  EXPECT_TRUE(fs::equivalent(p.cluster, root / "clusters" / "c1.yaml")) << p.cluster;
  EXPECT_TRUE(fs::equivalent(p.workload, root / "workloads" / "w1.yaml")) << p.workload;
  EXPECT_TRUE(fs::equivalent(q.cluster, root / "clusters" / "c1.yaml")) << q.cluster;
  EXPECT_EQ(q.workload, "nowhere");  // not found: returned as written, the loader then reports it
  EXPECT_TRUE(r.cluster.empty());    // only the leading comment block counts
  EXPECT_TRUE(p.extras.empty() && q.extras.empty() && bom.extras.empty());
  fs::remove_all(root);
}

// Text after a header's name: a comment is fine, a second word is not ("# cluster: local-cpu
// dgx-a100" used local-cpu without a word; s60 hunt).
TEST(PlanHeader, ReportsTextAfterAName) {
  namespace fs = std::filesystem;
  const fs::path path = fs::temp_directory_path() / ("hetsim_header_extra_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(path) << "# cluster: c1 c2\n# workload: w1   # the workload\n# cluster: c1 junk workload: w1 (x)\nkind: plan\n";
  const PlanHeader h = read_plan_header(path.string());
  fs::remove(path);
  ASSERT_EQ(h.extras.size(), 3u);
  EXPECT_EQ(h.extras[0].line, 1);
  EXPECT_EQ(h.extras[0].col, 15);
  EXPECT_EQ(h.extras[0].what, "cluster");
  EXPECT_EQ(h.extras[0].text, "c2");
  EXPECT_EQ(h.extras[1].line, 3);
  EXPECT_EQ(h.extras[1].text, "junk");
  EXPECT_EQ(h.extras[2].what, "workload");
  EXPECT_EQ(h.extras[2].text, "(x)");
  EXPECT_EQ(h.cluster, "c1");
  EXPECT_EQ(h.workload, "w1");
}

}  // namespace
}  // namespace hetsim::models
