// SPDX-License-Identifier: Apache-2.0
// hetsim executable: parses the command line and dispatches to one verb. Only main() exits.
#include <iostream>

#include "diagnostics.hpp"
#include "verbs.hpp"

#ifndef HETSIM_VERSION
#define HETSIM_VERSION "0.0.0"
#endif

int main(int argc, char** argv) {
  CLI::App app{"hetsim: predict, plan and run distributed training on heterogeneous GPU clusters"};
  app.set_version_flag("--version", std::string("hetsim ") + HETSIM_VERSION);
  app.require_subcommand(1);
  hetsim::cli::add_describe_verb(app);
  hetsim::cli::add_predict_verb(app);
  hetsim::cli::add_validate_verb(app);
  hetsim::cli::add_run_verb(app);
  hetsim::cli::add_plan_verb(app);
  hetsim::cli::add_simulate_verb(app);
  hetsim::cli::add_calibrate_verb(app);
  hetsim::cli::add_check_verb(app);
  hetsim::cli::add_fit_verb(app);
  hetsim::cli::add_sweep_verb(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    // CLI11 returns 0 for --help/--version; any real parse error is bad input.
    return rc == 0 ? hetsim::cli::kExitOk : hetsim::cli::kExitBadInput;
  } catch (const hetsim::models::ConfigError& e) {
    std::cerr << e.what() << '\n';
    return hetsim::cli::kExitBadInput;
  } catch (const hetsim::cli::VerbExit& e) {
    return e.code;
  } catch (const std::exception& e) {
    std::cerr << "hetsim: error: " << e.what() << '\n';
    return hetsim::cli::kExitFailure;
  }
  return hetsim::cli::kExitOk;
}
