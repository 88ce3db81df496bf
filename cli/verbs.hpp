// SPDX-License-Identifier: Apache-2.0
// One function per verb of the `hetsim` executable; each adds its subcommand to the app
// and sets the callback that runs it. main.cpp only wires them together.
#pragma once
#include <CLI/CLI.hpp>

namespace hetsim::cli {

/// Exit codes of every verb.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitBadInput = 2;

/// Thrown by a verb to end with a given exit code after printing its own message.
struct VerbExit {
  int code;
};

void add_describe_verb(CLI::App& app);
void add_predict_verb(CLI::App& app);
void add_validate_verb(CLI::App& app);
void add_run_verb(CLI::App& app);  ///< `hetsim run` (cli/run_verb.cpp)
void add_plan_verb(CLI::App& app);
void add_simulate_verb(CLI::App& app);
void add_calibrate_verb(CLI::App& app);  ///< `hetsim calibrate` (cli/calibrate_verb.cpp)
void add_check_verb(CLI::App& app);      ///< `hetsim check` (cli/check_verb.cpp)
void add_fit_verb(CLI::App& app);        ///< `hetsim fit` (cli/fit_verb.cpp)
void add_sweep_verb(CLI::App& app);      ///< `hetsim sweep` (cli/sweep_verb.cpp)

}  // namespace hetsim::cli
