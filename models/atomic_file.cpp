// SPDX-License-Identifier: Apache-2.0
// Atomic file output (temporary file + rename).
#include "atomic_file.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

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

/// Temporary files being written, removed by a signal that ends the process (Ctrl-C, kill): a
/// killed `run --out` left its partial records, a killed `validate --emit-dir` its last file, as
/// NAME.tmp.<pid> beside the outputs. Fixed slots, so that the handler reads them without locks.
class TemporaryFiles {
 public:
  static TemporaryFiles& instance() {
    static TemporaryFiles files;
    return files;
  }
  /// The slot now holding `path` (-1 when all are taken: the file is then not cleaned up).
  int add(const std::string& path) {
    install_handlers();
    if (path.size() >= kMaxPath) return -1;
    for (int i = 0; i < kSlots; ++i) {
      bool expected = false;
      if (!claimed_[i].compare_exchange_strong(expected, true)) continue;
      std::memcpy(paths_[i], path.c_str(), path.size() + 1);
      in_use_[i].store(true, std::memory_order_release);
      return i;
    }
    return -1;
  }
  /// Unlinks every temporary in use (async-signal-safe: also the signal handler's first step).
  void unlink_all() {
    for (int i = 0; i < kSlots; ++i)
      if (in_use_[i].load(std::memory_order_acquire)) ::unlink(paths_[i]);
  }
  void remove(int slot) {
    if (slot < 0) return;
    in_use_[slot].store(false, std::memory_order_release);
    claimed_[slot].store(false, std::memory_order_release);
  }

 private:
  static constexpr int kSlots = 64;
  static constexpr std::size_t kMaxPath = 4096;

  void install_handlers() {
    std::call_once(installed_, [] {
      for (int i = 0; i < kSignals; ++i) {
        // A signal the process ignores (SIGHUP under nohup) does not end it: leave it ignored.
        if (sigaction(kCaught[i], nullptr, &previous_[i]) != 0 || previous_[i].sa_handler == SIG_IGN) continue;
        struct sigaction action {};
        action.sa_handler = on_signal;
        sigemptyset(&action.sa_mask);
        sigaction(kCaught[i], &action, &previous_[i]);
      }
    });
  }
  /// Removes the temporaries (unlink is async-signal-safe), then lets the signal do what it did
  /// before: the previous handler's, by default ending the process.
  static void on_signal(int sig) {
    instance().unlink_all();
    for (int i = 0; i < kSignals; ++i)
      if (kCaught[i] == sig) sigaction(sig, &previous_[i], nullptr);
    ::raise(sig);
  }

  static constexpr int kSignals = 3;
  static constexpr int kCaught[kSignals] = {SIGINT, SIGTERM, SIGHUP};
  static inline struct sigaction previous_[kSignals] = {};
  std::once_flag installed_;
  std::atomic<bool> claimed_[kSlots] = {};
  std::atomic<bool> in_use_[kSlots] = {};
  char paths_[kSlots][kMaxPath] = {};
};

/// Removes the temporaries of `path` that processes killed outright (SIGKILL, the OOM killer,
/// `run --inject-fault rank:kill:step`) left: NAME.tmp.<pid> of a pid no process has. Signals
/// that can be caught remove their own (TemporaryFiles); these stayed, one more per killed run.
void remove_orphaned_temporaries(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const std::string prefix = target.filename().string() + ".tmp.";
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    // NAME.tmp.<digits> exactly: the last ".tmp." of such a name is the one after NAME.
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    if (name.find_first_not_of("0123456789", prefix.size()) != std::string::npos) continue;
    if (!left_by_a_dead_process(name, ".tmp.")) continue;
    std::error_code ignored;
    fs::remove(it->path(), ignored);
  }
}

}  // namespace

void remove_temporaries_in_progress() { TemporaryFiles::instance().unlink_all(); }

bool left_by_a_dead_process(const std::string& name, const std::string& marker) {
  const std::size_t at = name.rfind(marker);
  if (at == std::string::npos) return false;
  const std::string digits = name.substr(at + marker.size());
  if (digits.empty() || digits.size() > 10 || digits.find_first_not_of("0123456789") != std::string::npos) return false;
  const long pid = std::stol(digits);
  if (pid <= 0 || pid == ::getpid()) return false;
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;  // alive, or not ours to judge: kept
}

void write_text_file_atomic(const std::string& asked, std::string_view text) {
  write_file_atomic(asked, [&](std::ostream& out) { out.write(text.data(), static_cast<std::streamsize>(text.size())); });
}

void write_file_atomic(const std::string& asked, const std::function<void(std::ostream&)>& write) {
  const std::string path = replaced_file(asked);
  // The pid keeps concurrent writers (MPI ranks, parallel tests) off each other's temporaries.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  remove_orphaned_temporaries(path);
  struct Registered {  // removed by a signal that ends the process while it is written
    int slot;
    ~Registered() { TemporaryFiles::instance().remove(slot); }
  } registered{TemporaryFiles::instance().add(tmp)};
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
