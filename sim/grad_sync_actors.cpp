// SPDX-License-Identifier: Apache-2.0
// Gradient sync actors and bucket releases (grad_sync_actors.hpp).
#include "grad_sync_actors.hpp"

#include <algorithm>

#include "step_cost.hpp"

namespace hetsim::sim {

BucketReleases::BucketReleases(const SimLayout& lay, Runtime& rt, int actor, int chunks) : chunks_(std::max(1, chunks)) {
  const int c = lay.actors[actor].component;
  if (c < 0) return;
  const DpComponent& spec = lay.components[c];
  for (std::size_t k = 0; k < spec.classes.size(); ++k) {
    const DpSyncClass& cls = spec.classes[k];
    const int m = cls.member_index(actor);
    if (m < 0) continue;
    const double from = cls.ready_from[static_cast<std::size_t>(m)], to = cls.ready_to[static_cast<std::size_t>(m)];
    SyncClassRt& run = rt.components_[c].classes[k];
    classes_.push_back(&run);
    const int b = run.buckets;
    for (int i = 0; i < b; ++i) {
      const bool last = i == b - 1;
      if (chunks_ > 1) {  // windows are whole stages here (DpSegments::backward_window)
        const models::BucketChunkPoint at = models::bucket_chunk_point(i, b, chunks_);
        events_.push_back({at.order, at.into, at.into >= 1 - 1e-12, run.bucket_ready[i]});
        continue;
      }
      events_.push_back({0, last ? to : from + (to - from) * (i + 1) / b, last && to >= 1, run.bucket_ready[i]});
    }
  }
  // In the order the passes produce them; a class's own buckets keep theirs.
  std::stable_sort(events_.begin(), events_.end(), [](const Event& x, const Event& y) {
    if (x.order != y.order) return x.order < y.order;
    return x.at_end != y.at_end ? y.at_end : x.fraction < y.fraction;
  });
}

bool BucketReleases::next_inside(double total_s, int chunk, double& at_s) const {
  if (next_ >= events_.size() || events_[next_].at_end || events_[next_].order != order_of(chunk)) return false;
  at_s = total_s * events_[next_].fraction;
  return true;
}

void sync_class_actor(Runtime& rt, const DpSyncClass& spec, SyncClassRt& cls) {
  const int n = static_cast<int>(spec.actors.size());
  if (cls.buckets > 1 && rt.one_dataflow_run(spec.grad_phases)) {
    // A ring's unmerged steps (hops of unequal latency): its buckets back to back as one
    // dataflow, each rank going on to the next bucket when it and the rank it sends to are done
    // with the last and the bucket is released, not when every ring of the class is (BucketGate).
    rt.run_bucketed_dataflow(spec.grad_phases, cls.buckets, [&cls, n](int k) {
      for (int i = 0; i < n; ++i) cls.bucket_ready[k]->acquire();
    });
  } else {
    // A bucket already released when the one before ends follows it back to back: the buckets'
    // steps then make one dataflow, whose latency a step is the ring's mean (FoldedPhase::delay_s).
    for (int k = 0; k < cls.buckets; ++k) {
      const double before_s = sg4::Engine::get_clock();
      for (int i = 0; i < n; ++i) cls.bucket_ready[k]->acquire();
      const bool back_to_back = k > 0 && sg4::Engine::get_clock() == before_s;
      rt.run_phases(spec.grad_phases, 1.0 / cls.buckets, true, back_to_back);
    }
  }
  for (int i = 0; i < n; ++i) cls.grads_done->release();
}

void param_gather_actor(Runtime& rt, const DpSyncClass& spec, SyncClassRt& cls) {
  const int n = static_cast<int>(spec.actors.size());
  for (int i = 0; i < n; ++i) cls.optimizer_done->acquire();
  rt.run_phases(spec.param_phases, 1.0);
  for (int i = 0; i < n; ++i) cls.params_done->release();
}

}  // namespace hetsim::sim
