// SPDX-License-Identifier: Apache-2.0
// Atomic file output: every file hetsim writes (plans, emitted suites, traces, measurements,
// profiles) appears whole or not at all, so a killed run never leaves a half-written file.
#pragma once
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace hetsim::models {

/// Writes `text` to `path` atomically: a temporary file in the same folder, then rename(2)
/// (atomic on POSIX within one file system). A symlink is written through to its target. Throws
/// std::runtime_error naming the path, also when it exists and is no regular file (a device such
/// as /dev/null, a FIFO): renaming over it would replace it with a plain file.
void write_text_file_atomic(const std::string& path, std::string_view text);

/// The same for output formed as it is written (a large trace): `write` fills the temporary
/// file's stream; it is renamed over `path` once `write` returns and the stream is good, and
/// removed when either fails (an exception from `write` is rethrown).
void write_file_atomic(const std::string& path, const std::function<void(std::ostream&)>& write);

/// Removes the temporary files of the atomic writes in progress, for a process about to end
/// without unwinding its stack (an MPI rank's MPI_Abort): their writes are then never finished.
void remove_temporaries_in_progress();

/// Whether `name` ends in `marker` and a process id of this machine no longer in use (not this
/// process's): what a process killed before it could clean up left (SIGKILL, the OOM killer).
bool left_by_a_dead_process(const std::string& name, const std::string& marker);

}  // namespace hetsim::models
