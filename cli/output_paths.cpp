// SPDX-License-Identifier: Apache-2.0
#include "output_paths.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "catalog.hpp"
#include "input_loader.hpp"
#include "verbs.hpp"

namespace hetsim::cli {

namespace {

namespace fs = std::filesystem;

/// Whether a new file can be created in `folder` ("" when it can): probed by creating and
/// removing an empty file, the same operation as the atomic writes' temporary file, because
/// permissions alone do not tell (root may write anywhere but in /proc or on a read-only mount).
/// Checked before the work, so that a plan search or a simulation is not lost to its output.
std::string folder_write_problem(const fs::path& folder) {
  const fs::path probe = folder / (".hetsim-write-probe-" + std::to_string(::getpid()));
  if (std::FILE* f = std::fopen(probe.c_str(), "wx")) {
    std::fclose(f);
    std::error_code ec;
    fs::remove(probe, ec);
    return {};
  }
  if (errno == EEXIST) return {};  // a probe left by a killed run of this pid: the folder takes files
  const std::string why = std::strerror(errno);
  return "cannot create files in folder '" + (folder.empty() ? std::string(".") : folder.string()) + "': " + why +
         " (expected a writable folder)";
}

/// Whether `path` names the file open on descriptor `fd` (false when either cannot be examined).
bool same_file_as_descriptor(const fs::path& path, int fd) {
  struct stat of_path {}, of_fd {};
  if (::stat(path.c_str(), &of_path) != 0 || ::fstat(fd, &of_fd) != 0) return false;
  return of_path.st_dev == of_fd.st_dev && of_path.st_ino == of_fd.st_ino;
}

/// What is wrong with an output file's path ("" when nothing).
std::string output_file_problem(const fs::path& path) {
  std::error_code ec;
  // Not standard output: the verbs print their results there already.
  if (path == "-") return "'-' is not a file (expected a file name; the results are printed on standard output)";
  if (fs::is_directory(path, ec)) return "'" + path.string() + "' is a folder (expected a file name)";
  // Outputs are written to a temporary file and renamed over the path, which would replace a
  // device (/dev/null) or a FIFO with a plain file.
  if (const fs::file_status st = fs::status(path, ec); fs::exists(st) && !fs::is_regular_file(st))
    return "'" + path.string() + "' is not a regular file (expected a file name)";
  // /dev/stdout when standard output goes to a file: renaming the result over that file
  // replaced what the verb printed (a plan's table, a run's Report) with the file alone.
  for (const int fd : {STDOUT_FILENO, STDERR_FILENO})
    if (same_file_as_descriptor(path, fd))
      return "'" + path.string() + "' is this command's standard " + (fd == STDOUT_FILENO ? "output" : "error") +
             " (expected a file of its own: the results are printed on standard output)";
  // The file is written as NAME.tmp.<pid> beside it first: a name the folder takes whose
  // temporary name it does not failed only at the end, after the whole job ("File name too long").
  const std::string name = path.filename().string();
  constexpr std::size_t kTmpSuffixBytes = 16;  // ".tmp." and a pid of up to 10 digits, with room
  const long name_max = ::pathconf(path.parent_path().empty() ? "." : path.parent_path().c_str(), _PC_NAME_MAX);
  const std::size_t limit = name_max > 0 ? static_cast<std::size_t>(name_max) : 255;
  if (name.size() + kTmpSuffixBytes > limit)
    return "file name '" + name.substr(0, 40) + "...' is " + std::to_string(name.size()) + " bytes (expected at most " +
           std::to_string(limit - kTmpSuffixBytes) + ", which leaves room for the temporary file written beside it)";
  const fs::path parent = path.parent_path();
  if (!parent.empty() && fs::exists(parent, ec) && !fs::is_directory(parent, ec))
    return "'" + parent.string() + "' is a file, not a folder (expected the path of a file in an existing folder)";
  if (!parent.empty() && !fs::is_directory(parent, ec))
    return "folder '" + parent.string() + "' does not exist (expected the path of a file in an existing folder)";
  return folder_write_problem(parent.empty() ? fs::path(".") : parent);
}

/// What is wrong with an output folder's path: the nearest part of it that exists must be a
/// folder (the rest is created).
std::string output_dir_problem(const fs::path& path) {
  std::error_code ec;
  for (fs::path p = path; !p.empty(); p = p.parent_path()) {
    if (fs::exists(p, ec))
      return fs::is_directory(p, ec) ? folder_write_problem(p) : "'" + p.string() + "' is a file (expected a folder)";
    if (p == p.parent_path()) break;
  }
  return folder_write_problem(".");
}

CLI::Validator path_check(const std::string& kind, std::string (*problem)(const fs::path&)) {
  return CLI::Validator(
      [kind, problem](std::string& path) -> std::string {
        return path.empty() ? "empty path (expected a " + kind + " name)" : problem(fs::path(path));
      },
      kind == "file" ? "FILE" : "DIR");
}

}  // namespace

CLI::Validator output_file_check() { return path_check("file", output_file_problem); }

std::string output_overwrites_input(const std::vector<std::pair<std::string, std::string>>& outputs,
                                    const std::vector<std::string>& inputs) {
  // The same file spelled differently (./x, a symlink, a hard link): equivalent() when both
  // exist, else the normalised paths (an output not written yet can still be an input's path).
  const auto same = [](const std::string& a, const std::string& b) {
    std::error_code ec;
    if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
    // Absolute first: weakly_canonical leaves a bare relative name relative when nothing of it
    // exists yet ("o.csv" against "./o.csv", which it makes absolute), so the two differed.
    // A path it cannot resolve (a name too long) is compared as written, normalised: two failed
    // resolutions gave two empty paths, "the same file".
    const auto resolved = [](const std::string& p) {
      std::error_code e;
      const fs::path absolute = fs::absolute(p, e);
      const fs::path canonical = fs::weakly_canonical(absolute, e);
      return e || canonical.empty() ? absolute.lexically_normal() : canonical;
    };
    return resolved(a) == resolved(b);
  };
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto& [option, path] = outputs[i];
    if (path.empty()) continue;
    for (const std::string& input : inputs)
      if (!input.empty() && same(path, input))
        return option + ": '" + path + "' is the input file '" + input + "' (expected another file: it would be overwritten)";
    for (size_t j = 0; j < i; ++j)
      if (!outputs[j].second.empty() && same(path, outputs[j].second))
        return option + ": '" + path + "' is the " + outputs[j].first + " file (expected another file)";
  }
  return {};
}

// Every verb reads each *.yaml of the GPU catalog folder: a *.yaml output there (a plan, a CSV
// named so, a checkpoint) replaced or joined the catalog, and every later command failed on it.
// The name that counts is the one written: a symlink `x.csv` to the catalog's nvidia.yaml had
// the atomic write replace nvidia.yaml with CSV (s63 CLI hunt), so the link is resolved first.
std::string output_in_catalog(const std::vector<std::pair<std::string, std::string>>& outputs) {
  std::error_code ec;
  const fs::path catalog = fs::weakly_canonical(fs::absolute(models::Catalog::builtin_dir(), ec), ec);
  for (const auto& [option, path] : outputs) {
    if (path.empty()) continue;
    const fs::path written = fs::weakly_canonical(fs::absolute(path, ec), ec);
    // the names the catalog reads: *.yaml, *.YML...
    if (!models::is_catalog_file_name(path) && !models::is_catalog_file_name(written.filename().string())) continue;
    const fs::path folder = written.parent_path();
    if (!catalog.empty() && (folder == catalog || fs::equivalent(folder, catalog, ec))) {
      const bool link = written.filename() != fs::path(path).filename();
      return option + ": '" + path + "'" + (link ? " (a link to '" + written.string() + "')" : "") +
             " is in the GPU catalog folder '" + models::Catalog::builtin_dir() +
             "', whose *.yaml files every command reads as GPU types (expected another folder)";
    }
  }
  return {};
}

std::string output_files_problem(const std::vector<std::pair<std::string, std::string>>& outputs,
                                 const std::vector<std::string>& inputs) {
  std::string problem = output_overwrites_input(outputs, inputs);
  if (problem.empty()) problem = output_in_catalog(outputs);
  // Paths derived from others (a default checkpoint next to --out) had no option check.
  for (const auto& [option, path] : outputs)
    if (problem.empty() && !path.empty())
      if (const std::string p = output_file_problem(path); !p.empty()) problem = option + ": " + p;
  return problem;
}

void check_output_files(const std::string& verb, const std::vector<std::pair<std::string, std::string>>& outputs,
                        const std::vector<std::string>& inputs) {
  const std::string problem = output_files_problem(outputs, inputs);
  if (problem.empty()) return;
  std::cerr << "hetsim " << verb << ": error: " << problem << '\n';
  throw VerbExit{kExitBadInput};
}
CLI::Validator output_dir_check() { return path_check("folder", output_dir_problem); }

}  // namespace hetsim::cli
