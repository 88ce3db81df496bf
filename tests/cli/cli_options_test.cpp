// SPDX-License-Identifier: Apache-2.0
// The option checks shared by the verbs (cli/cli_common.hpp): numbers that must be finite and
// positive, output files and folders checked before a verb starts its work.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog.hpp"
#include "cli_common.hpp"
#include "input_loader.hpp"
#include "plan.hpp"
#include "planner.hpp"
#include "predictor.hpp"
#include "units.hpp"

namespace hetsim::cli {
namespace {

using ::testing::HasSubstr;

/// The error CLI11 reports for `--opt value` (empty when accepted).
template <class T>
std::string parse_error(const CLI::Validator& check, const std::string& value) {
  CLI::App app;
  T v{};
  app.add_option("--opt", v)->check(check);
  try {
    app.parse(std::vector<std::string>{value, "--opt"});  // CLI11 reads the vector back to front
    return {};
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
}

// CLI11's PositiveNumber let "nan" through: `plan --budget-per-hour nan` printed NaN costs
// and `run --lr nan` trained with a NaN learning rate (found by scripts/fuzz_inputs.py).
TEST(OptionChecks, NumbersMustBeFinite) {
  for (const std::string bad : {"nan", "NaN", "inf", "-inf", "0", "-5", "abc", "", " 5", "5x"})
    EXPECT_THAT(parse_error<double>(positive_number(), bad), HasSubstr("expected a positive number, got '" + bad + "'"));
  // Out of a double's range, which "expected a positive number, got '1e-308'" contradicted (s56 hunt).
  EXPECT_THAT(parse_error<double>(positive_number(), "1e400"),
              HasSubstr("expected a positive number of at most 1.8e308 (the largest a double holds), got '1e400'"));
  EXPECT_THAT(parse_error<double>(positive_number(), "1e-308"),
              HasSubstr("expected a positive number of at least 2.2e-308 (the smallest a double holds), got '1e-308'"));
  EXPECT_THAT(parse_error<double>(non_negative_number(), "1e-400"),
              HasSubstr("expected a non-negative number: 0, or at least 2.2e-308 (the smallest a double holds)"));
  // An option with its own bound names it however far beyond a value is (`check --tolerance`:
  // 1e308 was "up to 1000000", 1e999 "of at most 1.8e308"; s59 hunt).
  EXPECT_THAT(parse_error<double>(number_check(true, false, 1e6), "1e999"),
              HasSubstr("expected a positive number up to 1000000, got '1e999'"));
  EXPECT_THAT(parse_error<double>(number_check(true, false, 1e6), "1e308"),
              HasSubstr("expected a positive number up to 1000000, got '1e308'"));
  EXPECT_EQ(parse_error<double>(positive_number(), "1e-300"), "");
  EXPECT_EQ(parse_error<double>(positive_number(), "0.25"), "");
  EXPECT_EQ(parse_error<double>(positive_number(), "1e-3"), "");
  EXPECT_EQ(parse_error<double>(non_negative_number(), "0"), "");
  EXPECT_THAT(parse_error<double>(non_negative_number(), "-0.5"), HasSubstr("expected a non-negative number"));
}

/// The value an option of `transform` reads from `text` (NaN when it refuses it).
double transformed_value(const CLI::Validator& transform, const std::string& text) {
  CLI::App app;
  double v = 0;
  app.add_option("--opt", v)->transform(transform);
  try {
    app.parse(std::vector<std::string>{text, "--opt"});
    return v;
  } catch (const CLI::ParseError&) {
    return std::nan("");
  }
}

// Durations and prices on the command line take units as the inputs do: `plan --time-limit 1s`
// was "expected a non-negative number, got '1s'" (s67).
TEST(OptionChecks, DurationsAndPricesTakeTheirUnits) {
  EXPECT_DOUBLE_EQ(transformed_value(duration_check(), "90"), 90);
  EXPECT_DOUBLE_EQ(transformed_value(duration_check(), "1s"), 1);
  EXPECT_DOUBLE_EQ(transformed_value(duration_check(), "2min"), 120);
  EXPECT_DOUBLE_EQ(transformed_value(duration_check(), "500ms"), 0.5);
  EXPECT_DOUBLE_EQ(transformed_value(duration_check(), "0"), 0);
  EXPECT_DOUBLE_EQ(transformed_value(price_per_hour_check(), "120"), 120);
  EXPECT_DOUBLE_EQ(transformed_value(price_per_hour_check(), "$120/h"), 120);
  EXPECT_DOUBLE_EQ(transformed_value(price_per_hour_check(), "$2880/day"), 120);
  // A bare number keeps the number's words; a unit the parser does not know gets the parser's.
  EXPECT_THAT(parse_error<double>(duration_check(), "-5"), HasSubstr("expected a non-negative number, got '-5'"));
  EXPECT_THAT(parse_error<double>(price_per_hour_check(), "0"), HasSubstr("expected a positive number, got '0'"));
  EXPECT_THAT(parse_error<double>(duration_check(), "1parsec"), HasSubstr("unknown unit 'parsec'"));
  EXPECT_THAT(parse_error<double>(duration_check(), "nan"), HasSubstr("expected a non-negative number, got 'nan'"));
  EXPECT_THAT(parse_error<double>(duration_check(), "1e400s"), HasSubstr("out of range"));
  for (const std::string bad : {"abc", "-1s", "s"})
    EXPECT_THAT(parse_error<double>(duration_check(), bad), HasSubstr("expected a non-negative duration")) << bad;
  for (const std::string bad : {"-$5/h", "$0/h", "abc/h"})
    EXPECT_THAT(parse_error<double>(price_per_hour_check(), bad), HasSubstr("expected a positive price")) << bad;
}

// CLI11's range message printed 1.8e308 with all its digits; "-1" was read as 2^64-1 for the
// unsigned --seed.
// Prices in cents, except where cents say nothing ($0.001/h printed as $0.00/h) or would fill the
// line (a budget of $1e300/h came out as 62 digits cut off before the "/h"; s57 bad-input hunt).
TEST(Formats, PricesPerHourStayReadable) {
  EXPECT_EQ(format_price_per_hour(40.97), "$40.97/h");
  EXPECT_EQ(format_price_per_hour(0), "$0.00/h");
  EXPECT_EQ(format_price_per_hour(0.001), "$0.001/h");
  EXPECT_EQ(format_price_per_hour(1e300), "$1e+300/h");
  EXPECT_EQ(format_price_per_hour(123456789.0), "$123456789.00/h");
}

TEST(OptionChecks, IntegersSayWhatWasExpected) {
  EXPECT_EQ(parse_error<int>(positive_integer(), "0"), "--opt: expected a positive integer, got '0'");
  for (const std::string bad : {"-1", "abc", "1.5", "nan", "2e3", "0x10"})
    EXPECT_THAT(parse_error<int>(positive_integer(), bad), HasSubstr("expected a positive integer")) << bad;
  EXPECT_EQ(parse_error<int>(positive_integer(), "8"), "");
  EXPECT_THAT(parse_error<int>(non_negative_integer(), "-1"), HasSubstr("expected a non-negative integer"));
  EXPECT_EQ(parse_error<int>(non_negative_integer(), "0"), "");
  const CLI::Validator seed = number_check(false, true, 18446744073709551615.0);  // run --seed
  EXPECT_THAT(parse_error<std::uint64_t>(seed, "-1"), HasSubstr("expected a non-negative integer"));
  EXPECT_EQ(parse_error<std::uint64_t>(seed, "0"), "");
  // Beyond the option's int: once CLI11's "Could not convert: --opt = 99999999999".
  EXPECT_EQ(parse_error<int>(positive_integer(), "99999999999"),
            "--opt: expected a positive integer up to 2147483647, got '99999999999'");
}

// `--profile ""` (a script's unset variable) ran without the profile, exit 0, and `predict
// --cluster ""` fell back to the plan header's cluster (s52 bad-input hunt).
TEST(OptionChecks, EmptyValuesAreRefusedForEveryVerbsOptions) {
  CLI::App app;
  CLI::App* verb = app.add_subcommand("verb");
  std::string profile;
  std::vector<std::string> files;
  bool flag = false;
  verb->add_option("--profile", profile);
  verb->add_option("files", files);
  verb->add_flag("--flag", flag);
  reject_empty_values(app);
  const auto error = [&](std::vector<std::string> args) -> std::string {
    std::reverse(args.begin(), args.end());  // CLI11 reads the vector back to front
    try {
      app.parse(args);
      return {};
    } catch (const CLI::ParseError& e) {
      return e.what();
    }
  };
  EXPECT_THAT(error({"verb", "--profile", ""}), HasSubstr("--profile: empty value (expected a value"));
  EXPECT_THAT(error({"verb", "a.yaml", ""}), HasSubstr("files: empty value"));
  EXPECT_EQ(error({"verb", "--profile", "p.yaml", "--flag", "a.yaml"}), "");
}

class OutputChecks : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(testing::TempDir()) / ("cli-options-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "a-file") << "x";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string at(const std::string& rel) const { return (dir_ / rel).string(); }
  std::filesystem::path dir_;
};

// `plan --emit-plan no/such/dir/p.yaml` searched first and failed at the end with exit 1,
// naming its temporary file; `validate --emit-dir a-file/sub` failed after predicting.
TEST_F(OutputChecks, OutputFileNeedsAnExistingFolder) {
  EXPECT_EQ(parse_error<std::string>(output_file_check(), at("p.yaml")), "");
  EXPECT_EQ(parse_error<std::string>(output_file_check(), "relative.yaml"), "");
  EXPECT_THAT(parse_error<std::string>(output_file_check(), at("no/such/p.yaml")),
              HasSubstr("folder '" + at("no/such") + "' does not exist"));
  EXPECT_THAT(parse_error<std::string>(output_file_check(), dir_.string()), HasSubstr("is a folder (expected a file name)"));
  EXPECT_THAT(parse_error<std::string>(output_file_check(), at("a-file/p.yaml")), HasSubstr("a-file' is a file, not a folder"));  // said "folder does not exist" (s25)
}

// `plan --emit-plan /dev/full` replaced the device with a plain file (temporary + rename), and
// `--emit-plan -` wrote a file named '-'.
TEST_F(OutputChecks, OutputFileIsNoDeviceFifoOrDash) {
  const std::string fifo = at("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THAT(parse_error<std::string>(output_file_check(), fifo), HasSubstr("is not a regular file (expected a file name)"));
  EXPECT_THAT(parse_error<std::string>(output_file_check(), "/dev/null"), HasSubstr("'/dev/null' is not a regular file"));
  EXPECT_THAT(parse_error<std::string>(output_file_check(), "-"), HasSubstr("'-' is not a file"));
  EXPECT_EQ(parse_error<std::string>(output_file_check(), at("a-file")), "");  // an existing file is replaced
  // A name the folder takes but its temporary name (NAME.tmp.<pid>) does not: the job ran, then
  // failed to write ("File name too long", exit 1; adversarial pass, 2026-12-05).
  EXPECT_THAT(parse_error<std::string>(output_file_check(), at(std::string(247, 'y'))),
              HasSubstr("is 247 bytes (expected at most 239, which leaves room for the temporary file"));
  EXPECT_EQ(parse_error<std::string>(output_file_check(), at(std::string(239, 'y'))), "");
}

// `plan --emit-plan /dev/stdout > f`: standard output was a plain file, so the check above let it
// through, and renaming the plan over it replaced the table the verb printed with the plan alone.
TEST_F(OutputChecks, OutputFileIsNotTheCommandsOwnStandardOutput) {
  std::fflush(stdout);
  const int saved = ::dup(STDOUT_FILENO);
  ASSERT_GE(saved, 0);
  const std::string out_file = at("stdout.txt");
  const int fd = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  ::dup2(fd, STDOUT_FILENO);
  const std::string by_alias = parse_error<std::string>(output_file_check(), "/dev/stdout");
  const std::string by_name = output_files_problem({{"--out", out_file}}, {});
  const std::string another = parse_error<std::string>(output_file_check(), at("a-file"));
  std::fflush(stdout);
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  ::close(fd);
  EXPECT_THAT(by_alias, HasSubstr("'/dev/stdout' is this command's standard output (expected a file of its own"));
  EXPECT_THAT(by_name, HasSubstr("--out: '" + out_file + "' is this command's standard output"));
  EXPECT_EQ(another, "");
}

// `plan --emit-plan C.yaml --cluster C.yaml` replaced the cluster with the plan; so did
// simulate --trace, run --out, fit --out, calibrate --out and sweep --out with an input's path.
TEST_F(OutputChecks, OutputMustNotOverwriteAnInput) {
  EXPECT_EQ(output_overwrites_input({{"--out", at("new.yaml")}}, {at("a-file")}), "");
  EXPECT_EQ(output_overwrites_input({{"--out", ""}}, {at("a-file"), ""}), "");
  EXPECT_EQ(output_overwrites_input({{"--out", at("a-file")}}, {"", at("a-file")}),
            "--out: '" + at("a-file") + "' is the input file '" + at("a-file") +
                "' (expected another file: it would be overwritten)");
  // The same file spelled otherwise: through '..', a symlink, a hard link.
  const std::string dotted = (dir_ / "x" / ".." / "a-file").string();
  std::filesystem::create_directories(dir_ / "x");
  EXPECT_THAT(output_overwrites_input({{"--emit-plan", dotted}}, {at("a-file")}), HasSubstr("is the input file"));
  std::filesystem::create_symlink(at("a-file"), at("link"));
  EXPECT_THAT(output_overwrites_input({{"--trace", at("link")}}, {at("a-file")}), HasSubstr("is the input file"));
  std::filesystem::create_hard_link(at("a-file"), at("hard"));
  EXPECT_THAT(output_overwrites_input({{"--out", at("a-file")}}, {at("hard")}), HasSubstr("is the input file"));
  // Two outputs on one file (a profile and its checkpoint), also before either exists.
  EXPECT_EQ(output_overwrites_input({{"--out", at("p.yaml")}, {"--checkpoint", at("x/../p.yaml")}}, {}),
            "--checkpoint: '" + at("x/../p.yaml") + "' is the --out file (expected another file)");
  // Names too long to resolve are not "the same file" (both resolved to an empty path).
  const std::string long_name = at(std::string(300, 'x'));
  EXPECT_EQ(output_overwrites_input({{"--out", long_name}, {"--checkpoint", long_name + ".checkpoint"}}, {}), "");
}

// `plan --emit-plan CATALOG/cpu.yaml` replaced a GPU catalog file with a plan, `sweep --out
// CATALOG/nvidia.yaml` with a CSV; every later command failed on the catalog.
TEST_F(OutputChecks, NoYamlOutputGoesIntoTheGpuCatalogFolder) {
  ASSERT_EQ(::setenv("HETSIM_CATALOG_DIR", dir_.string().c_str(), 1), 0);
  EXPECT_THAT(output_in_catalog({{"--emit-plan", at("cpu.yaml")}}), HasSubstr("--emit-plan: '" + at("cpu.yaml") +
                                                                              "' is in the GPU catalog folder"));
  EXPECT_THAT(output_in_catalog({{"--out", "x.csv"}, {"--checkpoint", at("x/../ck.yaml")}}),
              HasSubstr("--checkpoint: "));
  EXPECT_EQ(output_in_catalog({{"--out", at("results.csv")}}), "");  // not read as a catalog file
  EXPECT_EQ(output_in_catalog({{"--emit-plan", "plan.yaml"}}), "");   // elsewhere
  // The catalog reads *.yml and any case of either too (adversarial pass, 2026-12-05).
  EXPECT_THAT(output_in_catalog({{"--emit-plan", at("best.YAML")}}), HasSubstr("is in the GPU catalog folder"));
  EXPECT_THAT(output_in_catalog({{"--out", at("new.yml")}}), HasSubstr("is in the GPU catalog folder"));
  // A link of any name elsewhere to a catalog file: the atomic write replaced nvidia.yaml through
  // `sweep --out x.csv` (s63 CLI hunt).
  std::ofstream(at("nvidia.yaml")) << "kind: gpu-catalog\n";
  std::filesystem::create_directory(at("elsewhere"));
  std::filesystem::create_symlink(at("nvidia.yaml"), at("elsewhere/x.csv"));
  EXPECT_THAT(output_in_catalog({{"--out", at("elsewhere/x.csv")}}),
              HasSubstr("--out: '" + at("elsewhere/x.csv") + "' (a link to '" + at("nvidia.yaml") +
                        "') is in the GPU catalog folder"));
  ::unsetenv("HETSIM_CATALOG_DIR");
}

TEST_F(OutputChecks, OutputFolderMustNotBeAFile) {
  EXPECT_EQ(parse_error<std::string>(output_dir_check(), at("new/nested")), "");
  EXPECT_EQ(parse_error<std::string>(output_dir_check(), dir_.string()), "");
  EXPECT_THAT(parse_error<std::string>(output_dir_check(), at("a-file")), HasSubstr("is a file (expected a folder)"));
  EXPECT_THAT(parse_error<std::string>(output_dir_check(), at("a-file/sub")), HasSubstr("is a file (expected a folder)"));
}

/// What note_if_ranks_share_cores() prints for a dp-way data-parallel plan on the cluster file.
std::string share_cores_note(const std::string& cluster_file, int dp) {
  const std::string root = HETSIM_SOURCE_DIR;
  const models::Cluster cluster = models::load_cluster(root + "/" + cluster_file, models::Catalog::builtin());
  const models::Workload workload = models::load_workload(root + "/workloads/tiny-gpt.yaml");
  const auto plan = models::make_uniform_plan(cluster, workload, 1, 1, dp, models::UniformPlanOptions{});
  EXPECT_TRUE(std::holds_alternative<models::Plan>(plan));
  ::testing::internal::CaptureStderr();
  note_if_ranks_share_cores("run", cluster, std::get<models::Plan>(plan));
  return ::testing::internal::GetCapturedStderr();
}

// The note is about CPU devices, whose ranks compute on the cores. `run` of an 8-GPU plan on a
// machine without a GPU printed "8 ranks on 2 CPUs: ranks share cores" before "no GPU device".
TEST(Notes, RanksShareCoresOnlyForCpuDevices) {
  EXPECT_EQ(share_cores_note("clusters/dgx-a100.yaml", 8), "");
  const int cpus = models::search_threads(models::PlannerOptions{});
  if (cpus >= 4) GTEST_SKIP() << "needs fewer than 4 CPUs to oversubscribe local-cpu's 4 devices (has " << cpus << ")";
  EXPECT_THAT(share_cores_note("clusters/local-cpu.yaml", 4), HasSubstr("note: 4 ranks on " + std::to_string(cpus) + " CPUs"));
}

// In-process ranks are threads sharing the host's memory, which a device's catalog `memory` (a
// share the user picked) does not bound: 512 ranks of a small model on 2 CPUs took 19.9 GB of a
// 23 GB machine and ran for minutes before they could be stopped. The check sums the model's
// per-device peak over the CPU ranks against what the host has available.
TEST(Refusals, CpuRanksThatNeedMoreThanTheHostHasAreNotStarted) {
  const std::string root = HETSIM_SOURCE_DIR;
  const models::Cluster cpus = models::load_cluster(root + "/clusters/local-cpu.yaml", models::Catalog::builtin());
  const models::Workload workload = models::load_workload(root + "/workloads/tiny-gpt.yaml");
  const auto made = models::make_uniform_plan(cpus, workload, 1, 1, 4, models::UniformPlanOptions{});
  ASSERT_TRUE(std::holds_alternative<models::Plan>(made));
  const models::Plan& plan = std::get<models::Plan>(made);
  const models::Report report = models::predict(cpus, workload, plan);
  ASSERT_TRUE(report.feasible);
  double per_rank_bytes = 0;
  for (const auto& sr : report.stages) per_rank_bytes = std::max(per_rank_bytes, sr.memory_bytes);
  ASSERT_GT(per_rank_bytes, 0);
  per_rank_bytes += kRankHostOverheadBytes;  // the engine's own, besides the device memory
  EXPECT_EQ(host_memory_shortfall(cpus, plan, report, 4 * per_rank_bytes + 1), std::nullopt);
  const auto why = host_memory_shortfall(cpus, plan, report, 3 * per_rank_bytes);
  ASSERT_TRUE(why.has_value());
  EXPECT_THAT(*why, HasSubstr("the plan's 4 ranks on CPU devices need " + models::format_size(4 * per_rank_bytes)));
  EXPECT_THAT(*why, HasSubstr("nothing was started"));

  // GPU ranks keep their memory on the device: an 8-GPU plan is never refused for the host's.
  const models::Cluster gpus = models::load_cluster(root + "/clusters/dgx-a100.yaml", models::Catalog::builtin());
  const auto gpu_plan = models::make_uniform_plan(gpus, workload, 1, 1, 8, models::UniformPlanOptions{});
  ASSERT_TRUE(std::holds_alternative<models::Plan>(gpu_plan));
  const models::Report gpu_report = models::predict(gpus, workload, std::get<models::Plan>(gpu_plan));
  EXPECT_EQ(host_memory_shortfall(gpus, std::get<models::Plan>(gpu_plan), gpu_report, 1.0), std::nullopt);
}

TEST(Refusals, AvailableHostMemoryIsReadWhereTheHostSaysIt) {
  if (!std::filesystem::exists("/proc/meminfo")) GTEST_SKIP() << "no /proc/meminfo on this host";
  const auto available = available_host_memory_bytes();
  ASSERT_TRUE(available.has_value());
  EXPECT_GT(*available, 0);
}


// run and check say up front when the model puts the steps asked past ten minutes (they print
// nothing until the end); a short run, or a plan that does not fit, gets no note.
TEST(LongRunNote, SaysThePredictedWaitPastTenMinutes) {
  models::Report r;
  r.feasible = true;
  r.iteration_time_s = 0.5;
  const auto note = [&](int steps) {
    std::ostringstream captured;
    std::streambuf* old = std::cerr.rdbuf(captured.rdbuf());
    note_if_long_run("run", r, steps);
    std::cerr.rdbuf(old);
    return captured.str();
  };
  EXPECT_EQ(note(1200), "");  // 600 s: not past ten minutes
  EXPECT_THAT(note(10000), ::testing::HasSubstr("hetsim run: note: the model predicts 500 ms a step, about "));
  EXPECT_THAT(note(10000), ::testing::HasSubstr(" for the 10000 steps asked (--steps)"));
  r.feasible = false;
  EXPECT_EQ(note(10000), "");
}

}  // namespace
}  // namespace hetsim::cli

namespace hetsim::cli {
namespace {

// A plan with a bad GPU, its header naming clusters/c.yaml, checked against a byte-identical copy
// of that cluster: the errors said the plan "was written for 'clusters/c.yaml', not for --cluster"
// the copy, which is the same cluster (s63 message hunt). A cluster that differs still gets it.
TEST_F(OutputChecks, APlanCheckedAgainstACopyOfItsHeadersClusterIsNotToldItIsAnother) {
  const std::string root = HETSIM_SOURCE_DIR;
  std::filesystem::create_directories(at("clusters"));
  std::filesystem::copy_file(root + "/clusters/dgx-a100.yaml", at("clusters/c.yaml"));
  std::filesystem::copy_file(root + "/clusters/dgx-a100.yaml", at("copy.yaml"));
  std::filesystem::copy_file(root + "/clusters/dgx-a100.yaml", at("other.yaml"));
  std::ofstream(at("other.yaml"), std::ios::app) << "# edited\n";
  std::ofstream(at("p.yaml")) << "# cluster: clusters/c.yaml\nkind: plan\nmicro_batch: 1\nreplicas:\n"
                              << "  - micro_batches: 1024\n    stages:\n      - {layers: 24, gpus: \"gpu[99]\"}\n";
  const auto errors_with = [&](const std::string& cluster) {
    try {
      load_inputs(cluster, root + "/workloads/gpt3-1.3b.yaml", at("p.yaml"));
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string copy = errors_with(at("copy.yaml"));
  EXPECT_THAT(copy, HasSubstr("GPU index 99 out of range"));
  EXPECT_THAT(copy, ::testing::Not(HasSubstr("the plan was written for")));
  EXPECT_THAT(errors_with(at("other.yaml")), HasSubstr("the plan was written for"));
}

}  // namespace
}  // namespace hetsim::cli
