// SPDX-License-Identifier: Apache-2.0
// Threads as ranks: mailboxes, failure propagation, the thread launcher.
#include "comm/in_process_communicator.hpp"

#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace hetsim::exec {

void InProcessWorld::post(int src, int dst, int tag, const void* buf, std::size_t size_bytes) {
  if (dst < 0 || dst >= size_) throw std::out_of_range("send: no rank " + std::to_string(dst));
  std::vector<char> message(static_cast<const char*>(buf), static_cast<const char*>(buf) + size_bytes);
  {
    std::lock_guard lock(mutex_);
    mailboxes_[{src, dst, tag}].push_back(std::move(message));
  }
  arrived_[static_cast<std::size_t>(dst)].notify_all();
}

void InProcessWorld::wait_for(int src, int dst, int tag) {
  if (src < 0 || src >= size_) throw std::out_of_range("recv: no rank " + std::to_string(src));
  std::unique_lock lock(mutex_);
  auto& box = mailboxes_[{src, dst, tag}];
  arrived_[static_cast<std::size_t>(dst)].wait(lock, [&] { return !box.empty() || failed_rank_ >= 0; });
  if (box.empty()) {
    throw RankFailure(failed_rank_, "rank " + std::to_string(failed_rank_) + " failed: " + failure_);
  }
}

void InProcessWorld::take(int src, int dst, int tag, void* buf, std::size_t size_bytes) {
  wait_for(src, dst, tag);
  std::unique_lock lock(mutex_);
  auto& box = mailboxes_[{src, dst, tag}];  // not empty: only this rank takes from it
  std::vector<char> message = std::move(box.front());
  box.pop_front();
  lock.unlock();
  if (message.size() != size_bytes) {
    throw std::runtime_error("rank " + std::to_string(dst) + ": message from rank " + std::to_string(src) +
                             " tag " + std::to_string(tag) + " has " + std::to_string(message.size()) +
                             " bytes, expected " + std::to_string(size_bytes));
  }
  if (size_bytes > 0) std::memcpy(buf, message.data(), size_bytes);  // an empty message may carry no buffer
}

double InProcessWorld::get_shared_epoch_s() {
  std::call_once(epoch_once_, [this] { epoch_s_ = Communicator::now_s(); });
  return epoch_s_;
}

void InProcessWorld::fail(int rank, const std::string& why) {
  {
    std::lock_guard lock(mutex_);
    if (failed_rank_ < 0) {
      failed_rank_ = rank;
      failure_ = why;
    }
  }
  for (auto& rank_arrived : arrived_) rank_arrived.notify_all();  // every rank's waits end
}

void InProcessWorld::run(int size, const std::function<void(Communicator&)>& body) {
  InProcessWorld world(size);
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(size));
  std::string not_started;  // why a rank's thread could not be created (thread or memory limits)
  for (int r = 0; r < size && not_started.empty(); ++r) {
    // A std::thread that cannot be created throws; the vector's joinable threads must still be
    // joined (destroying them calls std::terminate): the started ranks are failed and joined.
    try {
      threads.emplace_back([&world, &body, r] {
        InProcessCommunicator comm(world, r);
        try {
          body(comm);
        } catch (const RankFailure&) {
          // a consequence of another rank's failure, which is already recorded
        } catch (const std::bad_alloc&) {
          world.fail(r, "out of host memory (std::bad_alloc): the run needs more memory than this process may use "
                        "(expected fewer micro-batches per step, a smaller model or more memory; `run --out` holds "
                        "a step's op records in memory)");
        } catch (const std::exception& e) {
          world.fail(r, e.what());
        } catch (...) {
          world.fail(r, "unknown exception");
        }
      });
    } catch (const std::system_error& e) {
      not_started = "cannot start the thread of rank " + std::to_string(r) + " of " + std::to_string(size) + ": " +
                    e.what() + " (expected a plan with fewer ranks, which run as threads of this process)";
      world.fail(r, not_started);
    }
  }
  for (auto& t : threads) t.join();
  if (!not_started.empty()) throw std::runtime_error(not_started);
  if (world.failed_rank_ >= 0) {
    throw RankFailure(world.failed_rank_,
                      "rank " + std::to_string(world.failed_rank_) + " failed: " + world.failure_);
  }
}

void InProcessCommunicator::send_bytes(const void* buf, std::size_t size_bytes, int dst, int tag) {
  world_.post(rank_, dst, tag, buf, size_bytes);
}

void InProcessCommunicator::recv_bytes(void* buf, std::size_t size_bytes, int src, int tag) {
  world_.take(src, rank_, tag, buf, size_bytes);
}

void InProcessCommunicator::wait_message(int src, int tag) { world_.wait_for(src, rank_, tag); }

}  // namespace hetsim::exec
