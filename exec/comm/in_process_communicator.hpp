// SPDX-License-Identifier: Apache-2.0
// Threads as ranks: one process, a shared mailbox per (src, dst, tag), buffered sends.
#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "comm/communicator.hpp"

namespace hetsim::exec {

/// The shared state of `size` in-process ranks.
class InProcessWorld {
 public:
  explicit InProcessWorld(int size) : size_(size), arrived_(static_cast<std::size_t>(size)) {}
  int get_size() const { return size_; }
  /// The clock reading of the first rank that asks; every later caller gets the same value, so
  /// times measured from it are comparable across ranks (and never negative when every rank asks
  /// before it times anything).
  double get_shared_epoch_s();

  /// Runs body(comm) on `size` threads, one per rank, and joins them. When a rank throws,
  /// every other rank's waits end with RankFailure, and run() throws RankFailure naming the
  /// first rank that failed and its message.
  static void run(int size, const std::function<void(Communicator&)>& body);

 private:
  friend class InProcessCommunicator;
  using Key = std::tuple<int, int, int>;  // src, dst, tag
  void post(int src, int dst, int tag, const void* buf, std::size_t size_bytes);
  void take(int src, int dst, int tag, void* buf, std::size_t size_bytes);
  void wait_for(int src, int dst, int tag);
  void fail(int rank, const std::string& why);

  int size_;
  std::mutex mutex_;
  /// One per destination rank: a post wakes only the rank it is for. One shared variable woke
  /// every waiting rank on every message, O(ranks^2) wake-ups per collective step, which with
  /// 128 ranks on 2 cores made a step of a tiny model take 23.5 s instead of 4.1 s
  /// (bench/exec_comm_bench: a 128-rank all-reduce of 64K floats 4.2 s, now 0.12-0.17 s).
  std::vector<std::condition_variable> arrived_;
  std::map<Key, std::deque<std::vector<char>>> mailboxes_;
  int failed_rank_ = -1;
  std::string failure_;
  std::once_flag epoch_once_;
  double epoch_s_ = 0;
};

class InProcessCommunicator final : public Communicator {
 public:
  InProcessCommunicator(InProcessWorld& world, int rank) : world_(world), rank_(rank) {}
  int get_rank() const override { return rank_; }
  int get_size() const override { return world_.get_size(); }
  void abort(const std::string& why) override { world_.fail(rank_, why); }
  std::optional<double> get_shared_epoch_s() override { return world_.get_shared_epoch_s(); }

 protected:
  void send_bytes(const void* buf, std::size_t size_bytes, int dst, int tag) override;
  void recv_bytes(void* buf, std::size_t size_bytes, int src, int tag) override;
  void wait_message(int src, int tag) override;

 private:
  InProcessWorld& world_;
  int rank_;
};

}  // namespace hetsim::exec
