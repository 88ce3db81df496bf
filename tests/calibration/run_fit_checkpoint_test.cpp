// SPDX-License-Identifier: Apache-2.0
// The checkpoint of `hetsim fit` (calibration/run_fit_checkpoint.hpp): steps round-trip exactly,
// the last complete step of the fit's own key is the one resumed, and another verb's checkpoint
// is refused.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <unistd.h>

#include "run_fit_checkpoint.hpp"

namespace hetsim::calibration {
namespace {

namespace fs = std::filesystem;

struct TempFile {
  std::string path = (fs::temp_directory_path() / ("hetsim-fit-ckpt-" + std::to_string(::getpid()) + ".jsonl")).string();
  ~TempFile() { std::remove(path.c_str()); }
};

RunFitProgress a_step(int pass, int searched, double value) {
  RunFitProgress s;
  s.variables = {"a100-sxm4-80gb/gemm", "a100-sxm4-80gb/host"};
  s.values = {value, 4.9e-05};
  s.pass = pass;
  s.searched = searched;
  s.objective = 0.1 / 3;  // no short decimal: the exact double must come back
  s.pass_start_objective = 0.2;
  return s;
}

TEST(RunFitCheckpoint, TheLastCompleteStepOfTheFitsOwnKeyIsResumed) {
  TempFile f;
  EXPECT_FALSE(last_run_fit_step(f.path, "k1"));  // no file: nothing to resume
  append_run_fit_step(f.path, "k1", a_step(0, 1, 0.7777777777777777));
  append_run_fit_step(f.path, "k2", a_step(0, 2, 0.5));  // another fit's step in the same file
  append_run_fit_step(f.path, "k1", a_step(1, 0, 0.123456789012345678));
  const auto last = last_run_fit_step(f.path, "k1");
  ASSERT_TRUE(last);
  EXPECT_EQ(last->pass, 1);
  EXPECT_EQ(last->searched, 0);
  EXPECT_EQ(last->values[0], 0.123456789012345678);
  EXPECT_EQ(last->objective, 0.1 / 3);
  EXPECT_EQ(last->pass_start_objective, 0.2);
  EXPECT_EQ(last->variables, a_step(0, 0, 0).variables);
  EXPECT_EQ(last_run_fit_step(f.path, "k2")->searched, 2);
  EXPECT_FALSE(last_run_fit_step(f.path, "k3"));

  // A kill in the middle of a record: the cut line is skipped, the one before it is resumed.
  const std::string third = "{\"fit_key\":\"k1\",\"pass\":2,\"searched\":1,\"variables\":[\"a";
  std::ofstream(f.path, std::ios::app) << third;
  EXPECT_EQ(last_run_fit_step(f.path, "k1")->pass, 1);
  append_run_fit_step(f.path, "k1", a_step(2, 2, 0.5));  // appended after the cut line, not onto it
  EXPECT_EQ(last_run_fit_step(f.path, "k1")->pass, 2);
}

TEST(RunFitCheckpoint, AnotherVerbsCheckpointIsRefused) {
  TempFile f;
  std::ofstream(f.path) << "{\"key\": \"sweep row\", \"point\": 0, \"workload\": \"w\"}\n";
  try {
    last_run_fit_step(f.path, "k1");
    FAIL() << "a sweep checkpoint was taken for a fit's";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("none is a step of hetsim fit"), std::string::npos) << e.what();
  }
}

TEST(RunFitCheckpoint, ADamagedRecordIsNotResumed) {
  TempFile f;
  append_run_fit_step(f.path, "k1", a_step(0, 1, 0.5));
  std::ofstream(f.path, std::ios::app) << "{\"fit_key\": \"k1\", \"pass\": \"two\", \"searched\": 1}\n";
  const auto last = last_run_fit_step(f.path, "k1");
  ASSERT_TRUE(last);
  EXPECT_EQ(last->searched, 1);  // the damaged record is passed over
}

}  // namespace
}  // namespace hetsim::calibration
