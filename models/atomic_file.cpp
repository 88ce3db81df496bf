// SPDX-License-Identifier: Apache-2.0
// Atomic file output (temporary file + rename).
#include "atomic_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace hetsim::models {

namespace {

/// "cannot write PATH: No such file or directory": the file asked for, not the temporary, and why.
[[noreturn]] void fail(const std::string& path, int err) {
  throw std::runtime_error("cannot write " + path + (err != 0 ? std::string(": ") + std::strerror(err) : std::string()));
}

}  // namespace

void write_text_file_atomic(const std::string& path, std::string_view text) {
  // The pid keeps concurrent writers (MPI ranks, parallel tests) off each other's temporaries.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    errno = 0;
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail(path, errno);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (!out) {
      const int err = errno;
      std::remove(tmp.c_str());
      fail(path, err);
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    fail(path, err);
  }
}

}  // namespace hetsim::models
