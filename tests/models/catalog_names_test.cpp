// SPDX-License-Identifier: Apache-2.0
// GPU names as people and tools write them: the catalog's spelling-insensitive lookup, its
// aliases, and what an unknown name is told (models/catalog.hpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "catalog.hpp"

namespace hetsim::models {
namespace {

using ::testing::HasSubstr;

// Inputs may name a type as nvidia-smi / rocm-smi print it; the type keeps its catalog name.
TEST(Catalog, FindsATypeByThePrintedProductName) {
  const Catalog& c = Catalog::builtin();
  const std::pair<const char*, const char*> cases[] = {
      {"NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb"},  {"Tesla V100-SXM2-16GB", "v100-sxm2-16gb"},
      {"Tesla T4", "t4"},                           {"NVIDIA GeForce RTX 2080 Ti", "rtx2080ti"},
      {"NVIDIA TITAN RTX", "titan-rtx"},            {"AMD Instinct MI300X", "mi300x"},
      {"NVIDIA H100 80GB HBM3", "h100-sxm5-80gb"},  {"NVIDIA A100 80GB PCIe", "a100-pcie-80gb"},
      {"MI250X_GCD", "mi250x-gcd"},                 {"a100-sxm4-40gb", "a100-sxm4-40gb"},
      // Names of later entries as nvidia-smi prints them; only "NVIDIA H800" needs an alias.
      {"NVIDIA A800-SXM4-80GB", "a800-sxm4-80gb"},  {"NVIDIA H800", "h800-sxm5-80gb"},
      {"NVIDIA A30", "a30"},                        {"Tesla P100-PCIE-16GB", "p100-pcie-16gb"},
      {"NVIDIA TITAN V", "titan-v"},                {"NVIDIA RTX A5000", "rtx-a5000"},
      // Names that start alike stay distinct parts.
      {"NVIDIA GeForce RTX 2080", "rtx2080"},       {"NVIDIA L4", "l4"},
      {"NVIDIA L40", "l40"},                        {"NVIDIA L40S", "l40s"},
      {"NVIDIA A10", "a10"},                        {"NVIDIA A10G", "a10g"},
      {"NVIDIA H20", "h20"},                        {"NVIDIA H100 NVL", "h100-nvl"},
      {"Quadro RTX 6000", "quadro-rtx-6000"},       {"NVIDIA RTX 6000 Ada Generation", "rtx-6000-ada"},
      // Parts of older heterogeneous-training papers (HetPipe, HetSeq) and workstations.
      {"NVIDIA GeForce GTX 1080 Ti", "gtx1080ti"},  {"NVIDIA TITAN Xp", "titan-xp"},
      {"NVIDIA GeForce RTX 2060", "rtx2060"},       {"Quadro P4000", "quadro-p4000"},
      {"Quadro RTX 8000", "quadro-rtx-8000"},       {"NVIDIA RTX A4000", "rtx-a4000"},
      {"AMD Instinct MI250", "mi250-gcd"}};  // rocm-smi names each GCD so, as for the MI250X
  for (const auto& [spelling, name] : cases) {
    const GpuType* t = c.by_name_or_null(spelling);
    ASSERT_NE(t, nullptr) << spelling;
    EXPECT_EQ(t->name, name) << spelling;
  }
  EXPECT_EQ(device_name_key("NVIDIA GeForce RTX 3090"), "rtx3090");
  // A family name is not a part: the message lists the parts it could be.
  EXPECT_EQ(c.by_name_or_null("A100"), nullptr);
  EXPECT_THAT(c.unknown_gpu_message("A100"),
              HasSubstr("unknown GPU 'A100' (it could be any of: a100-pcie-40gb, a100-pcie-80gb, a100-sxm4-40gb, "
                        "a100-sxm4-80gb; write the one you mean)"));
  // A spelling that starts one part's key only: that part is the guess, whatever the brand words.
  EXPECT_THAT(c.unknown_gpu_message("NVIDIA H100-SXM"),
              HasSubstr("unknown GPU 'NVIDIA H100-SXM' (did you mean 'h100-sxm5-80gb'? known: a10, "));
  // A name that leaves out a word: every part whose words it starts, not the nearest spelling
  // (edit distance alone said 'a100-pcie-80gb' for "a100-80gb", as likely the SXM4 part).
  EXPECT_THAT(c.unknown_gpu_message("a100-80gb"),
              HasSubstr("(it could be any of: a100-pcie-80gb, a100-sxm4-80gb; write the one you mean)"));
  EXPECT_THAT(c.unknown_gpu_message("V100 32GB"),
              HasSubstr("(it could be any of: v100-pcie-32gb, v100-sxm2-32gb; write the one you mean)"));
  EXPECT_THAT(c.unknown_gpu_message("H100 SXM"), HasSubstr("(did you mean 'h100-sxm5-80gb'? known: "));
  EXPECT_EQ(device_name_words("NVIDIA GeForce RTX-3090"), (std::vector<std::string>{"rtx", "3090"}));
  EXPECT_FALSE(words_start_words({}, {"a100"}));
  EXPECT_EQ(c.by_name_or_null("NVIDIA"), nullptr);  // only brand words: no key, no match
  EXPECT_EQ(c.by_name_or_null("h10"), nullptr);  // a part the catalog lacks, the start of others (h100-*)
}

// rocm-smi names each GCD of an MI250X "AMD Instinct MI250X": that spelling must not mean the
// two-GCD module (twice the peak and memory), which only its exact name `mi250x` names.
TEST(Catalog, TheNameRocmPrintsForAnMi250xGcdIsNotTheModule) {
  const Catalog& c = Catalog::builtin();
  for (const char* spelling : {"AMD Instinct MI250X", "MI250X", "mi250X"}) {
    EXPECT_EQ(c.by_name_or_null(spelling), nullptr) << spelling;
    EXPECT_THAT(c.unknown_gpu_message(spelling), HasSubstr("it could be any of: mi250x, mi250x-gcd;")) << spelling;
  }
  ASSERT_NE(c.by_name_or_null("mi250x"), nullptr);
  EXPECT_EQ(c.by_name_or_null("mi250x")->name, "mi250x");
  EXPECT_EQ(c.by_name("AMD Instinct MI250X GCD").name, "mi250x-gcd");
}

}  // namespace
}  // namespace hetsim::models
