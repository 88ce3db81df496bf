// SPDX-License-Identifier: Apache-2.0
// Checks of the files and folders a verb writes, made before its work starts: every output is
// written atomically (a temporary file beside it, renamed over it), so the path must name a
// plain file in a writable folder, not an input, another output, the GPU catalog or the
// command's own standard output.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

namespace hetsim::cli {

/// An output file: the folder it goes into exists and the path is not a folder. Checked when the
/// command line is parsed, so a long job does not fail at its end for want of a folder.
CLI::Validator output_file_check();
/// An output folder (created when missing): no existing part of the path is a file.
CLI::Validator output_dir_check();

/// What is wrong when an output file would overwrite an input or another output ("" when
/// nothing): `outputs` are (option, path) pairs, `inputs` the paths the verb reads. Paths are
/// compared as files (./x, a symlink and a hard link are the same file). `plan --emit-plan
/// C.yaml --cluster C.yaml` used to replace the cluster with the plan.
std::string output_overwrites_input(const std::vector<std::pair<std::string, std::string>>& outputs,
                                    const std::vector<std::string>& inputs);
/// The first output that is a *.yaml file in the GPU catalog folder (Catalog::builtin_dir()),
/// as a message; "" when none is.
std::string output_in_catalog(const std::vector<std::pair<std::string, std::string>>& outputs);
/// What output_overwrites_input or output_in_catalog finds, or the checks of output_file_check
/// (for paths derived from other options, such as the default checkpoint OUT.samples.jsonl);
/// "" when nothing.
std::string output_files_problem(const std::vector<std::pair<std::string, std::string>>& outputs,
                                 const std::vector<std::string>& inputs);
/// Exit 2 with "hetsim <verb>: error: <problem>" when output_files_problem finds one.
void check_output_files(const std::string& verb, const std::vector<std::pair<std::string, std::string>>& outputs,
                        const std::vector<std::string>& inputs);

}  // namespace hetsim::cli
