// `ephost`: runs, tests and benchmarks ONNX models through libephost's public API (the C API, through
// its C++ wrapper), shows which plugins discovery found, and compiles and inspects EPContext models.
// Subcommands live in cmd_*.cpp; this file parses and dispatches.
#include <CLI/CLI.hpp>

#include <iostream>

#include "commands.h"
#include "options.h"
#include "tool_errors.h"

#ifndef EPHOST_VERSION
#define EPHOST_VERSION "unknown"
#endif

using namespace ephost_cli;

int main(int argc, char** argv) {
  CLI::App app{"Runs ONNX models with execution providers that are plugins (libephost).", "ephost"};
  app.require_subcommand(0, 1);
  app.fallthrough();  // global options may follow the subcommand
  GlobalArgs global;
  add_global_args(app, global);
  bool version = false;
  app.add_flag("--version", version, "Print the versions of ephost and libephost and exit");

  std::vector<Command> commands = {add_run_command(app),     add_test_command(app),    add_bench_command(app),
                                   add_plugins_command(app), add_compile_command(app), add_inspect_command(app)};

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    report_error(kCommandName, EPHOST_INVALID_ARGUMENT, e.what(), 2);
    std::cerr << "Run 'ephost --help' for usage." << std::endl;
    return 2;
  }

  try {
    if (version) {
      const std::string lib = Ephost::version_string();
      std::cout << "ephost " << EPHOST_VERSION << " (libephost " << (lib.empty() ? "?" : lib) << ", C API version "
                << EPHOST_API_VERSION << ")" << std::endl;
      return 0;
    }
    for (const Command& c : commands)
      if (c.app->parsed()) return c.run(global);
    std::cerr << app.help() << std::endl;
    return report_error(kCommandName, EPHOST_INVALID_ARGUMENT,
                        "no command given (run, test, bench, plugins, compile or inspect)", 2);
  } catch (const Ephost::Exception& e) {
    return report_error(kCommandName, e);
  } catch (const std::exception& e) {
    return report_error(kCommandName, e);
  }
}
