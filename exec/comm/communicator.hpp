// SPDX-License-Identifier: Apache-2.0
// The Communicator interface: point-to-point and collectives between ranks, every call timed.
// Transports (threads in one process, MPI processes; NCCL/RCCL later) implement two buffered
// primitives; the collectives are ring algorithms on top of them, shared by every transport.
#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace hetsim::exec {

/// Raised on every surviving rank when another rank failed; what() names the failed rank.
class RankFailure : public std::runtime_error {
 public:
  RankFailure(int failed_rank, const std::string& what)
      : std::runtime_error(what), failed_rank_(failed_rank) {}
  int get_failed_rank() const { return failed_rank_; }

 private:
  int failed_rank_;
};

/// An ordered set of global ranks that run a collective together. `id` must be the same on
/// every member and unique among the groups of a run (it separates their message streams).
struct Group {
  int id = 0;
  std::vector<int> ranks;
  int size() const { return static_cast<int>(ranks.size()); }
  /// Position of a global rank in the group, -1 when not a member.
  int position_of(int rank) const;
};

/// One timed communicator call (seconds on the steady clock of the process).
struct CommCall {
  std::string op;          ///< send | recv | all_reduce | reduce_scatter | all_gather | barrier
  std::size_t size_bytes = 0;
  int peer = -1;           ///< p2p: the other rank; collectives: the group id
  double start_s = 0;
  double end_s = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int get_rank() const = 0;
  virtual int get_size() const = 0;
  /// Host-side seconds since an arbitrary epoch, the same clock as CommCall.
  static double now_s();

  /// Buffered send: returns once `buf` may be reused, never waits for the receiver.
  void send(const float* buf, std::size_t count, int dst, int tag);
  void recv(float* buf, std::size_t count, int src, int tag);
  /// In-place sum over the group (ring reduce-scatter + ring all-gather,
  /// Patarasuk & Yuan, JPDC 2009).
  void all_reduce(float* buf, std::size_t count, const Group& group);
  /// in: group.size() * count_per_rank elements; out: the summed chunk of this rank's position.
  void reduce_scatter(const float* in, float* out, std::size_t count_per_rank, const Group& group);
  /// in: count_per_rank elements; out: group.size() * count_per_rank, chunk i from position i.
  void all_gather(const float* in, float* out, std::size_t count_per_rank, const Group& group);
  void barrier(const Group& group);

  const std::vector<CommCall>& get_calls() const { return calls_; }
  void clear_calls() { calls_.clear(); }

  /// Marks this rank as failed so that every other rank stops waiting and raises RankFailure.
  virtual void abort(const std::string& why) = 0;

 protected:
  /// Buffered: copies the bytes out before returning.
  virtual void send_bytes(const void* buf, std::size_t size_bytes, int dst, int tag) = 0;
  /// Blocks until the matching message (same src, tag; FIFO per (src, dst, tag)) has arrived.
  virtual void recv_bytes(void* buf, std::size_t size_bytes, int src, int tag) = 0;

 private:
  void ring_reduce_scatter(float* work, std::size_t count, const Group& group, int pos);
  void ring_all_gather(float* work, std::size_t count, const Group& group, int pos);
  int group_tag(const Group& group) const;
  std::vector<CommCall> calls_;
  std::vector<float> scratch_;
};

/// Tags below this are free for point-to-point streams; collectives use kCollectiveTagBase + group id.
inline constexpr int kCollectiveTagBase = 1 << 20;

}  // namespace hetsim::exec
