// SPDX-License-Identifier: Apache-2.0
// Prediction engines selectable by name (`--engine analytic|sim`): verbs that predict a plan
// (validate, predict) look the engine up here. "analytic" is built in; other engines register
// themselves from their verb's add_*_verb() (e.g. the simulator registers "sim").
#pragma once
#include <string>
#include <vector>

#include "validation_suite.hpp"

namespace hetsim::cli {

/// Adds or replaces an engine.
void register_engine(const std::string& name, models::PredictFn fn);
/// nullptr when no engine of that name is registered.
const models::PredictFn* find_engine(const std::string& name);
/// Registered names, sorted.
std::vector<std::string> engine_names();
/// "hetsim VERB: error: --engine: unknown engine 'X' (known: analytic, sim)".
std::string unknown_engine_error(const std::string& verb, const std::string& name);

}  // namespace hetsim::cli
