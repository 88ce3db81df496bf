// SPDX-License-Identifier: Apache-2.0
// RankRunner: set-up, the step loop, tied-embedding sync, communicator calls on device buffers.
#include "runner/rank_runner.hpp"

#include <algorithm>
#include <csignal>
#include <stdexcept>

#include "runner/rank_runner_detail.hpp"

namespace hetsim::exec {

RankRunner::RankRunner(const RankLayout& layout, const models::Workload& workload, const models::Plan& plan,
                       Backend& backend, Communicator& comm, RunOptions options)
    : layout_(layout), model_(workload.model), plan_(plan), backend_(backend), comm_(comm),
      options_(std::move(options)), rank_(comm.get_rank()) {
  if (comm_.get_size() != layout_.get_world_size()) {
    throw std::invalid_argument("the plan needs " + std::to_string(layout_.get_world_size()) + " ranks, the communicator has " +
                                std::to_string(comm_.get_size()));
  }
  if (model_.kv_heads <= 0) model_.kv_heads = model_.heads;
  if (model_.ffn_hidden <= 0) model_.ffn_hidden = 4 * model_.hidden;
  place_ = layout_.place(rank_);
  if (sequence_parallel(place_.stage) && (plan_.micro_batch * model_.seq_len) % place_.tp != 0) {
    throw std::invalid_argument("sequence parallelism needs micro_batch * seq_len (" +
                                std::to_string(plan_.micro_batch * model_.seq_len) + ") divisible by tp (" +
                                std::to_string(place_.tp) + ")");
  }
  params_ = rank_parameters(layout_, model_, rank_);
  for (const auto& p : params_.params) {
    if (p.canonical) by_name_[p.name] = &p;
  }
  schedule_ = build_schedule(plan_.schedule, layout_.replica_pp(place_.replica), place_.stage, layout_.micro_batches(place_.replica),
                             layout_.get_interleave());
  tokens_per_micro_batch_ = plan_.micro_batch * model_.seq_len;
  loss_scale_ = 1.0 / (static_cast<double>(layout_.global_micro_batches()) * tokens_per_micro_batch_);

  // Parameters: initialise the full-tensor values of this rank's shards on the host, upload.
  weights_ = DeviceArray<float>(backend_, params_.total);
  grads_ = DeviceArray<float>(backend_, params_.total);
  {
    std::vector<float> host(params_.total, 0.0f);
    for (const auto& p : params_.params) {
      for (int r = 0; r < p.rows; ++r) {
        for (int c = 0; c < p.cols; ++c) {
          host[p.offset + static_cast<std::size_t>(r) * p.cols + c] =
              initial_value(p, p.row_offset + r, p.col_offset + c, options_.seed);
        }
      }
    }
    backend_.upload(weights_.get(), host.data(), host.size());
  }
  // Adam moments: whole buckets (ZeRO-0) or this rank's shard of each bucket (ZeRO-1/2).
  std::size_t adam_total = 0, max_shard = 0;
  for (const auto& b : params_.buckets) {
    adam_offset_.push_back(adam_total);
    const std::size_t n = static_cast<std::size_t>(layout_.dp_group(b.first_unit, b.shard).size());
    std::size_t held = b.count;                    // ZeRO-0: the whole bucket
    if (plan_.zero >= 1) {
      held = b.count / n;                          // this rank's shard of the (packed) bucket
    } else if (b.is_packed()) {
      held = b.part + 1 == b.parts ? b.region_count : 0;  // Adam runs once over the region
    }
    adam_total += held;
    max_shard = std::max(max_shard, b.count / n);
  }
  adam_m_ = DeviceArray<float>(backend_, adam_total);
  adam_v_ = DeviceArray<float>(backend_, adam_total);
  backend_.fill(adam_m_.get(), adam_total, 0.0f);
  backend_.fill(adam_v_.get(), adam_total, 0.0f);
  if (plan_.zero >= 1) shard_grad_ = DeviceArray<float>(backend_, max_shard);
  const bool any_packed = std::any_of(params_.buckets.begin(), params_.buckets.end(),
                                      [](const Bucket& b) { return b.is_packed(); });
  if (plan_.zero >= 1 && plan_.zero <= 2 && any_packed) shard_weight_ = DeviceArray<float>(backend_, max_shard);
  if (zero3()) zero3_init();
  else if (plan_.zero == 2) sharded_gradients_init();

  // Block weights of every layer this rank holds.
  for (const auto& cp : layout_.chunks(place_.replica, place_.stage)) {
    for (int l = cp.first_layer; l < cp.first_layer + cp.layers; ++l) {
      const std::string pre = "layers." + std::to_string(l) + ".";
      auto find = [&](const std::string& n) { return by_name_.at(pre + n); };
      LayerWeights w;
      w.ln1_gamma = find("ln1.gamma");
      w.ln1_beta = find("ln1.beta");
      w.wq = find("attn.wq");
      w.wk = find("attn.wk");
      w.wv = find("attn.wv");
      w.wo = find("attn.wo");
      w.ln2_gamma = find("ln2.gamma");
      w.ln2_beta = find("ln2.beta");
      if (model_.activation == models::Activation::kSwiglu) {
        w.w1 = find("mlp.wgate");
        w.wup = find("mlp.wup");
      } else {
        w.w1 = find("mlp.w1");
      }
      w.w2 = find("mlp.w2");
      layer_weights_[l] = w;
    }
  }
  // One epoch for all ranks where they share a clock: a thread descheduled just after the
  // barrier would otherwise start its clock late, and its op times would look early next to
  // another rank's (measurements are merged and compared across ranks).
  comm_.barrier(layout_.world());
  epoch_s_ = comm_.get_shared_epoch_s().value_or(Communicator::now_s());
}

RankRunner::~RankRunner() {
  for (auto& [key, acts] : saved_) delete acts;
}

float* RankRunner::param(const std::string& name) const { return weights_.get() + by_name_.at(name)->offset; }
float* RankRunner::grad(const std::string& name) const { return grads_.get() + by_name_.at(name)->offset; }

Measurement RankRunner::make_record(const char* phase, const char* op, OpClass c, int micro_batch, int chunk) const {
  Measurement m;
  m.step = step_;
  m.rank = rank_;
  m.replica = place_.replica;
  m.stage = place_.stage;
  m.chunk = chunk;
  m.micro_batch = micro_batch;
  m.phase = phase;
  m.op = op;
  m.op_class = c;
  return m;
}

void RankRunner::maybe_fail() {
  if (rank_ != options_.fail_rank || step_ != options_.fail_step) return;
  if (options_.fail_mode == "kill") {
    // SIGKILL gives no chance to say why, and in-process the ranks are this process's threads,
    // so the whole run ends (exit 137) with nothing printed: say it first (s60 walkthrough).
    write_stderr_line("hetsim run: rank " + std::to_string(rank_) + " kills its process at step " +
                      std::to_string(step_) + " (--inject-fault " + std::to_string(rank_) + ":kill:" +
                      std::to_string(step_) + ")");
    std::raise(SIGKILL);
  }
  throw std::runtime_error("injected fault at step " + std::to_string(step_));
}

void RankRunner::after_action() {
  if (deferred_error_) std::rethrow_exception(std::exchange(deferred_error_, nullptr));
  if (records_sink_ && measurements_.size() >= records_batch_) records_sink_(measurements_);
}

StepResult RankRunner::step() {
  ++step_;
  maybe_fail();
  comm_.barrier(layout_.world());
  const double start = Communicator::now_s();
  backend_.fill(grads_.get(), params_.total, 0.0f);
  if (plan_.zero >= 2) {
    backend_.fill(grad_shard_.get(), grad_shard_.size(), 0.0f);
    if (options_.capture_gradients) captured_acc_.assign(params_.total, 0.0f);
  }
  loss_sum_ = 0;
  for (const Action& a : schedule_) {
    if (a.kind == Action::Kind::kForward) forward(a.micro_batch, a.chunk);
    else backward(a.micro_batch, a.chunk);
    after_action();
  }
  if (zero3()) {
    zero3_sync_and_update();
  } else {
    sync_sequence_parallel_norms([](int) { return true; });
    sync_tied_embedding();
    if (options_.capture_gradients) {
      captured_grads_ = backend_.to_host(grads_.get(), params_.total);
      // ZeRO-2: the micro-batches reduced in their backward passes (reduce_chunk_gradients).
      for (std::size_t k = 0; k < captured_acc_.size(); ++k) captured_grads_[k] += captured_acc_[k];
    }
    sync_gradients_and_update();
  }
  float loss = static_cast<float>(loss_sum_);
  wait_for_group(layout_.world(), "loss_wait");
  {
    OpTimer t(*this, "grad_sync", "loss_all_reduce", OpClass::kDpComm, -1, -1, bytes_shape(1));
    comm_.all_reduce(&loss, 1, layout_.world());
  }
  after_action();
  const double end = Communicator::now_s();
  Measurement m = make_record("step", "step", OpClass::kCompute, -1, -1);
  m.start_s = start - epoch_s_;
  m.end_s = end - epoch_s_;
  measurements_.push_back(m);
  return {loss * loss_scale_, end - start};
}

void RankRunner::tp_all_reduce(float* buf, std::size_t count, int micro_batch, int chunk, const char* phase,
                               const char* op) {
  if (place_.tp == 1) return;
  OpTimer t(*this, phase, op, OpClass::kTpComm, micro_batch, chunk, bytes_shape(count));
  device_all_reduce(buf, count, layout_.tp_group(place_.replica, place_.stage));
}

// Before a gradient sync, the members of its group finish their pipelines at different times:
// a barrier first, timed as bubble, so that the sync's own time is communication only (as the
// cost model's dp_comm, models/report.hpp; Megatron-LM's timers take the same barrier before
// timing a collective, megatron/core/timers.py `barrier=True`).
void RankRunner::wait_for_group(const Group& group, const char* op, const char* phase, int micro_batch, int chunk) {
  if (group.size() < 2) return;
  OpTimer t(*this, phase, op, OpClass::kBubble, micro_batch, chunk, "");
  comm_.barrier(group);
}

// With sequence parallelism each TP rank saw only its rows in the LayerNorms, so their
// gradients are partial sums over the TP group (Korthikanti et al. 2022, section 4.2.2).
void RankRunner::sync_sequence_parallel_norms(const std::function<bool(int unit)>& pick) {
  if (!sequence_parallel(place_.stage)) return;
  for (const auto& p : params_.params) {
    if (p.name.find("ln") == std::string::npos || p.rows != 1) continue;  // ln1/ln2/final.ln gamma and beta
    if (!pick(p.unit)) continue;
    OpTimer t(*this, "grad_sync", "tp_norm_all_reduce", OpClass::kTpComm, -1, -1, bytes_shape(p.count()));
    device_all_reduce(grads_.get() + p.offset, p.count(), layout_.tp_group(place_.replica, place_.stage));
  }
}

// Tied word embedding on two stages: both copies get the sum of both gradients (Megatron-LM's
// embedding group). Every TP rank of both stages holds an identical copy, so each contributes
// its gradient divided by its stage's TP size and one all-reduce over all of them gives the sum.
void RankRunner::sync_tied_embedding() {
  if (!layout_.has_tied_copy(place_.replica)) return;
  const int last = layout_.replica_pp(place_.replica) - 1;
  if (place_.stage != 0 && place_.stage != last) return;
  if (last == 0) {
    // One stage beside deeper replicas: both copies are on this rank, each whole; sum them here.
    float* copies[2] = {nullptr, nullptr};
    for (const auto& p : params_.params)
      if (p.name == "embed.wte") copies[p.canonical ? 0 : 1] = grads_.get() + p.offset;
    const std::size_t count = by_name_.at("embed.wte")->count();
    OpTimer t(*this, "grad_sync", "tied_embedding_sum", OpClass::kDpComm, -1, -1, bytes_shape(count));
    backend_.axpy(count, 1.0f, copies[1], copies[0]);
    backend_.copy_bytes(copies[1], copies[0], count * sizeof(float));
    return;
  }
  const ParamSpec* spec = nullptr;
  for (const auto& p : params_.params) {
    if (p.name == "embed.wte" && (place_.stage == 0 ? p.canonical : !p.canonical)) spec = &p;
  }
  float* g = grads_.get() + spec->offset;
  wait_for_group(layout_.tie_group(place_.replica), "tied_embedding_wait");
  OpTimer t(*this, "grad_sync", "tied_embedding_all_reduce", OpClass::kDpComm, -1, -1, bytes_shape(spec->count()));
  backend_.scale(spec->count(), 1.0f / static_cast<float>(place_.tp), g);
  device_all_reduce(g, spec->count(), layout_.tie_group(place_.replica));
}

void RankRunner::device_send(const float* buf, std::size_t count, int dst, int tag) {
  if (backend_.is_host_memory()) return comm_.send(buf, count, dst, tag);
  staging_.resize(count);
  backend_.download(staging_.data(), buf, count);
  comm_.send(staging_.data(), count, dst, tag);
}

void RankRunner::device_recv(float* buf, std::size_t count, int src, int tag) {
  if (backend_.is_host_memory()) return comm_.recv(buf, count, src, tag);
  staging_.resize(count);
  comm_.recv(staging_.data(), count, src, tag);
  backend_.upload(buf, staging_.data(), count);
}

void RankRunner::device_all_reduce(float* buf, std::size_t count, const Group& group) {
  if (backend_.is_host_memory()) return comm_.all_reduce(buf, count, group);
  staging_.resize(count);
  backend_.download(staging_.data(), buf, count);
  comm_.all_reduce(staging_.data(), count, group);
  backend_.upload(buf, staging_.data(), count);
}

void RankRunner::device_reduce_scatter(const float* in, float* out, std::size_t count_per_rank, const Group& group) {
  if (backend_.is_host_memory()) return comm_.reduce_scatter(in, out, count_per_rank, group);
  const std::size_t total = count_per_rank * static_cast<std::size_t>(group.size());
  staging_.resize(total);
  staging_out_.resize(count_per_rank);
  backend_.download(staging_.data(), in, total);
  comm_.reduce_scatter(staging_.data(), staging_out_.data(), count_per_rank, group);
  backend_.upload(out, staging_out_.data(), count_per_rank);
}

void RankRunner::device_all_gather(const float* in, float* out, std::size_t count_per_rank, const Group& group) {
  if (backend_.is_host_memory()) return comm_.all_gather(in, out, count_per_rank, group);
  const std::size_t total = count_per_rank * static_cast<std::size_t>(group.size());
  staging_.resize(count_per_rank);
  staging_out_.resize(total);
  backend_.download(staging_.data(), in, count_per_rank);
  comm_.all_gather(staging_.data(), staging_out_.data(), count_per_rank, group);
  backend_.upload(out, staging_out_.data(), total);
}

std::vector<float> RankRunner::get_parameter_values() {
  if (zero3()) {
    for (std::size_t c = 0; c < chunk_buckets_.size(); ++c) gather_chunk_weights(-1, static_cast<int>(c), "capture");
  }
  return backend_.to_host(weights_.get(), params_.total);
}

}  // namespace hetsim::exec
