// SPDX-License-Identifier: Apache-2.0
// `hetsim calibrate --cluster C [--out profile.yaml] [--quick] [--checkpoint F]`: microbenchmarks
// of the cluster's device types and link classes through the execution engine, fitted into a
// Profile (calibration/). A killed run resumes from its JSONL checkpoint.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "atomic_file.hpp"
#include "calibrate.hpp"
#include "cli_common.hpp"
#include "jsonl_file.hpp"
#include "profile.hpp"
#include "sample.hpp"
#include "units.hpp"
#include "verbs.hpp"

namespace hetsim::cli {
namespace {

struct CalibrateVerbOptions {
  std::string cluster, out = "profile.yaml", checkpoint;
  bool quick = false;
  bool refit = false;
  int repeats = 7;
};

void run_calibrate(const CalibrateVerbOptions& o) {
  calibration::CalibrateOptions options;
  options.checkpoint_path = o.checkpoint.empty() ? o.out + ".samples.jsonl" : o.checkpoint;
  // With --refit the checkpoint is only read: an input, which may lie in a read-only folder.
  if (o.refit)
    check_output_files("calibrate", {{"--out", o.out}}, {o.cluster, options.checkpoint_path});
  else
    check_output_files("calibrate", {{"--out", o.out}, {"--checkpoint", options.checkpoint_path}}, {o.cluster});
  const models::Cluster cluster = load_cluster_file(o.cluster);
  // A checkpoint that cannot be written is found now, not after the first microbenchmark.
  std::string problem;
  std::error_code ec;
  const std::filesystem::file_status checkpoint_status = std::filesystem::status(options.checkpoint_path, ec);
  if (o.refit && std::filesystem::is_directory(checkpoint_status))
    problem = "--refit: '" + options.checkpoint_path + "' is a folder (expected the checkpoint file of a calibrate run)";
  else if (o.refit && std::filesystem::exists(checkpoint_status) && !std::filesystem::is_regular_file(checkpoint_status))
    // Opening a FIFO to read waits for a writer: the verb hung there.
    problem = "--refit: '" + options.checkpoint_path + "' is not a regular file (expected the checkpoint file of a calibrate run)";
  else if (o.refit && !std::ifstream(options.checkpoint_path))
    problem = "--refit fits the samples of '" + options.checkpoint_path + "', which does not exist (expected the checkpoint " +
              "of a calibrate run)";
  else if (!o.refit && !checkpoint_writable(options.checkpoint_path))
    problem = "cannot write '" + options.checkpoint_path + "' (expected a writable file)";
  else
    problem = models::json_lines_problem(options.checkpoint_path);
  // A JSONL file of something else (a sweep's checkpoint, say) would have samples appended to it.
  // The lines are counted only when no sample reads (a new file, or someone else's).
  if (problem.empty() && calibration::read_checkpoint(options.checkpoint_path).empty()) {
    std::size_t lines = 0;  // counted, not kept
    models::for_each_json_line(options.checkpoint_path, [&lines](const models::JsonLine& l) { lines += l.record.IsMap(); });
    if (lines > 0)
      problem = "'" + options.checkpoint_path + "' holds " + std::to_string(lines) +
                " JSON lines and none is a calibrate sample (expected a checkpoint of hetsim calibrate, or a new file)";
    else if (o.refit)
      problem = "--refit: '" + options.checkpoint_path + "' holds no microbenchmark (expected the checkpoint of a calibrate run)";
  }
  if (!problem.empty()) {
    std::cerr << "hetsim calibrate: error: --checkpoint: " << problem << '\n';
    throw VerbExit{kExitBadInput};
  }
  options.quick = o.quick;
  options.refit = o.refit;
  options.timing.repeats = o.repeats;
  options.log = [](const std::string& line) { std::cerr << "hetsim calibrate: " << line << '\n'; };
  if (!o.refit)
    note_if_machine_busy("calibrate", "the microbenchmarks measure the share of a core they get, so the profile comes out "
                                      "slow (rerun on an idle machine with another --checkpoint: the samples in this one are reused)");
  calibration::CalibrationResult r;
  try {
    r = calibration::calibrate(cluster, options);
  } catch (const calibration::RefitMissingSample& e) {
    std::cerr << "hetsim calibrate: error: " << e.what() << '\n';
    throw VerbExit{kExitBadInput};
  }
  const std::string command =
      "hetsim calibrate --cluster " + o.cluster + (o.quick ? " --quick" : "") + (o.refit ? " --refit" : "");
  // When the samples were measured, not when they were fitted: a resumed run measures only what
  // the checkpoint lacks (older checkpoints carry no times: "before" what this run measured).
  std::string first, last;
  int undated = 0;
  for (const calibration::Sample& s : r.samples) {
    if (s.measured_at.empty()) {
      ++undated;
      continue;
    }
    if (first.empty() || s.measured_at < first) first = s.measured_at;
    if (last.empty() || s.measured_at > last) last = s.measured_at;
  }
  const std::string when = first.empty()       ? "at times the checkpoint does not record"
                           : first == last     ? "on " + first
                                               : "between " + first + " and " + last;
  const bool all_resumed = r.resumed == static_cast<int>(r.samples.size());
  r.profile.source = (all_resumed ? "fitted by `" + command + "` on " + utc_now() + " from microbenchmarks measured "
                                  : "measured by `" + command + "` ") +
                     when + (undated > 0 && !first.empty() ? " (" + std::to_string(undated) + " undated, older)" : "") +
                     ": median of " + std::to_string(o.repeats) + " timed repeats after warm-up; " +
                     std::to_string(r.samples.size()) + " microbenchmarks";
  // Samples resumed from the checkpoint were measured by an earlier run (with the same --repeats,
  // part of the resume key).
  if (r.resumed > 0)
    r.profile.source += ", " + std::to_string(r.resumed) + " of them resumed from " + options.checkpoint_path;
  const std::string load = load_average_line();  // while measuring: a shared machine slows every kernel
  std::vector<std::string> header = {
      "Calibrated profile of cluster " + cluster.name + " (kind: profile, docs/inputs.md).",
      "Produced by `" + command + "` on " + utc_now() + "; microbenchmarks in " + options.checkpoint_path + ".",
      all_resumed ? std::string("Every microbenchmark was resumed from the checkpoint: none ran in this call.")
                  : "Machine load when it finished (/proc/loadavg): " + (load.empty() ? std::string("unknown") : load) + ".",
      "Fits (calibration/fit.hpp): GEMM t = max((W + h)/(peak e) (k + K0)/k, bytes/(bw gemm_memory)) + launch, least",
      "largest relative error (on GPUs least squares of them); gemm_memory = the axpy stream's rate;",
      "memory-bound t = bytes/(bw eff) + launch on transcendental-free elementwise kernels; links: ring all-reduce",
      "t - 10us = 2(n-1)/n S/B + 2(n-1) alpha; NIC p2p t = alpha + S/B, every device of a node in a pair at once."};
  for (const std::string& n : r.notes) header.push_back("Note: " + n);
  const std::string yaml = calibration::profile_to_yaml(r.profile, header);
  // A profile every verb would reject (a GEMM efficiency of 0 from a damaged or far too busy
  // sample) is not written: the user learns it here, not from the next verb that reads it.
  try {
    models::parse_profile(yaml, o.out);
  } catch (const models::ConfigError& e) {
    std::cerr << "hetsim calibrate: error: the fitted figures lie outside what a profile may hold, so " << o.out
              << " was not written:\n"
              << e.what() << "\n(a sample is far off: measure again with another --checkpoint, on an idle machine)\n";
    throw VerbExit{kExitFailure};
  }
  models::write_text_file_atomic(o.out, yaml);

  TextTable devices({"device", "samples", "gemm eff", "half work", "gemm max err", "memory eff", "achieved B/W",
                      "launch"});
  for (const auto& [name, f] : r.devices) {
    devices.add_row({name, std::to_string(f.memory.samples + f.gemm.samples), std::to_string(f.gemm.gemm_efficiency),
                     format_work(f.gemm.gemm_half_work_flop), models::format_percent(f.gemm.max_rel_error),
                     std::to_string(f.memory_efficiency), models::format_bandwidth(f.memory.achieved_Bps),
                     models::format_time(f.memory.kernel_launch_s)});
  }
  devices.print(std::cout);
  if (!r.links.empty()) {
    TextTable links({"link class", "samples", "senders/node (p2p)", "bandwidth/device", "latency"});
    for (const auto& [name, f] : r.links)
      links.add_row({name, std::to_string(f.samples), r.link_senders.count(name) ? std::to_string(r.link_senders.at(name)) : std::string("-"),
                     models::format_bandwidth(f.bandwidth_Bps), models::format_time(f.latency_s)});
    links.print(std::cout);
  }
  std::cout << "profile written to " << o.out << " (" << r.samples.size() << " microbenchmarks, " << r.resumed
            << " resumed from the checkpoint)\n";
}

}  // namespace

void add_calibrate_verb(CLI::App& app) {
  auto o = std::make_shared<CalibrateVerbOptions>();
  CLI::App* verb = app.add_subcommand(
      "calibrate", "Microbenchmark the cluster's device types and links through the execution engine and write a "
                   "Profile (kind: profile) for predict/plan/simulate/check --profile");
  verb->add_option("--cluster", o->cluster, "Cluster file (kind: cluster)")->required();
  verb->add_option("--out", o->out, "Profile to write (atomically; default profile.yaml)")
      ->check(output_file_check());
  verb->add_option("--checkpoint", o->checkpoint,
                   "JSONL of finished microbenchmarks; a rerun with the same --repeats resumes from it (default OUT.samples.jsonl)");
  // (Checked as an output in run_calibrate, as an input with --refit.)
  verb->add_flag("--quick", o->quick, "Small grid (a few points per fit)");
  verb->add_flag("--refit", o->refit,
                 "Run no microbenchmark: fit the checkpoint's (needs no device; e.g. a GPU's samples fitted again "
                 "elsewhere after an update of the fits)");
  verb->add_option("--repeats", o->repeats, "Timed repeats per microbenchmark (median kept; default 7)")
      ->transform(integer_check(1, 1000));
  verb->callback([o] { run_calibrate(*o); });
}

}  // namespace hetsim::cli
