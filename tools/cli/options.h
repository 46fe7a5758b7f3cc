// Command-line options shared by several subcommands, and what they turn into: the env (global
// options), session options (--providers, --option, --threads, --opt-level) and the input options
// (--inputs, --shape, --seed). Each subcommand adds the groups it takes; none parses them itself.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "compile_progress.h"
#include "ephost/ephost_cxx_api.h"
#include "tool_errors.h"

namespace CLI {
class App;
}

namespace ephost_cli {

struct GlobalArgs {
  std::string log_level = "warning";
  std::vector<std::string> plugins;  // --plugin FILE: libraries registered besides discovery
};
void add_global_args(CLI::App& app, GlobalArgs& args);
// CreateEnv (discovery: EPHOST_PLUGIN_PATH, then the default plugin folder, plus the built-in CPU plugin),
// or CreateEnvWithOptions when `env_options` (ephost_env_options_keys.h) are given, then each --plugin
// library registered (an error says why one cannot be loaded).
Ephost::Env create_env(const GlobalArgs& args,
                       const std::vector<std::pair<std::string, std::string>>& env_options = {});

struct SessionArgs {
  std::string providers;             // "a,b,cpu"
  std::vector<std::string> options;  // "KEY=VALUE"
  int threads = 0;                   // 0: the library's default
  std::string opt_level;             // "", "disable", "basic", "extended", "all"
  std::string profile;               // --profile FILE: a Chrome trace of creation and runs
  bool progress = false;             // --progress: the compile progress line even on a pipe
  bool no_progress = false;          // --no-progress: never
};
void add_session_args(CLI::App* cmd, SessionArgs& args);
Ephost::SessionOptions make_session_options(const SessionArgs& args);
// --progress / --no-progress as a mode (compile_progress.h).
ProgressMode progress_mode(const SessionArgs& args);
// The session, with the compile progress line (compile_progress.h) on stderr while it is created.
Ephost::Session create_session(const Ephost::Env& env, const std::string& model, Ephost::SessionOptions& options,
                               const SessionArgs& args);
// --profile FILE: writes the session's trace there and says so on `os`; nothing without --profile.
void write_profile(Ephost::Session& session, const SessionArgs& args, std::ostream& os);
// The provider names of --providers, in order (empty entries rejected).
std::vector<std::string> provider_list(const std::string& providers);

struct InputArgs {
  std::string inputs_dir;           // input_N.pb files, in graph-input order
  std::vector<std::string> shapes;  // "NAME=d0,d1,..."
  uint64_t seed = 0;
};
void add_input_args(CLI::App* cmd, InputArgs& args);
// The --shape arguments by input name ("x=1,3,224,224" -> {"x": [1,3,224,224]}; "x=" is a scalar).
std::map<std::string, std::vector<int64_t>> parse_shapes(const std::vector<std::string>& shapes);

// "KEY=VALUE" -> {KEY, VALUE}; usage error (naming `what`) without '=' or with an empty key.
std::pair<std::string, std::string> split_key_value(const std::string& kv, const std::string& what);

// Adds a repeatable option that takes exactly one value per occurrence (so that it never swallows
// the positional arguments that follow it).
void add_repeatable(CLI::App* cmd, const std::string& flags, std::vector<std::string>& into,
                    const std::string& help);

}  // namespace ephost_cli
