// SPDX-License-Identifier: Apache-2.0
// Registry of prediction engines.
#include "engines.hpp"

#include <map>

#include "predictor.hpp"

namespace hetsim::cli {

namespace {

struct Engine {
  models::TimedPredictFn timed;
  models::PredictFn unbounded;  ///< `timed` with no bound
};

Engine make_engine(models::TimedPredictFn fn) { return Engine{fn, models::without_time_limit(fn)}; }

std::map<std::string, Engine>& registry() {
  // The analytic model answers in microseconds: it needs no bound.
  static std::map<std::string, Engine> engines = {
      {"analytic", make_engine([](const models::Cluster& c, const models::Workload& w, const models::Plan& p, double) {
         return models::predict(c, w, p);
       })}};
  return engines;
}

}  // namespace

void register_engine(const std::string& name, models::TimedPredictFn fn) { registry()[name] = make_engine(std::move(fn)); }

const models::PredictFn* find_engine(const std::string& name) {
  auto it = registry().find(name);
  return it == registry().end() ? nullptr : &it->second.unbounded;
}

const models::TimedPredictFn* find_timed_engine(const std::string& name) {
  auto it = registry().find(name);
  return it == registry().end() ? nullptr : &it->second.timed;
}

std::vector<std::string> engine_names() {
  std::vector<std::string> names;
  for (const auto& [name, fn] : registry()) names.push_back(name);
  return names;
}

std::string unknown_engine_error(const std::string& verb, const std::string& name) {
  std::string known;
  for (const auto& n : engine_names()) known += (known.empty() ? "" : ", ") + n;
  return "hetsim " + verb + ": error: --engine: unknown engine '" + name + "' (known: " + known + ")";
}

}  // namespace hetsim::cli
