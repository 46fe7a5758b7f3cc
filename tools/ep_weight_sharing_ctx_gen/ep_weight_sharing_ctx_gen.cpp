// ep_weight_sharing_ctx_gen: ONNX Runtime's tool for EPContext models that share weights (the EPContext
// design, "General Tool for EPContext Model Generation with Weight Sharing"), over libephost's public API:
//
//   ep_weight_sharing_ctx_gen -e EP [-i "key|value key|value"] [-C "key|value ..."] MODEL1,MODEL2,...
//
// One env; one session per model, in order, with ep.context_enable=1 and ep.share_ep_contexts=1, the
// provider EP with the -i options, and ep.stop_share_ep_contexts=1 on the last one. Each session writes
// `<model>_ctx.onnx` beside its model; the host keeps the compiled partitions of the group in one
// workspace (identical weights stored once) and the last session writes `<model1>_<EP>.bin`: N models
// give N+1 files. The host requires the ctx models of a group in one folder (their EPContext nodes
// refer to the binary by a path relative to their own folder); with models in several folders the
// host's error says so.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "compile_progress.h"
#include "compile_summary.h"
#include "epcontext_files.h"
#include "tool_errors.h"

namespace fs = std::filesystem;
using namespace ephost_cli;

namespace {

constexpr char kTool[] = "ep_weight_sharing_ctx_gen";

struct ToolArgs {
  std::string ep;
  std::vector<std::string> provider_options;  // each "key|value key|value"
  std::vector<std::string> config_entries;    // each "key|value key|value"
  std::vector<std::string> model_lists;       // each "a.onnx,b.onnx" (or one model)
  bool verbose = false;
  bool force = false;
};

// "k1|v1 k2|v2" (ONNX Runtime's spelling for the tool's -i and -C) -> pairs, in order.
std::vector<std::pair<std::string, std::string>> parse_pairs(const std::vector<std::string>& args, const char* flag) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& arg : args) {
    std::istringstream words(arg);
    std::string word;
    while (words >> word) {
      const size_t bar = word.find('|');
      if (bar == std::string::npos || bar == 0)
        usage_error(std::string(flag) + " '" + word + "' is not of the form key|value");
      out.emplace_back(word.substr(0, bar), word.substr(bar + 1));
    }
  }
  return out;
}

std::vector<std::string> parse_models(const std::vector<std::string>& lists) {
  std::vector<std::string> models;
  for (const std::string& list : lists) {
    size_t start = 0;
    while (true) {
      const size_t comma = list.find(',', start);
      const std::string model = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (model.empty()) usage_error("the model list '" + list + "' has an empty entry");
      std::error_code ec;
      if (!fs::is_regular_file(model, ec)) throw UsageError("no model file '" + model + "'", EPHOST_NO_SUCHFILE);
      models.push_back(model);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return models;
}

// The session entries this tool sets itself; -C may repeat them with the same value (ONNX Runtime's
// documentation shows -C "ep.context_enable|1 ep.context_embed_mode|0"), never change them.
void reject_fixed_entries(const std::vector<std::pair<std::string, std::string>>& entries) {
  static const std::map<std::string, std::string> kFixed = {
      {"ep.context_enable", "1"}, {"ep.context_embed_mode", "0"}, {"ep.share_ep_contexts", "1"}};
  for (const auto& [key, value] : entries) {
    auto it = kFixed.find(key);
    if (it != kFixed.end() && it->second != value)
      usage_error("-C " + key + "|" + value + ": this tool needs " + key + "=" + it->second +
                  " (weight sharing writes one binary that the ctx models refer to)");
    if (key == "ep.stop_share_ep_contexts" || key == "ep.context_file_path")
      usage_error("-C " + key + ": this tool sets it for each model (ctx models go beside their models, the last "
                  "model closes the group)");
  }
}

bool one_folder(const std::vector<std::string>& models) {
  const fs::path first = fs::absolute(models.front()).lexically_normal().parent_path();
  for (const std::string& m : models)
    if (fs::absolute(m).lexically_normal().parent_path() != first) return false;
  return true;
}

// Outputs that exist already: refused before anything is compiled, unless --force.
void refuse_existing(const std::vector<std::string>& outputs) {
  std::string existing;
  for (const std::string& path : outputs) {
    std::error_code ec;
    if (fs::exists(path, ec)) existing += (existing.empty() ? "" : ", ") + path;
  }
  if (!existing.empty())
    throw Ephost::Exception(EPHOST_FAIL, "outputs exist already: " + existing +
                                             "; remove them or pass --force (nothing was written)");
}

Ephost::SessionOptions group_session_options(const ToolArgs& args,
                                             const std::vector<std::pair<std::string, std::string>>& provider_options,
                                             const std::vector<std::pair<std::string, std::string>>& config,
                                             bool last) {
  Ephost::SessionOptions options;
  with_context("provider '" + args.ep + "'", [&] { options.append_provider(args.ep, provider_options); });
  std::vector<std::pair<std::string, std::string>> entries = config;
  entries.insert(entries.end(), {{"ep.context_enable", "1"},
                                 {"ep.context_embed_mode", "0"},
                                 {"ep.share_ep_contexts", "1"},
                                 {"ep.stop_share_ep_contexts", last ? "1" : "0"}});
  if (args.force) entries.emplace_back("ep.context_overwrite", "1");
  for (const auto& entry : entries)
    with_context("-C " + entry.first, [&] { options.add_config(entry.first, entry.second); });
  return options;
}

int generate(const ToolArgs& args) {
  const std::vector<std::string> models = parse_models(args.model_lists);
  const auto provider_options = parse_pairs(args.provider_options, "-i");
  const auto config = parse_pairs(args.config_entries, "-C");
  reject_fixed_entries(config);

  std::vector<std::string> ctx_paths;
  std::set<std::string> distinct;
  for (const std::string& model : models) {
    ctx_paths.push_back(default_ctx_path(model));
    if (!distinct.insert(fs::absolute(ctx_paths.back()).lexically_normal().string()).second)
      usage_error("model '" + model + "' is listed twice (or shares its name with another in its folder)");
  }
  const std::string binary = context_binary_path(ctx_paths.front(), models.front(), args.ep);
  std::vector<std::string> outputs = ctx_paths;
  outputs.push_back(binary);
  if (!args.force) refuse_existing(outputs);

  Ephost::Env env(args.verbose ? EPHOST_LOG_VERBOSE : EPHOST_LOG_WARNING);
  WrittenFiles written(outputs);

  const bool several = models.size() > 1;
  for (size_t i = 0; i < models.size(); ++i) {
    const std::string label = fmt::format("[{}/{}]", i + 1, models.size());
    std::cout << label << " " << models[i] << " -> " << ctx_paths[i] << std::endl;
    const bool last = i + 1 == models.size();
    Ephost::SessionOptions options = group_session_options(args, provider_options, config, last);
    const auto t0 = std::chrono::steady_clock::now();
    std::optional<Ephost::Session> session;
    try {
      CompileProgress progress(label + " " + fs::path(models[i]).filename().string() + " ... compiling", several);
      progress.attach(options);
      with_context(models[i], [&] { session.emplace(env, models[i], options); });
    } catch (const Ephost::Exception&) {
      // Say what the earlier sessions of the group left behind before the error is reported.
      for (const auto& [path, size] : written.written())
        std::cout << "  written before the failure: " << path << " (" << size_string(size) << ")\n";
      if (!one_folder(models))
        std::cout << "  note: this tool writes each ctx model beside its model, and a group's ctx models must share "
                     "one folder: put the models in one folder\n";
      throw;
    }
    const auto elapsed = std::chrono::steady_clock::now() - t0;
    for (const std::string& line : describe_compile(summarize_compile(*session, ctx_paths[i])))
      std::cout << "  " << line << "\n";
    std::cout << "  compiled in " << elapsed_string(elapsed) << std::endl;
  }

  const auto files = written.written();
  std::cout << files.size() << " file(s) written:\n";
  bool binary_written = false;
  for (const auto& [path, size] : files) {
    std::cout << "  " << path << " (" << size_string(size) << ")\n";
    binary_written = binary_written || path == binary;
  }
  std::cout.flush();
  if (!binary_written)
    // The shared binary is the point of this tool: ctx models without one share nothing.
    throw Ephost::Exception(EPHOST_FAIL, "provider '" + args.ep + "' cached no compiled part of these models, so "
                                         "there is no shared binary '" + binary + "'; check which nodes it takes "
                                         "with 'ephost run MODEL --providers " + args.ep + " --report'");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Generates EPContext models that share one context binary: MODEL1_ctx.onnx ... MODELn_ctx.onnx "
               "beside their models and MODEL1_<EP>.bin (ONNX Runtime's tool, over libephost)",
               kTool};
  ToolArgs args;
  app.add_option("-e,--ep", args.ep, "The compiling provider (plugin name, as 'ephost plugins' lists it)")
      ->required();
  auto pairs = [&](const std::string& flags, std::vector<std::string>& into, const std::string& help) {
    app.add_option(flags, into, help)->type_size(1)->allow_extra_args(false)->multi_option_policy(
        CLI::MultiOptionPolicy::TakeAll);
  };
  pairs("-i", args.provider_options, "Provider options, \"key1|value1 key2|value2\" (repeatable)");
  pairs("-C", args.config_entries, "Session configuration entries, \"key1|value1 key2|value2\" (repeatable)");
  app.add_flag("-v,--verbose", args.verbose, "Show libephost's verbose log messages");
  app.add_flag("-f,--force", args.force, "Overwrite existing ctx models and binary (ep.context_overwrite=1)");
  app.add_option("models", args.model_lists, "MODEL1,MODEL2,... in group order (or separate arguments)")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    report_error(kTool, EPHOST_INVALID_ARGUMENT, e.what(), 2);
    std::cerr << "Run '" << kTool << " --help' for usage." << std::endl;
    return 2;
  }
  try {
    return generate(args);
  } catch (const Ephost::Exception& e) {
    return report_error(kTool, e);
  } catch (const std::exception& e) {
    return report_error(kTool, e);
  }
}
