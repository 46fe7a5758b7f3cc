#include "options.h"

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include "compile_progress.h"
#include "ephost/ephost_session_options_keys.h"

namespace ephost_cli {

void add_repeatable(CLI::App* cmd, const std::string& flags, std::vector<std::string>& into,
                    const std::string& help) {
  cmd->add_option(flags, into, help)->type_size(1)->allow_extra_args(false)->multi_option_policy(
      CLI::MultiOptionPolicy::TakeAll);
}

void add_global_args(CLI::App& app, GlobalArgs& args) {
  app.add_option("--log-level", args.log_level, "Minimum severity of library log messages")
      ->check(CLI::IsMember({"verbose", "info", "warning", "error"}))
      ->default_str("warning");
  add_repeatable(&app, "--plugin", args.plugins, "Also load this plugin library (repeatable)");
}

Ephost::Env create_env(const GlobalArgs& args, const std::vector<std::pair<std::string, std::string>>& env_options) {
  EphostLogLevel level = EPHOST_LOG_WARNING;
  if (args.log_level == "verbose") level = EPHOST_LOG_VERBOSE;
  else if (args.log_level == "info") level = EPHOST_LOG_INFO;
  else if (args.log_level == "error") level = EPHOST_LOG_ERROR;
  Ephost::Env env = env_options.empty() ? Ephost::Env(level) : Ephost::Env(level, nullptr, env_options);
  for (const std::string& plugin : args.plugins) env.register_plugin(plugin);
  return env;
}

void add_session_args(CLI::App* cmd, SessionArgs& args) {
  cmd->add_option("--providers", args.providers,
                  "Comma-separated providers in priority order, e.g. mygpu,cpu or opencl:1,cpu for a plugin's "
                  "device (default: the library's choice)");
  add_repeatable(cmd, "--option", args.options, "Session configuration entry KEY=VALUE (repeatable)");
  cmd->add_option("--threads", args.threads, "Intra-op threads (default: the library's choice)")
      ->check(CLI::Range(0, 4096));
  cmd->add_option("--opt-level", args.opt_level, "Graph optimization level (default: all)")
      ->check(CLI::IsMember({"disable", "basic", "extended", "all"}));
  cmd->add_option("--profile", args.profile,
                  "Write a Chrome trace (chrome://tracing, Perfetto) of session creation and the runs to FILE");
  auto* progress = cmd->add_flag("--progress", args.progress,
                                 "Show the compile progress even when stderr is not a terminal");
  cmd->add_flag("--no-progress", args.no_progress, "Never show the compile progress")->excludes(progress);
}

std::pair<std::string, std::string> split_key_value(const std::string& kv, const std::string& what) {
  size_t eq = kv.find('=');
  if (eq == std::string::npos || eq == 0)
    usage_error(what + " '" + kv + "' is not of the form KEY=VALUE");
  return {kv.substr(0, eq), kv.substr(eq + 1)};
}

std::vector<std::string> provider_list(const std::string& providers) {
  std::vector<std::string> out;
  if (providers.empty()) return out;
  size_t start = 0;
  while (true) {
    size_t comma = providers.find(',', start);
    std::string name = providers.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    // Trim spaces ("a, b").
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    if (name.empty()) usage_error("--providers '" + providers + "' has an empty provider name");
    out.push_back(name);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

Ephost::SessionOptions make_session_options(const SessionArgs& args) {
  Ephost::SessionOptions options;
  for (const std::string& name : provider_list(args.providers))
    with_context("provider '" + name + "'", [&] { options.append_provider(name); });
  for (const std::string& kv : args.options) {
    const auto entry = split_key_value(kv, "--option");
    with_context("--option " + kv, [&] { options.add_config(entry.first, entry.second); });
  }
  if (args.threads > 0) with_context("--threads", [&] { options.set_threads(args.threads); });
  if (!args.opt_level.empty()) {
    EphostGraphOptimizationLevel level = EPHOST_OPT_ENABLE_ALL;
    if (args.opt_level == "disable") level = EPHOST_OPT_DISABLE_ALL;
    else if (args.opt_level == "basic") level = EPHOST_OPT_ENABLE_BASIC;
    else if (args.opt_level == "extended") level = EPHOST_OPT_ENABLE_EXTENDED;
    with_context("--opt-level", [&] { options.set_optimization_level(level); });
  }
  if (!args.profile.empty()) {
    options.add_config(kEphostSessionOptionsEnableProfiling, "1");
    // The library names its trace "<prefix>_<date>_<time>.json"; write_profile renames it to FILE.
    options.add_config(kEphostSessionOptionsProfileFilePrefix, args.profile + ".partial");
  }
  return options;
}

ProgressMode progress_mode(const SessionArgs& args) {
  return args.no_progress ? ProgressMode::kNever : args.progress ? ProgressMode::kAlways : ProgressMode::kAuto;
}

Ephost::Session create_session(const Ephost::Env& env, const std::string& model, Ephost::SessionOptions& options,
                               const SessionArgs& args) {
  CompileProgress progress(std::filesystem::path(model).filename().string() + " ... compiling", false,
                           progress_mode(args));
  progress.attach(options);
  Ephost::Session session(env, model, options);
  options.set_progress_callback(nullptr, nullptr);  // `progress` ends here
  return session;
}

void write_profile(Ephost::Session& session, const SessionArgs& args, std::ostream& os) {
  if (args.profile.empty()) return;
  const std::string written = with_context("--profile", [&] { return session.end_profiling(); });
  std::error_code ec;
  std::filesystem::rename(written, args.profile, ec);
  if (ec)
    throw Ephost::Exception(EPHOST_FAIL, "--profile: cannot move the trace " + written + " to " + args.profile +
                                             ": " + ec.message());
  os << "profile written to " << args.profile << " (open it in chrome://tracing or ui.perfetto.dev)\n";
}

void add_input_args(CLI::App* cmd, InputArgs& args) {
  cmd->add_option("--inputs", args.inputs_dir,
                  "Folder of input_N.pb TensorProto files in graph-input order (default: random inputs)")
      ->check(CLI::ExistingDirectory);
  add_repeatable(cmd, "--shape", args.shapes,
                 "Shape of a random input, NAME=d0,d1,... (repeatable; needed for symbolic dims)");
  cmd->add_option("--seed", args.seed, "Seed of the random inputs")->default_str("0");
}

std::map<std::string, std::vector<int64_t>> parse_shapes(const std::vector<std::string>& shapes) {
  std::map<std::string, std::vector<int64_t>> out;
  for (const std::string& arg : shapes) {
    // The last '=' separates: input names may contain '=', dims never do.
    size_t eq = arg.rfind('=');
    if (eq == std::string::npos || eq == 0)
      usage_error("--shape '" + arg + "' is not of the form NAME=d0,d1,...");
    std::string name = arg.substr(0, eq);
    std::string dims = arg.substr(eq + 1);
    std::vector<int64_t> shape;
    size_t start = 0;
    while (!dims.empty()) {
      size_t comma = dims.find(',', start);
      std::string d = dims.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      char* end = nullptr;
      errno = 0;
      long long v = std::strtoll(d.c_str(), &end, 10);
      if (d.empty() || *end != '\0' || errno != 0 || v < 0)
        usage_error("--shape '" + arg + "': '" + d + "' is not a dimension (a non-negative integer)");
      shape.push_back(v);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (out.count(name)) usage_error("--shape given twice for input '" + name + "'");
    out.emplace(std::move(name), std::move(shape));
  }
  return out;
}

}  // namespace ephost_cli
