// The subcommands of `ephost`. Each add_*_command declares its options on `app` and returns how to
// run it once the command line is parsed; main() runs the one that was given.
#pragma once

#include <functional>

#include "options.h"

namespace CLI {
class App;
}

namespace ephost_cli {

// How the command names itself in its messages ("ephost: error: ...").
inline constexpr char kCommandName[] = "ephost";

struct Command {
  CLI::App* app = nullptr;
  std::function<int(const GlobalArgs&)> run;  // returns the exit status; errors are thrown (Ephost::Exception)
};

Command add_run_command(CLI::App& app);
Command add_test_command(CLI::App& app);
Command add_bench_command(CLI::App& app);
Command add_plugins_command(CLI::App& app);
Command add_compile_command(CLI::App& app);
Command add_inspect_command(CLI::App& app);

}  // namespace ephost_cli
