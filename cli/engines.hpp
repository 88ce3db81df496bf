// SPDX-License-Identifier: Apache-2.0
// Prediction engines selectable by name (`--engine analytic|sim`): verbs that predict a plan
// (validate, predict) look the engine up here. "analytic" is built in; other engines register
// themselves from their verb's add_*_verb() (e.g. the simulator registers "sim").
#pragma once
#include <string>
#include <vector>

#include "plan_refine.hpp"
#include "validation_suite.hpp"

namespace hetsim::cli {

/// Adds or replaces an engine; it is told the wall-clock seconds it may take (infinity: no
/// bound) and stops with an infeasible Report when they run out (plan/sweep --refine under
/// --time-limit).
void register_engine(const std::string& name, models::TimedPredictFn fn);
/// nullptr when no engine of that name is registered. This form has no time bound.
const models::PredictFn* find_engine(const std::string& name);
/// The same engine, given a bound on its wall-clock time.
const models::TimedPredictFn* find_timed_engine(const std::string& name);
/// Registered names, sorted.
std::vector<std::string> engine_names();
/// "hetsim VERB: error: --engine: unknown engine 'X' (known: analytic, sim)".
std::string unknown_engine_error(const std::string& verb, const std::string& name);

}  // namespace hetsim::cli
