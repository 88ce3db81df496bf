// SPDX-License-Identifier: Apache-2.0
// Loader of `kind: plan` files (docs/inputs.md): replicas of pipelines of stages on GPUs.
// GPU selectors are resolved against the cluster (Cluster::resolve_gpus) and the plan is
// cross-checked with check_plan(); each problem is reported at the line of its field.
#include <cctype>
#include <algorithm>
#include <optional>
#include <regex>

#include "loader_common.hpp"

namespace hetsim::models {
namespace {

using detail::set_if;

constexpr int kMaxInterleave = 1024;

const EnumTable<Schedule>& schedule_table() {
  static const EnumTable<Schedule> t = {
      {"gpipe", Schedule::kGpipe}, {"1f1b", Schedule::k1f1b}, {"interleaved", Schedule::kInterleaved}};
  return t;
}

const EnumTable<GradSyncAlgorithm>& grad_sync_table() {
  static const EnumTable<GradSyncAlgorithm> t = {{"auto", GradSyncAlgorithm::kAuto},
                                                 {"ring", GradSyncAlgorithm::kRing},
                                                 {"tree", GradSyncAlgorithm::kTree},
                                                 {"hierarchical", GradSyncAlgorithm::kHierarchical}};
  return t;
}


class PlanReader {
 public:
  PlanReader(DiagnosticSink& sink, const Cluster* cluster) : sink_(sink), cluster_(cluster) {}

  PlanSpec read(MapReader& root) {
    Plan& plan = spec_.plan;
    set_if(plan.name, root.get_string("name", Need::kOptional));
    set_if(plan.micro_batch, root.get_int("micro_batch", Need::kRequired, 1, 1 << 24));
    set_if(plan.schedule, root.get_enum("schedule", Need::kOptional, schedule_table()));
    set_if(plan.interleave, root.get_int("interleave", Need::kOptional, 1, kMaxInterleave));
    set_if(plan.recompute, root.get_enum("recompute", Need::kOptional, detail::recompute_table()));
    set_if(plan.sequence_parallel, root.get_bool("sequence_parallel", Need::kOptional));
    set_if(plan.zero, root.get_int("zero", Need::kOptional, 0, 3));
    set_if(plan.grad_sync, root.get_enum("grad_sync", Need::kOptional, grad_sync_table()));
    set_if(plan.overlap_grad_sync, root.get_bool("overlap_grad_sync", Need::kOptional));
    set_if(plan.tp_comm_overlap, root.get_bool("tp_comm_overlap", Need::kOptional));
    set_if(plan.overlap_p2p_comm, root.get_bool("overlap_p2p_comm", Need::kOptional));
    const auto prefetch = root.get_bool("zero3_prefetch", Need::kOptional);
    set_if(plan.zero3_prefetch, prefetch);
    const auto sharded = root.get_enum("sharded_collectives", Need::kOptional, detail::sharded_collectives_table());
    set_if(plan.sharded_collectives, sharded);
    if (auto replicas = root.get_list("replicas", Need::kRequired, 1)) {
      for (size_t r = 0; r < replicas->size(); ++r)
        read_replica((*replicas)[r], index_path("replicas", r), root.value_mark_of("replicas"));
    }
    root.finish();
    // What follows are combinations of values read as written: they do not stop the cross-checks.
    value_errors_ = sink_.get_diagnostics().size();
    for (const FlagConflict& c : flag_conflicts(plan)) sink_.error(root.value_mark_of(c.field), c.field, c.message);
    if (prefetch && plan.zero != 3)
      sink_.error(root.value_mark_of("zero3_prefetch"), "zero3_prefetch",
                  "prefetching gathers weights that only ZeRO-3 shards (expected zero: 3, or no zero3_prefetch)");
    if (sharded && plan.zero < 2)
      sink_.error(root.value_mark_of("sharded_collectives"), "sharded_collectives",
                  "only ZeRO-2 and ZeRO-3 run per-pass sharded collectives (expected zero: 2 or 3, or no "
                  "sharded_collectives)");

    return std::move(spec_);
  }

  /// How many diagnostics reading the values gave (those after are combinations of read values).
  std::size_t value_errors() const { return value_errors_; }

 private:
  void read_replica(const YAML::Node& node, const std::string& path, const YAML::Mark& list_mark) {
    MapReader r(node, path, sink_, value_mark(node, list_mark));
    Replica replica;
    set_if(replica.micro_batches, r.get_int("micro_batches", Need::kRequired, 1, 1 << 24));
    std::vector<std::string> texts;
    if (auto stages = r.get_list("stages", Need::kRequired, 1)) {
      for (size_t s = 0; s < stages->size(); ++s) {
        const YAML::Node& sn = (*stages)[s];
        MapReader st(sn, index_path(r.field("stages"), s), sink_, value_mark(sn, r.value_mark_of("stages")));
        Stage stage;
        set_if(stage.layers, st.get_int("layers", Need::kRequired, 1, 100000));
        std::string text;
        if (auto gpus = st.get_node("gpus", Need::kRequired, "a GPU selector such as \"zone/type[0]/gpu[0-7]\" or a list of them")) {
          text = read_gpus(*gpus, st.field("gpus"), st.value_mark_of("gpus"), stage.gpus);
        }
        st.finish();
        replica.stages.push_back(std::move(stage));
        texts.push_back(std::move(text));
      }
    }
    r.finish();
    spec_.plan.replicas.push_back(std::move(replica));
    spec_.gpus_text.push_back(std::move(texts));
  }

  /// Reads a stage's `gpus` (selector, or list of selectors / global indices); appends the
  /// resolved indices when a cluster is known, else only the integers. Returns the text as written.
  std::string read_gpus(const YAML::Node& node, const std::string& field, const YAML::Mark& at, std::vector<int>& out) {
    if (node.IsScalar() && node.Tag() == "!") {  // a quoted selector
      resolve(node.Scalar(), field, at, out);
      return node.Scalar();
    }
    if (node.IsScalar() && is_yaml_boolean(node.Scalar())) {  // `gpus: true` read as a node type 'true'
      sink_.error(at, field, "expected a GPU selector such as \"zone/type[0]/gpu[0-7]\" or a list of them, got the "
                             "boolean " + describe_node(node) + " (quote it if it names a node type)");
      return node.Scalar();
    }
    if (node.IsScalar()) {  // plain: an integer index or an unquoted selector
      const auto& t = node.Scalar();
      if (!t.empty() && std::isdigit(static_cast<unsigned char>(t[0])) && t.find_first_not_of("0123456789") == std::string::npos) {
        add_index(node, field, at, out);
      } else {
        resolve(t, field, at, out);
      }
      return t;
    }
    if (!node.IsSequence() || node.size() == 0) {
      sink_.error(at, field, "expected a GPU selector such as \"zone/type[0]/gpu[0-7]\" or a non-empty list, got " +
                                 (node.IsSequence() ? std::string("an empty list") : describe_node(node)));
      return "";
    }
    std::string text = "[";
    const std::size_t kept = out.size(), errors = sink_.get_diagnostics().size();
    for (size_t i = 0; i < node.size(); ++i) {
      const YAML::Node& e = node[i];
      const std::string ef = index_path(field, i);
      const YAML::Mark em = value_mark(e, at);
      if (i > 0) text += ", ";
      if (e.IsScalar() && e.Tag() != "!" && !e.Scalar().empty() &&
          e.Scalar().find_first_not_of("0123456789-+") == std::string::npos) {
        add_index(e, ef, em, out);
      } else if (e.IsScalar()) {
        resolve(e.Scalar(), ef, em, out);
      } else {
        sink_.error(em, ef, "expected a GPU index or selector, got " + describe_node(e));
      }
      text += e.IsScalar() ? e.Scalar() : "?";
    }
    // An entry in error leaves the stage without GPUs, as a selector in error does: check_plan()
    // then skips the stage instead of reporting on the entries left ("tp 3 does not divide the
    // heads" of a stage written with four GPUs).
    if (sink_.get_diagnostics().size() != errors) out.resize(kept);
    return text + "]";
  }

  /// A plain scalar YAML reads as a boolean (1.2's true/false, 1.1's yes/no/on/off, any case).
  static bool is_yaml_boolean(std::string text) {
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const char* b : {"true", "false", "yes", "no", "on", "off"})
      if (text == b) return true;
    return false;
  }

  void add_index(const YAML::Node& node, const std::string& field, const YAML::Mark& at, std::vector<int>& out) {
    const long long max = cluster_ ? cluster_->gpu_count() - 1LL : (1LL << 20);
    if (cluster_ && cluster_->gpu_count() == 0) return;
    const auto v = read_integer(node, field, at, sink_, 0, max);
    if (v) out.push_back(static_cast<int>(*v));
  }

  void resolve(const std::string& selector, const std::string& field, const YAML::Mark& at, std::vector<int>& out) {
    if (cluster_ == nullptr) {  // resolved later, when a cluster is given; what no cluster can mend is said now
      if (const std::string why = backwards_range_problem(selector); !why.empty()) sink_.error(at, field, why);
      return;
    }
    std::string error;
    const auto gpus = cluster_->resolve_gpus(selector, &error);
    if (!gpus) {
      sink_.error(at, field, error.empty() ? "cannot resolve GPU selector '" + selector + "'" : error);
      return;
    }
    out.insert(out.end(), gpus->begin(), gpus->end());
  }

  DiagnosticSink& sink_;
  const Cluster* cluster_;
  PlanSpec spec_;
  std::size_t value_errors_ = 0;
};

/// The plan as read; `value_errors`, when given, gets how many of the sink's diagnostics are
/// errors of reading a value (the rest, combinations of values read as written).
PlanSpec read_plan_spec(std::string_view text, DiagnosticSink& sink, const Cluster* cluster,
                        std::size_t* value_errors = nullptr) {
  PlanSpec spec;
  std::optional<PlanReader> reader;
  if (auto root = detail::open_document(text, sink, InputKind::kPlan)) spec = reader.emplace(sink, cluster).read(*root);
  if (value_errors) *value_errors = reader ? reader->value_errors() : sink.get_diagnostics().size();
  return spec;
}

/// Whether `field` is a stage's `gpus` ("replicas[0].stages[1].gpus").
bool is_gpus_field(const std::string& field) {
  return field.size() >= 5 && field.compare(field.size() - 5, 5, ".gpus") == 0;
}

/// Whether a reader error left every value check_plan() reads as written: an unknown key (the
/// value of a misspelt key is not read, so its field keeps its default, as without the key) or a
/// GPU selector that did not resolve (its stage's GPUs, which check_plan() then skips).
bool keeps_values_checkable(const Diagnostic& d) {
  const bool gpus_field = is_gpus_field(d.field) || d.field.find(".gpus[") != std::string::npos;
  return d.message.rfind("unknown key", 0) == 0 || gpus_field;
}

/// Whether `field` is `errored` or lies under it ("a.gpus[1]" under "a.gpus").
bool within(const std::string& field, const std::string& errored) {
  return !errored.empty() && field.compare(0, errored.size(), errored) == 0 &&
         (field.size() == errored.size() || field[errored.size()] == '.' || field[errored.size()] == '[');
}

/// Whether a check_plan() message is a degree that does not divide what it splits: a TP degree
/// and a dimension of the model, or an interleave factor and a stage's layers. The plan is well
/// formed but infeasible for this workload, a result with a reason (as the `--tp` and
/// `--interleave` shorthands report it), not an error of the file.
bool is_degree_not_dividing(const std::string& message) {
  return message.find(" does not divide model.") != std::string::npos ||
         message.find(" do not divide one another") != std::string::npos ||
         message.find(" is not divisible by interleave (") != std::string::npos;
}

/// A check message deferred as the plan's infeasibility: where, and what.
struct Deferred {
  YAML::Mark at;
  std::string field, message;
};

/// check_plan() messages read "field.path: what (expected ...)"; put each at its field's mark,
/// except those on a field the reader already reported (they would repeat its error). With
/// `deferred`, the degrees that do not divide go there instead (is_degree_not_dividing).
void report_check_messages(const std::vector<std::string>& messages, DiagnosticSink& sink,
                           std::vector<Deferred>* deferred = nullptr) {
  static const std::regex kField(R"(^([A-Za-z_][A-Za-z0-9_]*(\[[0-9]+\])*(\.[A-Za-z_][A-Za-z0-9_]*(\[[0-9]+\])*)*): (.*)$)");
  std::vector<std::string> errored;
  for (const Diagnostic& d : sink.get_diagnostics()) errored.push_back(d.field);
  for (const auto& m : messages) {
    std::smatch match;
    if (std::regex_match(m, match, kField)) {
      const std::string field = match[1];
      // Nor on a stage's `gpus` one of whose entries the reader reported (the stage has no GPUs then).
      const bool gpus = is_gpus_field(field);
      if (std::any_of(errored.begin(), errored.end(),
                      [&](const std::string& e) { return within(field, e) || (gpus && within(e, field)); }))
        continue;
      YAML::Mark at = sink.locate(field);
      if (at.line < 0) at = sink.locate("kind");
      if (deferred && is_degree_not_dividing(match[5])) deferred->push_back({at, field, match[5]});
      else sink.error(at, field, match[5]);
    } else {
      sink.error(sink.locate("kind"), "", m);
    }
  }
}

}  // namespace

PlanSpec parse_plan_spec(std::string_view text, const std::string& name) {
  DiagnosticSink sink(name);
  PlanSpec spec = read_plan_spec(text, sink, nullptr);
  sink.throw_if_any();
  return spec;
}

PlanSpec load_plan_spec(const std::string& path) { return parse_plan_spec(detail::read_file_or_throw(path), path); }

Plan parse_plan(std::string_view text, const Cluster& cluster, const Workload& workload, const std::string& name,
                std::string* infeasible_reason) {
  DiagnosticSink sink(name);
  std::size_t value_errors = 0;
  PlanSpec spec = read_plan_spec(text, sink, &cluster, &value_errors);
  // Cross-checks (layer and batch sums, GPUs used twice, ...) run when the reader's errors left
  // the values they read as written, so that a file's errors are reported at once: a selector
  // out of range no longer hides a layer sum, nor a setting that needs ZeRO-3 (s58 docs hunt).
  // After any other error (a value that did not read) they would report on defaults, not on what
  // was written.
  const auto& read_errors = sink.get_diagnostics();
  std::vector<Deferred> deferred;
  if (std::all_of(read_errors.begin(), read_errors.begin() + std::min(value_errors, read_errors.size()),
                  keeps_values_checkable))
    report_check_messages(check_plan(spec.plan, cluster, workload), sink, infeasible_reason ? &deferred : nullptr);
  // A file with errors reports them all, the degrees among them.
  if (!sink.empty())
    for (const Deferred& d : deferred) sink.error(d.at, d.field, d.message);
  sink.throw_if_any();
  if (infeasible_reason) {
    infeasible_reason->clear();
    for (const Deferred& d : deferred) {
      if (!infeasible_reason->empty()) *infeasible_reason += "; ";
      *infeasible_reason += name + ":" + std::to_string(d.at.line + 1) + ":" + std::to_string(d.at.column + 1) + ": " +
                            d.field + ": " + d.message;
    }
  }
  return std::move(spec.plan);
}

Plan load_plan(const std::string& path, const Cluster& cluster, const Workload& workload,
               std::string* infeasible_reason) {
  return parse_plan(detail::read_file_or_throw(path), cluster, workload, path, infeasible_reason);
}

}  // namespace hetsim::models
