// SPDX-License-Identifier: Apache-2.0
// Ring collectives over a transport's buffered send/recv, and per-call timing.
#include "comm/communicator.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#include <unistd.h>

namespace hetsim::exec {
namespace {

// Element range of chunk c when count elements are split into n nearly equal chunks.
std::size_t chunk_begin(std::size_t count, int n, int c) {
  return count / n * c + std::min<std::size_t>(c, count % n);
}

class CallTimer {
 public:
  CallTimer(std::vector<CommCall>& calls, const char* op, std::size_t bytes, int peer)
      : calls_(calls), call_{op, bytes, peer, Communicator::now_s(), 0} {}
  ~CallTimer() {
    call_.end_s = Communicator::now_s();
    calls_.push_back(call_);
  }

 private:
  std::vector<CommCall>& calls_;
  CommCall call_;
};

}  // namespace

int Group::position_of(int rank) const {
  const auto it = std::find(ranks.begin(), ranks.end(), rank);
  return it == ranks.end() ? -1 : static_cast<int>(it - ranks.begin());
}

double Communicator::now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int collective_tag(int group_id, int tag_ub) {
  if (group_id < 0 || group_id > tag_ub) {
    throw std::out_of_range("group id " + std::to_string(group_id) + " has no message tag: tags go up to " +
                            std::to_string(tag_ub) + " (MPI_TAG_UB)");
  }
  return tag_ub - group_id;
}

void check_tag_space(int p2p_tags, int groups, int tag_ub) {
  // In 64 bits: tag_ub may be INT_MAX.
  if (static_cast<long long>(p2p_tags) + groups <= static_cast<long long>(tag_ub) + 1) return;
  throw std::invalid_argument("the run needs " + std::to_string(p2p_tags) + " point-to-point message tags and " +
                              std::to_string(groups) + " for its communication groups, more than the " +
                              std::to_string(tag_ub) + " + 1 this MPI allows (MPI_TAG_UB)");
}

int Communicator::group_tag(const Group& group) const { return collective_tag(group.id, get_tag_ub()); }

void Communicator::check_p2p_tag(int tag) const {
  if (tag < 0 || tag > get_tag_ub()) {
    throw std::out_of_range("message tag " + std::to_string(tag) + " is outside 0.." + std::to_string(get_tag_ub()) +
                            " (MPI_TAG_UB)");
  }
}

void Communicator::send(const float* buf, std::size_t count, int dst, int tag) {
  check_p2p_tag(tag);
  CallTimer t(calls_, "send", count * sizeof(float), dst);
  send_bytes(buf, count * sizeof(float), dst, tag);
}

void Communicator::recv(float* buf, std::size_t count, int src, int tag) {
  check_p2p_tag(tag);
  CallTimer t(calls_, "recv", count * sizeof(float), src);
  recv_bytes(buf, count * sizeof(float), src, tag);
}

void Communicator::probe(int src, int tag) {
  check_p2p_tag(tag);
  CallTimer t(calls_, "probe", 0, src);
  wait_message(src, tag);
}

// Step i: send chunk (pos-i-1) to the right, receive chunk (pos-i-2) from the left and add;
// after n-1 steps this position holds the full sum of its own chunk `pos`.
void Communicator::ring_reduce_scatter(float* work, std::size_t count, const Group& group, int pos) {
  const int n = group.size();
  const int right = group.ranks[(pos + 1) % n];
  const int left = group.ranks[(pos + n - 1) % n];
  const int tag = group_tag(group);
  for (int i = 0; i < n - 1; ++i) {
    const int send_c = ((pos - i - 1) % n + n) % n;
    const int recv_c = ((pos - i - 2) % n + n) % n;
    const std::size_t sb = chunk_begin(count, n, send_c), se = chunk_begin(count, n, send_c + 1);
    const std::size_t rb = chunk_begin(count, n, recv_c), re = chunk_begin(count, n, recv_c + 1);
    send_bytes(work + sb, (se - sb) * sizeof(float), right, tag);
    scratch_.resize(re - rb);
    recv_bytes(scratch_.data(), (re - rb) * sizeof(float), left, tag);
    for (std::size_t j = 0; j < re - rb; ++j) work[rb + j] += scratch_[j];
  }
}

// Step i: send chunk (pos-i) to the right, receive chunk (pos-i-1) from the left in place.
void Communicator::ring_all_gather(float* work, std::size_t count, const Group& group, int pos) {
  const int n = group.size();
  const int right = group.ranks[(pos + 1) % n];
  const int left = group.ranks[(pos + n - 1) % n];
  const int tag = group_tag(group);
  for (int i = 0; i < n - 1; ++i) {
    const int send_c = ((pos - i) % n + n) % n;
    const int recv_c = ((pos - i - 1) % n + n) % n;
    const std::size_t sb = chunk_begin(count, n, send_c), se = chunk_begin(count, n, send_c + 1);
    const std::size_t rb = chunk_begin(count, n, recv_c), re = chunk_begin(count, n, recv_c + 1);
    send_bytes(work + sb, (se - sb) * sizeof(float), right, tag);
    recv_bytes(work + rb, (re - rb) * sizeof(float), left, tag);
  }
}

void Communicator::all_reduce(float* buf, std::size_t count, const Group& group) {
  CallTimer t(calls_, "all_reduce", count * sizeof(float), group.id);
  const int pos = group.position_of(get_rank());
  if (pos < 0) throw std::logic_error("all_reduce: rank " + std::to_string(get_rank()) + " not in group");
  if (group.size() == 1) return;
  ring_reduce_scatter(buf, count, group, pos);
  ring_all_gather(buf, count, group, pos);
}

void Communicator::reduce_scatter(const float* in, float* out, std::size_t count_per_rank, const Group& group) {
  const int n = group.size();
  CallTimer t(calls_, "reduce_scatter", count_per_rank * n * sizeof(float), group.id);
  const int pos = group.position_of(get_rank());
  if (pos < 0) throw std::logic_error("reduce_scatter: rank " + std::to_string(get_rank()) + " not in group");
  const std::size_t total = count_per_rank * n;
  std::vector<float> work(in, in + total);
  ring_reduce_scatter(work.data(), total, group, pos);
  if (count_per_rank > 0) std::memcpy(out, work.data() + count_per_rank * pos, count_per_rank * sizeof(float));
}

void Communicator::all_gather(const float* in, float* out, std::size_t count_per_rank, const Group& group) {
  const int n = group.size();
  CallTimer t(calls_, "all_gather", count_per_rank * n * sizeof(float), group.id);
  const int pos = group.position_of(get_rank());
  if (pos < 0) throw std::logic_error("all_gather: rank " + std::to_string(get_rank()) + " not in group");
  std::memmove(out + count_per_rank * pos, in, count_per_rank * sizeof(float));
  ring_all_gather(out, count_per_rank * n, group, pos);
}

void Communicator::barrier(const Group& group) {
  CallTimer t(calls_, "barrier", 0, group.id);
  float token = 0;
  const int pos = group.position_of(get_rank());
  if (group.size() == 1) return;
  // A one-element all-reduce: nobody leaves before everybody has arrived.
  std::vector<float> work(static_cast<std::size_t>(group.size()), token);
  ring_reduce_scatter(work.data(), work.size(), group, pos);
  ring_all_gather(work.data(), work.size(), group, pos);
}

void write_stderr_line(const std::string& line) {
  const std::string text = line + "\n";
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(STDERR_FILENO, text.data() + written, text.size() - written);
    if (n <= 0) return;  // stderr closed or failing: nothing better to do with a last message
    written += static_cast<std::size_t>(n);
  }
}

}  // namespace hetsim::exec
