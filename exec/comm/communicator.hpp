// SPDX-License-Identifier: Apache-2.0
// The Communicator interface: point-to-point and collectives between ranks, every call timed.
// Transports (threads in one process, MPI processes; NCCL/RCCL later) implement two buffered
// primitives; the collectives are ring algorithms on top of them, shared by every transport.
#pragma once
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace hetsim::exec {

/// Every MPI accepts tags 0..UB with UB = MPI_TAG_UB >= 32767 (MPI-3.1 standard, section 3.2.3
/// "Message Envelope" and section 8.1.2 "Tag Values"); Open MPI allows more, others may not.
inline constexpr int kMinTagUpperBound = 32767;

/// Tags of a run: point-to-point streams count up from 0, the collectives of group id g use
/// tag_ub - g (counted down from the top), so both stay in 0..tag_ub and never meet as long as
/// p2p tags + groups <= tag_ub + 1 (check_tag_space). Throws std::out_of_range outside 0..tag_ub.
int collective_tag(int group_id, int tag_ub);

/// Throws std::invalid_argument naming the counts and the bound when `p2p_tags` point-to-point
/// tags (0..p2p_tags-1) and `groups` collective tags do not fit in 0..tag_ub.
void check_tag_space(int p2p_tags, int groups, int tag_ub);

/// Writes `line` and a newline to stderr in one write(2) where it fits in a pipe's atomic size.
/// A rank's last words go through mpirun, which forwards whole reads: std::cerr (unbuffered)
/// wrote each `<<` piece separately, and mpirun's own MPI_Abort notice landed between them
/// ("hetsim: rank" ... notice ... "2 failed: ...", CI of s64).
void write_stderr_line(const std::string& line);

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
  std::string op;          ///< send | recv | probe | all_reduce | reduce_scatter | all_gather | barrier
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
  /// Largest valid message tag (MPI_TAG_UB under MPI). Transports without a limit of their own
  /// keep the bound every MPI guarantees, so that in-process runs use the tags an MPI run would.
  virtual int get_tag_ub() const { return kMinTagUpperBound; }
  /// Host-side seconds since an arbitrary epoch, the same clock as CommCall.
  static double now_s();
  /// The instant (now_s clock) every rank of the run measures its op times from, when all ranks
  /// read one clock (threads of one process): then the ranks' measurements can be compared and
  /// merged. nullopt when the ranks may run on different hosts, whose steady clocks are
  /// unrelated; each rank then takes its own epoch. Call it after a barrier of all ranks.
  virtual std::optional<double> get_shared_epoch_s() { return std::nullopt; }

  /// Buffered send: returns once `buf` may be reused, never waits for the receiver.
  void send(const float* buf, std::size_t count, int dst, int tag);
  void recv(float* buf, std::size_t count, int src, int tag);
  /// Blocks until the next message from src with this tag has arrived, without receiving it:
  /// what a recv waits for its sender, apart from the transfer (timed as a "probe" call).
  void probe(int src, int tag);
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
  /// Lets the sends this rank has in flight advance; the runner calls it between ops. MPI moves
  /// a message above its eager limit only inside MPI calls of the sender (MPI-3.1 §3.7, progress),
  /// so without it a receiver that has the header waits, inside its transfer, for the sender's
  /// next op to end. Default: nothing in flight to advance.
  virtual void progress() {}

 protected:
  /// Buffered: copies the bytes out before returning.
  virtual void send_bytes(const void* buf, std::size_t size_bytes, int dst, int tag) = 0;
  /// Blocks until the matching message (same src, tag; FIFO per (src, dst, tag)) has arrived.
  virtual void recv_bytes(void* buf, std::size_t size_bytes, int src, int tag) = 0;
  /// Blocks until a message (src, tag) can be received (MPI_Probe).
  virtual void wait_message(int src, int tag) = 0;

 private:
  void ring_reduce_scatter(float* work, std::size_t count, const Group& group, int pos);
  void ring_all_gather(float* work, std::size_t count, const Group& group, int pos);
  int group_tag(const Group& group) const;
  void check_p2p_tag(int tag) const;
  std::vector<CommCall> calls_;
  std::vector<float> scratch_;
};

}  // namespace hetsim::exec
