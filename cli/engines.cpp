// SPDX-License-Identifier: Apache-2.0
// Registry of prediction engines.
#include "engines.hpp"

#include <map>

#include "predictor.hpp"

namespace hetsim::cli {

namespace {

std::map<std::string, models::PredictFn>& registry() {
  static std::map<std::string, models::PredictFn> engines = {
      {"analytic", [](const models::Cluster& c, const models::Workload& w, const models::Plan& p) {
         return models::predict(c, w, p);
       }}};
  return engines;
}

}  // namespace

void register_engine(const std::string& name, models::PredictFn fn) { registry()[name] = std::move(fn); }

const models::PredictFn* find_engine(const std::string& name) {
  auto it = registry().find(name);
  return it == registry().end() ? nullptr : &it->second;
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
