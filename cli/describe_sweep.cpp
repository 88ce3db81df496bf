// SPDX-License-Identifier: Apache-2.0
#include "describe_sweep.hpp"

#include "catalog.hpp"
#include "cli_common.hpp"
#include "text_match.hpp"
#include "units.hpp"

namespace hetsim::cli {

models::SweepSpec load_checked_sweep(const std::string& path) {
  return models::load_sweep_inputs(path, models::Catalog::builtin()).spec;
}

namespace {

/// The planner's search space at every point: the spec's `search:` over the defaults.
models::PlannerOptions searched(const models::SweepSpec& s) {
  models::PlannerOptions po;
  s.search.apply_to(po);
  return po;
}

}  // namespace

void print_sweep(const models::SweepSpec& s, std::ostream& out) {
  out << "sweep " << s.name << " (" << s.file << ")\n";
  out << "  cluster    " << s.cluster_path << "\n";
  for (size_t w = 0; w < s.workload_paths.size(); ++w)
    out << (w == 0 ? "  workloads  " : "             ") << s.workload_paths[w] << "\n";
  out << "  objective  " << models::to_string(s.objective);
  if (s.objective == models::PlanObjective::kBudget) out << ", at most " << format_price_per_hour(s.budget_per_hour);
  out << (s.spot ? ", spot prices" : "") << "\n";
  const models::PlannerOptions po = searched(s);
  std::string recompute;
  for (models::Recompute r : po.recomputes) recompute += (recompute.empty() ? "" : ", ") + std::string(models::to_string(r));
  out << "  search     TP " << models::join_numbers(po.tp_degrees) << "; micro-batch " << models::join_numbers(po.micro_batches) << "; interleave "
      << models::join_numbers(po.interleaves) << "; recompute " << recompute << "; ZeRO " << models::join_numbers(po.zero_stages)
      << (po.sequence_parallel ? "" : "; no sequence parallelism")
      << (s.tp_comm_overlap ? "; TP comm overlapped" : "") << (s.overlap_p2p_comm ? "; p2p overlapped" : "")
      << (s.one_vendor ? "; one vendor per plan" : "") << "\n";
  TextTable t({"axis", "values"});
  t.left_align(1);
  for (const models::SweepAxis& a : s.axes) {
    std::string values;
    for (const std::string& v : a.labels) values += (values.empty() ? "" : ", ") + v;
    t.add_row({a.column(), values});
  }
  if (!s.axes.empty()) t.print(out, "  ");
  out << "  grid: " << s.point_count() << " points x " << s.workload_paths.size() << " workloads = "
      << s.point_count() * static_cast<long>(s.workload_paths.size()) << " planner searches\n";
}

void json_sweep(models::JsonOut& j, const models::SweepSpec& s) {
  j.key("name").value(s.name).key("cluster").value(s.cluster_path);
  j.key("workloads").begin_array();
  for (const std::string& w : s.workload_paths) j.value(w);
  j.end_array();
  j.key("objective").value(models::to_string(s.objective)).key("budget_per_hour");
  if (s.objective == models::PlanObjective::kBudget) j.value(s.budget_per_hour);
  else j.null();  // no budget: not "$0/h"
  j.key("spot").value(s.spot);
  const models::PlannerOptions po = searched(s);
  j.key("search");
  models::write_search_space_json(j, po);
  j.key("tp_comm_overlap").value(s.tp_comm_overlap).key("overlap_p2p_comm").value(s.overlap_p2p_comm);
  j.key("one_vendor").value(s.one_vendor);
  j.key("axes").begin_array();
  for (const models::SweepAxis& a : s.axes) {
    j.begin_object().key("column").value(a.column()).key("kind").value(models::to_string(a.kind));
    j.key("values").begin_array();
    for (const std::string& v : a.labels) j.value(v);
    j.end_array().end_object();
  }
  j.end_array().key("points").value(static_cast<long long>(s.point_count()));
}

}  // namespace hetsim::cli
