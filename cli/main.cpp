// SPDX-License-Identifier: Apache-2.0
// hetsim executable: parses the command line and dispatches to one verb. Only main() exits.
#include <cerrno>
#include <cstring>
#include <iostream>
#include <new>
#include <string>

#include "catalog.hpp"
#include "cli_common.hpp"
#include "diagnostics.hpp"
#include "parse_error_text.hpp"
#include "text_match.hpp"
#include "verbs.hpp"

#ifndef HETSIM_VERSION
#define HETSIM_VERSION "0.0.0"
#endif

namespace {

/// The verb's exit code, or 1 when what it printed did not reach standard output (a full disk,
/// `> /dev/full`): results lost without a word would otherwise end with exit code 0.
int checked_stdout(int rc) {
  errno = 0;
  std::cout.flush();
  if (std::cout) return rc;
  const int err = errno;
  std::cerr << "hetsim: error: cannot write the results to standard output"
            << (err != 0 ? std::string(": ") + std::strerror(err) : std::string()) << '\n';
  return rc == hetsim::cli::kExitOk ? hetsim::cli::kExitFailure : rc;
}

/// The error for a first argument that names no verb ("" when it is a verb or an option):
/// CLI11 said only "A subcommand is required" for `hetsim Predict` or `hetsim bogusverb`.
std::string unknown_verb_error(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return {};
  const std::string word = argv[1];
  std::vector<std::string> verbs;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == word) return {};
    verbs.push_back(sub->get_name());
  }
  std::string msg = "hetsim: error: unknown verb '" + word + "' (";
  if (const auto guess = hetsim::models::did_you_mean(word, verbs)) msg += "did you mean '" + *guess + "'? ";
  msg += "expected one of:";
  for (const auto& v : verbs) msg += " " + v;
  return msg + ")";
}

int run(CLI::App& app, int argc, char** argv) {
  if (const std::string error = unknown_verb_error(app, argc, argv); !error.empty()) {
    std::cerr << error << '\n';
    return hetsim::cli::kExitBadInput;
  }
  // The verb, in the form of the verbs' own messages ("hetsim plan: error: ...").
  const std::string verb = argc > 1 && argv[1][0] != '-' ? std::string(" ") + argv[1] : std::string();
  // `--profile=` (an unset variable in `--profile=$P`): CLI11 took the next argument as its value
  // (`--tp= --pp 1` read '--pp' as the TP degree), or said "no value given".
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    if (arg.size() > 3 && arg.rfind("--", 0) == 0 && arg.back() == '=' && arg.find('=') == arg.size() - 1) {
      std::cerr << "hetsim" << verb << ": error: " << arg.substr(0, arg.size() - 1)
                << ": " << hetsim::cli::kEmptyValueText << " (see `hetsim" << verb << " --help`)\n";
      return hetsim::cli::kExitBadInput;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version arrive as "errors" of exit code 0: CLI11 prints them.
    if (e.get_exit_code() == 0) return app.exit(e) == 0 ? hetsim::cli::kExitOk : hetsim::cli::kExitBadInput;
    // Any other is bad input, in the verbs' own form rather than CLI11's bare text and its
    // "Run with --help" line.
    std::vector<std::string> options;
    std::string what = e.what();
    const CLI::App& whole = app;
    for (const CLI::App* sub : whole.get_subcommands([&](const CLI::App* a) { return " " + a->get_name() == verb; })) {
      for (const CLI::Option* opt : sub->get_options())
        for (const std::string& name : opt->get_lnames()) options.push_back("--" + name);
      // CLI11 checks required options before unknown ones: `--clustr x` was reported as
      // "--cluster is required", hiding the misspelling that caused it.
      const std::vector<std::string> extras = sub->remaining();
      if (dynamic_cast<const CLI::RequiredError*>(&e) && !extras.empty()) {
        what = "The following argument" + std::string(extras.size() == 1 ? " was" : "s were") + " not expected:";
        for (const std::string& x : extras) what += " " + x;
      }
    }
    std::cerr << "hetsim" << verb << ": error: " << hetsim::cli::parse_error_text(what, options) << " (see `hetsim"
              << verb << " --help`)\n";
    return hetsim::cli::kExitBadInput;
  } catch (const hetsim::models::ConfigError& e) {
    std::cerr << e.what() << '\n';
    return hetsim::cli::kExitBadInput;
  } catch (const hetsim::cli::VerbExit& e) {
    return e.code;
  } catch (const std::bad_alloc&) {
    // what() says "std::bad_alloc", which tells a user nothing about what to change.
    std::cerr << "hetsim" << verb
              << ": error: out of memory: the inputs need more memory than this process could get (a smaller "
                 "cluster, plan, sweep or step count; or a larger `ulimit -v`)\n";
    return hetsim::cli::kExitFailure;
  } catch (const std::exception& e) {
    std::cerr << "hetsim" << verb << ": error: " << e.what() << '\n';
    return hetsim::cli::kExitFailure;
  }
  return hetsim::cli::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hetsim: predict, plan and run distributed training on heterogeneous GPU clusters"};
  // With the GPU catalog folder in use: it is set at build time, and a type added to another
  // checkout's catalog is otherwise unknown with no hint which folder was read (s60 walkthrough).
  using hetsim::models::Catalog;
  app.set_version_flag("--version", std::string("hetsim ") + HETSIM_VERSION + "\nGPU catalog: " + Catalog::builtin_dir() +
                                        (Catalog::builtin_dir_from_environment() ? " ($HETSIM_CATALOG_DIR)"
                                                          : " (set by the build; $HETSIM_CATALOG_DIR reads another folder)"));
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
  hetsim::cli::reject_empty_values(app);
  return checked_stdout(run(app, argc, argv));
}
