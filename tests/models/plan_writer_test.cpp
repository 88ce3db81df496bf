// SPDX-License-Identifier: Apache-2.0
// Plan YAML writer: what it writes loads back as the same Plan, and files appear atomically.
#include <gtest/gtest.h>

#include <csignal>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atomic_file.hpp"
#include "catalog.hpp"
#include "input_loader.hpp"
#include "plan_writer.hpp"
#include "planner.hpp"
#include "yaml_reader.hpp"

namespace hetsim::models {
namespace {

std::string source(const std::string& rel) { return std::string(HETSIM_SOURCE_DIR) + "/" + rel; }

void expect_same(const Plan& a, const Plan& b) {
  EXPECT_EQ(a.micro_batch, b.micro_batch);
  EXPECT_EQ(a.schedule, b.schedule);
  EXPECT_EQ(a.interleave, b.interleave);
  EXPECT_EQ(a.recompute, b.recompute);
  EXPECT_EQ(a.sequence_parallel, b.sequence_parallel);
  EXPECT_EQ(a.zero, b.zero);
  EXPECT_EQ(a.grad_sync, b.grad_sync);
  EXPECT_EQ(a.overlap_grad_sync, b.overlap_grad_sync);
  EXPECT_EQ(a.tp_comm_overlap, b.tp_comm_overlap);
  EXPECT_EQ(a.overlap_p2p_comm, b.overlap_p2p_comm);
  ASSERT_EQ(a.replicas.size(), b.replicas.size());
  for (size_t r = 0; r < a.replicas.size(); ++r) {
    EXPECT_EQ(a.replicas[r].micro_batches, b.replicas[r].micro_batches) << r;
    ASSERT_EQ(a.replicas[r].stages.size(), b.replicas[r].stages.size()) << r;
    for (size_t s = 0; s < a.replicas[r].stages.size(); ++s) {
      EXPECT_EQ(a.replicas[r].stages[s].layers, b.replicas[r].stages[s].layers) << r << "/" << s;
      EXPECT_EQ(a.replicas[r].stages[s].gpus, b.replicas[r].stages[s].gpus) << r << "/" << s;
    }
  }
}

TEST(PlanWriter, PlannerPlansRoundTrip) {
  const Cluster c = load_cluster(source("clusters/h100-mi300x.yaml"), Catalog::builtin());
  const Workload w = load_workload(source("workloads/llama2-70b.yaml"));
  PlannerOptions o;
  o.top = 3;
  const PlannerResult r = plan_training(c, w, o);
  ASSERT_FALSE(r.top.empty()) << r.reason;
  for (const RankedPlan& p : r.top) {
    const std::string text = plan_to_yaml(p.plan, c, {"clusters/h100-mi300x.yaml", "workloads/llama2-70b.yaml", p.shape});
    expect_same(parse_plan(text, c, w), p.plan);
    if (!p.plan.sequence_parallel) continue;
    Plan overlapped = p.plan;  // a key the planner does not set still round-trips
    overlapped.tp_comm_overlap = true;
    expect_same(parse_plan(plan_to_yaml(overlapped, c, {"c", "w", "x"}), c, w), overlapped);
    if (p.plan.schedule != Schedule::kInterleaved) continue;
    overlapped.overlap_p2p_comm = true;
    expect_same(parse_plan(plan_to_yaml(overlapped, c, {"c", "w", "x"}), c, w), overlapped);
  }
}

TEST(PlanWriter, HeaderPathsResolveFromThePlansFolder) {
  // read_plan_header looks beside the plan and above it: a header names its inputs from there.
  const auto root = std::filesystem::temp_directory_path() /
                    ("hetsim-header-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  const auto repo = root / "repo", far = root / "far" / "away";
  std::filesystem::create_directories(repo / "clusters");
  std::filesystem::create_directories(repo / "plans");
  std::filesystem::create_directories(far);
  const std::string cluster = (repo / "clusters" / "c.yaml").string();
  EXPECT_EQ(header_path(cluster, (repo / "plans" / "p.yaml").string()), "../clusters/c.yaml");
  EXPECT_EQ(header_path(cluster, (repo / "clusters" / "p.yaml").string()), "c.yaml");
  EXPECT_EQ(header_path(cluster, (far / "p.yaml").string()), cluster);  // absolute: 3 folders up
  std::filesystem::remove_all(root);
}

// A path with a blank came back cut at it ("My Projects/c.yaml" as "My"), one with a newline
// ended the header comment (the plan no longer loaded) and ": workload:" in a folder's name read
// as a second key (s56 bad-input hunt): such paths are written quoted, and read back whole.
TEST(PlanWriter, HeaderPathsOfAnyCharactersReadBackWhole) {
  const auto root = std::filesystem::temp_directory_path() /
                    ("hetsim-header-chars-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  const Cluster c = load_cluster(source("clusters/local-cpu.yaml"), Catalog::builtin());
  Plan p;
  p.micro_batch = 1;
  p.replicas = {Replica{8, {Stage{2, {0}}}}};
  EXPECT_EQ(plan_header_path("clusters/c.yaml"), "clusters/c.yaml");  // the common case stays bare
  for (const std::string folder : {"My Projects", "line\nbreak", "cl: workload: y", "tab\there", "quote\"d", "hash#x",
                                   "back\\slash"}) {
    std::filesystem::create_directories(root / folder);
    const std::string cluster = (root / folder / "c.yaml").string(), workload = (root / folder / "w.yaml").string();
    std::ofstream(cluster) << "x";
    std::ofstream(workload) << "x";
    const std::string plan_path = (root / "p.yaml").string();
    std::ofstream(plan_path) << plan_to_yaml(p, c, {cluster, workload, "a comment"});
    const PlanHeader h = read_plan_header(plan_path);
    EXPECT_EQ(h.cluster, cluster) << folder;
    EXPECT_EQ(h.workload, workload) << folder;
    EXPECT_TRUE(h.conflicts.empty()) << folder;
    EXPECT_NO_THROW(load_plan_spec(plan_path)) << folder;  // the header stays one comment line each
  }
  std::filesystem::remove_all(root);
}

// A path that is not UTF-8 (a name in Latin-1) went into the header as it was, and the plan
// hetsim wrote was refused at line 1 ("invalid UTF-8 byte 0xE9"; s63 CLI hunt): the header line
// is left out, and the plan loads.
TEST(PlanWriter, PathsThatAreNotUtf8StayOutOfTheHeader) {
  const Cluster c = load_cluster(source("clusters/local-cpu.yaml"), Catalog::builtin());
  Plan p;
  p.micro_batch = 1;
  p.replicas = {Replica{8, {Stage{2, {0}}}}};
  // A workload name no folder holds: the header's name is resolved beside the plan and in the
  // folders above it, where a user's w.yaml in /tmp was found.
  const std::string workload = "no-such-workload-" + std::to_string(::getpid()) + ".yaml";
  const std::string yaml = plan_to_yaml(p, c, {"lat\xe9.yaml", workload, ""});
  EXPECT_EQ(yaml.find("\xe9"), std::string::npos);
  EXPECT_NE(yaml.find("# (the cluster file's path is not UTF-8: give it with --cluster)\n# workload: " + workload + "\n"),
            std::string::npos);
  const std::string dir = testing::TempDir() + "latin1-header-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string plan_path = dir + "/plan.yaml";
  std::ofstream(plan_path) << yaml;
  EXPECT_NO_THROW(load_plan_spec(plan_path));
  const PlanHeader h = read_plan_header(plan_path);
  EXPECT_EQ(h.cluster, "");
  EXPECT_EQ(h.workload, workload);
  std::filesystem::remove_all(dir);
}

TEST(PlanWriter, GroupsAcrossNodesUseGlobalIndices) {
  const Cluster c = load_cluster(source("clusters/mixed-a100-v100.yaml"), Catalog::builtin());
  const Workload w = load_workload(source("workloads/gpt3-6.7b.yaml"));
  Plan p;
  p.micro_batch = 2;
  p.schedule = Schedule::kInterleaved;
  p.interleave = 2;
  p.recompute = Recompute::kFull;
  p.zero = 1;
  Replica a;
  a.micro_batches = 300;
  a.stages = {Stage{20, {6, 7, 8, 9}}, Stage{12, {16, 18}}};  // 6-9 span both A100 nodes
  Replica b;
  b.micro_batches = 212;
  b.stages = {Stage{16, {40}}, Stage{16, {41}}};
  p.replicas = {a, b};
  const std::string text = plan_to_yaml(p, c);
  EXPECT_NE(text.find("gpus: \"gpu[6-9]\""), std::string::npos) << text;
  EXPECT_NE(text.find("gpus: \"dc/dgx1-v100[0]/gpu[0,2]\""), std::string::npos) << text;
  expect_same(parse_plan(text, c, w), p);
}

TEST(PlanWriter, FileIsWrittenAtomicallyAndLoads) {
  const Cluster c = load_cluster(source("clusters/mixed-a100-v100.yaml"), Catalog::builtin());
  const Workload w = load_workload(source("workloads/gpt3-6.7b.yaml"));
  const PlannerResult r = plan_training(c, w, PlannerOptions{});
  ASSERT_FALSE(r.top.empty());
  const auto dir = std::filesystem::temp_directory_path() / ("hetsim-plan-writer-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "best.yaml").string();
  write_plan_file(path, r.top.front().plan, c, {source("clusters/mixed-a100-v100.yaml"), source("workloads/gpt3-6.7b.yaml"), ""});
  expect_same(load_plan(path, c, w), r.top.front().plan);
  const PlanHeader h = read_plan_header(path);
  EXPECT_EQ(h.cluster, source("clusters/mixed-a100-v100.yaml"));
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);  // no temporary left behind
  std::filesystem::remove_all(dir);
  EXPECT_THROW(write_plan_file("/nonexistent-dir/x.yaml", r.top.front().plan, c), std::runtime_error);
}

// What hetsim writes it reads back: a plan whose YAML would pass the loaders' 16 MiB is refused
// with why, and no file appears (a plan of a million replicas came to 84 MB, which predict then
// refused as an input: s49 hunt).
TEST(PlanWriter, APlanTooLargeToReadBackIsNotWritten) {
  Cluster c;
  NodeType t;
  t.name = "box";
  t.gpu = Catalog::builtin().by_name("a100-sxm4-80gb");
  t.gpus_per_node = 8;
  c.node_types = {t};
  Zone z;
  z.name = "dc";
  z.groups = {NodeGroup{0, 40000}};  // 320,000 GPUs: one-GPU replicas of about 70 bytes each
  c.zones = {z};
  c.finalize();
  Plan p;
  for (int g = 0; g < c.gpu_count(); ++g) {
    Replica r;
    r.micro_batches = 1;
    r.stages = {Stage{1, {g}}};
    p.replicas.push_back(std::move(r));
  }
  ASSERT_GT(plan_to_yaml(p, c).size(), kMaxInputBytes);  // else the test shows nothing
  const auto dir = std::filesystem::temp_directory_path() / ("hetsim-plan-big-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "big.yaml").string();
  try {
    write_plan_file(path, p, c);
    FAIL() << "written";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": not written: the plan's 320000 replicas take "), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  std::filesystem::remove_all(dir);
}

// The error named the temporary ("x.yaml.tmp.<pid>") and not why: an output path in a missing
// folder or a folder given as the output file (found by scripts/fuzz_inputs.py).
TEST(AtomicFile, ErrorsNameThePathAndTheReasonAndLeaveNothing) {
  const auto message = [](const std::string& path) {
    try {
      write_text_file_atomic(path, "x");
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("/nonexistent-dir/x.yaml"), "cannot write /nonexistent-dir/x.yaml: No such file or directory");
  const auto dir = std::filesystem::temp_directory_path() / ("hetsim-atomic-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "sub");
  EXPECT_EQ(message((dir / "sub").string()), "cannot write " + (dir / "sub").string() + ": Is a directory");
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) entries += e.path().filename() != "sub";
  EXPECT_EQ(entries, 0);  // no temporary left behind
  std::filesystem::remove_all(dir);
}

// A process killed outright (SIGKILL: `run --inject-fault r:kill:s`, the OOM killer) cannot
// remove its temporary; the next write of the file removes those of dead processes, and keeps a
// live one's (s59 hunt: one more NAME.tmp.<pid> per killed run).
TEST(AtomicFile, RemovesTheTemporariesOfKilledWriters) {
  const auto dir = std::filesystem::temp_directory_path() / ("hetsim-atomic-orphans-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "ops.jsonl").string();
  // A child that has exited and been reaped: its pid names no process now.
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  int status = 0;
  ::waitpid(child, &status, 0);
  const std::string dead = path + ".tmp." + std::to_string(child);
  const std::string alive = path + ".tmp." + std::to_string(::getppid());  // this test's parent runs on
  const std::string other = (dir / "other.jsonl.tmp.1").string();          // another file's
  for (const std::string& f : {dead, alive, other}) std::ofstream(f) << "partial";
  write_text_file_atomic(path, "whole");
  EXPECT_FALSE(std::filesystem::exists(dead));
  EXPECT_TRUE(std::filesystem::exists(alive));
  EXPECT_TRUE(std::filesystem::exists(other));
  std::ifstream in(path);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "whole");
  std::filesystem::remove_all(dir);
}

// `plan --emit-plan /dev/full` renamed its temporary over the device: /dev/full became a plain
// file. A path that exists and is no regular file is refused; a symlink is written through.
TEST(AtomicFile, RefusesDevicesAndFifosAndWritesThroughSymlinks) {
  const auto dir = std::filesystem::temp_directory_path() / ("hetsim-atomic-special-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string fifo = (dir / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {fifo, std::string("/dev/null")}) {
    try {
      write_text_file_atomic(path, "x");
      ADD_FAILURE() << path << " was written";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "cannot write " + path + ": not a regular file (expected a file name)");
    }
  }
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/null"));
  std::ofstream(dir / "target.yaml") << "old";
  std::filesystem::create_symlink("target.yaml", dir / "link.yaml");
  write_text_file_atomic((dir / "link.yaml").string(), "new");
  EXPECT_TRUE(std::filesystem::is_symlink(dir / "link.yaml"));
  std::ifstream in(dir / "target.yaml");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "new");
  std::filesystem::remove_all(dir);
}


// A signal that ends the process while a file is written (Ctrl-C, kill) removes its temporary: a
// killed `run --out` left NAME.tmp.<pid> with its partial records beside the outputs.
TEST(AtomicFile, ASignalThatEndsTheProcessLeavesNoTemporary) {
  const auto dir = std::filesystem::temp_directory_path() / ("hetsim-atomic-signal-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "records.jsonl").string();
  for (int sig : {SIGINT, SIGTERM}) {
    EXPECT_EXIT(write_file_atomic(path,
                                  [&](std::ostream& out) {
                                    out << "a partial record";
                                    out.flush();
                                    ::raise(sig);
                                  }),
                ::testing::KilledBySignal(sig), "");
    EXPECT_TRUE(std::filesystem::is_empty(dir)) << "signal " << sig;  // neither the file nor its temporary
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hetsim::models
