// SPDX-License-Identifier: Apache-2.0
// `run --out` writes the records while the run goes (runner/measurement_stream.hpp): in start
// order over all ranks, as a run that kept its records would sort them, holding back only what
// another rank may still precede.
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "exec_test_support.hpp"
#include "runner/measurement_stream.hpp"
#include "runner/run.hpp"

namespace hetsim::exec {
namespace {

Measurement record(int rank, int step, double start_s) {
  Measurement m;
  m.rank = rank;
  m.step = step;
  m.op = "op";
  m.start_s = start_s;
  m.end_s = start_s + 0.5;
  return m;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(MeasurementStream, WritesInStartOrderAsSoonAsNoRankCanPrecede) {
  std::ostringstream out;
  MeasurementStream stream(out, 2);
  stream.add(0, {record(0, 1, 3.0), record(0, 1, 1.0)});  // rank 1 has said nothing: all held back
  EXPECT_EQ(out.str(), "");
  stream.add(1, {record(1, 1, 2.0), record(1, 1, 0.5)});  // both up to 2.0: 0.5, 1.0, 2.0 written
  EXPECT_EQ(lines_of(out.str()), (std::vector<std::string>{to_json_line(record(1, 1, 0.5)),
                                                           to_json_line(record(0, 1, 1.0)),
                                                           to_json_line(record(1, 1, 2.0))}));
  stream.add(1, {record(1, 2, 4.0)});  // rank 0's 3.0 can now be nothing but next
  EXPECT_EQ(lines_of(out.str()).size(), 4u);
  stream.close();
  const std::vector<std::string> all = lines_of(out.str());
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all[3], to_json_line(record(0, 1, 3.0)));
  EXPECT_EQ(all[4], to_json_line(record(1, 2, 4.0)));
  EXPECT_THROW(stream.add(2, {record(2, 1, 1.0)}), std::out_of_range);
}

// A run's streamed records are the records a run that keeps them returns (the same ops of the same
// ranks and steps; times differ between runs), in start order, and the Report is still made.
TEST(MeasurementStream, AStreamedRunWritesEveryRecordInStartOrder) {
  RunSpec s;
  s.cluster = testing::cpu_cluster(1, 1);
  s.workload = testing::tiny_workload();
  s.plan = testing::plan("pp2", {testing::replica(4, {testing::stage(3, 0), testing::stage(1, 1)})});
  s.steps = 3;
  const RunOutcome kept = run_in_process(s);

  std::ostringstream out;
  MeasurementStream stream(out, s.plan.gpu_count());
  std::mutex mutex;
  std::map<int, int> handed_over;  // rank -> steps handed over
  s.options.keep_measurements = false;
  s.on_step_records = [&](int rank, std::vector<Measurement> records) {
    {
      std::lock_guard lock(mutex);
      ++handed_over[rank];
    }
    stream.add(rank, std::move(records));
  };
  const RunOutcome streamed = run_in_process(s);
  stream.close();
  EXPECT_TRUE(streamed.measurements.empty());
  EXPECT_GT(streamed.report.iteration_time_s, 0);
  EXPECT_EQ(handed_over, (std::map<int, int>{{0, 3}, {1, 3}}));

  using Key = std::tuple<int, int, int, std::string, std::string>;  // rank, step, micro-batch, phase, op
  std::map<Key, int> want, got;
  for (const Measurement& m : kept.measurements) ++want[{m.rank, m.step, m.micro_batch, m.phase, m.op}];
  double last_start_s = -1;
  int lines = 0;
  for (const std::string& line : lines_of(out.str())) {
    ++lines;
    const auto field = [&](const std::string& name) {
      const std::size_t at = line.find("\"" + name + "\":") + name.size() + 3;
      return line.substr(at, line.find_first_of(",}", at) - at);
    };
    const auto text = [&](const std::string& name) { return field(name).substr(1, field(name).size() - 2); };
    ++got[{std::stoi(field("rank")), std::stoi(field("step")), std::stoi(field("micro_batch")), text("phase"),
           text("op")}];
    const double start_s = std::stod(field("start_s"));
    EXPECT_GE(start_s, last_start_s) << line;
    last_start_s = start_s;
  }
  EXPECT_EQ(lines, static_cast<int>(kept.measurements.size()));
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace hetsim::exec
