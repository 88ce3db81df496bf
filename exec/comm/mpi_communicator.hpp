// SPDX-License-Identifier: Apache-2.0
// MPI processes as ranks (one node or many). Sends are buffered (MPI_Isend of a private copy),
// so pipelines never deadlock on send order, like the in-process transport.
#pragma once
#include <list>
#include <string>
#include <vector>

#include <mpi.h>

#include "comm/communicator.hpp"

namespace hetsim::exec {

/// MPI_Init_thread / MPI_Finalize for the lifetime of the object.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
};

class MpiCommunicator final : public Communicator {
 public:
  /// Uses `comm` (not duplicated; the caller keeps it alive).
  explicit MpiCommunicator(MPI_Comm comm = MPI_COMM_WORLD);
  ~MpiCommunicator() override;
  int get_rank() const override { return rank_; }
  int get_size() const override { return size_; }
  /// MPI_TAG_UB of this MPI (queried once; at least 32767).
  int get_tag_ub() const override { return tag_ub_; }
  /// Prints "hetsim: rank R failed: why" and aborts every process of the job (MPI_Abort).
  void abort(const std::string& why) override;
  /// MPI_Test on the buffered sends in flight (reap), which drives MPI's progress engine.
  void progress() override { reap(false); }

 protected:
  void send_bytes(const void* buf, std::size_t size_bytes, int dst, int tag) override;
  void recv_bytes(void* buf, std::size_t size_bytes, int src, int tag) override;
  void wait_message(int src, int tag) override;

 private:
  struct Pending {
    std::vector<char> data;
    std::vector<MPI_Request> requests;
  };
  void reap(bool wait_all);
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
  int tag_ub_ = kMinTagUpperBound;
  std::list<Pending> pending_;
};

}  // namespace hetsim::exec
