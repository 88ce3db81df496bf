// SPDX-License-Identifier: Apache-2.0
// MPI transport: buffered non-blocking sends, blocking receives, abort on failure.
#include "comm/mpi_communicator.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace hetsim::exec {
namespace {
// MPI counts are int: larger messages go in pieces (same tag; MPI keeps their order).
constexpr std::size_t kPieceBytes = std::size_t{1} << 30;

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    throw std::runtime_error(std::string(what) + ": " + std::string(text, static_cast<std::size_t>(len)));
  }
}
}  // namespace

MpiSession::MpiSession(int* argc, char*** argv) {
  int provided = 0;
  check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

MpiSession::~MpiSession() { MPI_Finalize(); }

MpiCommunicator::MpiCommunicator(MPI_Comm comm) : comm_(comm) {
  check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  // MPI_TAG_UB is a predefined attribute of MPI_COMM_WORLD (MPI-3.1 section 8.1.2); its value
  // is a pointer to the int. Communicators derived from it inherit the bound.
  int* ub = nullptr;
  int found = 0;
  check(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &found), "MPI_Comm_get_attr(MPI_TAG_UB)");
  if (found && ub != nullptr) tag_ub_ = *ub;
}

MpiCommunicator::~MpiCommunicator() {
  try {
    reap(true);
  } catch (...) {
    // a destructor must not throw; the job is being torn down anyway
  }
}

void MpiCommunicator::abort(const std::string& why) {
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  write_stderr_line("hetsim: rank " + std::to_string(world_rank) + " failed: " + why);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

void MpiCommunicator::reap(bool wait_all) {
  for (auto it = pending_.begin(); it != pending_.end();) {
    int done = 0;
    if (wait_all) {
      check(MPI_Waitall(static_cast<int>(it->requests.size()), it->requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
      done = 1;
    } else {
      check(MPI_Testall(static_cast<int>(it->requests.size()), it->requests.data(), &done, MPI_STATUSES_IGNORE),
            "MPI_Testall");
    }
    it = done ? pending_.erase(it) : std::next(it);
  }
}

void MpiCommunicator::send_bytes(const void* buf, std::size_t size_bytes, int dst, int tag) {
  reap(false);
  Pending& p = pending_.emplace_back();
  p.data.assign(static_cast<const char*>(buf), static_cast<const char*>(buf) + size_bytes);
  std::size_t at = 0;
  do {
    const std::size_t piece = std::min(kPieceBytes, size_bytes - at);
    MPI_Request request;
    check(MPI_Isend(p.data.data() + at, static_cast<int>(piece), MPI_BYTE, dst, tag, comm_, &request), "MPI_Isend");
    p.requests.push_back(request);
    at += piece;
  } while (at < size_bytes);
}

void MpiCommunicator::recv_bytes(void* buf, std::size_t size_bytes, int src, int tag) {
  std::size_t at = 0;
  do {
    const std::size_t piece = std::min(kPieceBytes, size_bytes - at);
    MPI_Status status;
    check(MPI_Recv(static_cast<char*>(buf) + at, static_cast<int>(piece), MPI_BYTE, src, tag, comm_, &status),
          "MPI_Recv");
    int got = 0;
    MPI_Get_count(&status, MPI_BYTE, &got);
    if (static_cast<std::size_t>(got) != piece) {
      throw std::runtime_error("rank " + std::to_string(rank_) + ": message from rank " + std::to_string(src) + " tag " +
                               std::to_string(tag) + " has " + std::to_string(got) + " bytes, expected " +
                               std::to_string(piece));
    }
    at += piece;
  } while (at < size_bytes);
  reap(false);
}

void MpiCommunicator::wait_message(int src, int tag) {
  MPI_Status status;
  check(MPI_Probe(src, tag, comm_, &status), "MPI_Probe");
}

}  // namespace hetsim::exec
