// SPDX-License-Identifier: Apache-2.0
// Atomic file output (temporary file + rename).
#include "atomic_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace hetsim::models {

namespace {

/// "cannot write PATH: No such file or directory": the file asked for, not the temporary, and why.
[[noreturn]] void fail(const std::string& path, int err) {
  throw std::runtime_error("cannot write " + path + (err != 0 ? std::string(": ") + std::strerror(err) : std::string()));
}

/// The file a write to `path` replaces: a symlink's target (renaming over the link would turn
/// it into a file), else `path`. Throws when `path` exists and is no regular file: rename(2)
/// would replace a device (/dev/null, /dev/full) or a FIFO with a plain file.
std::string replaced_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path target = path;
  if (fs::is_symlink(target, ec)) {
    const fs::path resolved = fs::canonical(target, ec);
    if (!ec) target = resolved;  // a dangling link is replaced by the file
  }
  const fs::file_status st = fs::status(target, ec);
  if (fs::exists(st) && !fs::is_regular_file(st) && !fs::is_directory(st))  // a folder: rename's EISDIR
    throw std::runtime_error("cannot write " + path + ": not a regular file (expected a file name)");
  return target.string();
}

}  // namespace

void write_text_file_atomic(const std::string& asked, std::string_view text) {
  write_file_atomic(asked, [&](std::ostream& out) { out.write(text.data(), static_cast<std::streamsize>(text.size())); });
}

void write_file_atomic(const std::string& asked, const std::function<void(std::ostream&)>& write) {
  const std::string path = replaced_file(asked);
  // The pid keeps concurrent writers (MPI ranks, parallel tests) off each other's temporaries.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    errno = 0;
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail(asked, errno);
    try {
      write(out);
    } catch (...) {
      out.close();
      std::remove(tmp.c_str());
      throw;
    }
    out.flush();
    if (!out) {
      const int err = errno;
      out.close();
      std::remove(tmp.c_str());
      fail(asked, err);
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    fail(asked, err);
  }
}

}  // namespace hetsim::models
