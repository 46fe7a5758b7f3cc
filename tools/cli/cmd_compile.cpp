// ephost compile MODEL...: ahead-of-time compilation into EPContext models, as ONNX Runtime's
// CompileModel does it: a session created with ep.context_enable=1 writes `<model>_ctx.onnx` and the
// providers' binaries (`<model>_<provider>.bin`) beside it. Prints what was written, how much of the
// model became EPContext nodes, and how long it took; shows progress while a compile runs.
#include <CLI/CLI.hpp>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>

#include "commands.h"
#include "compile_progress.h"
#include "compile_summary.h"
#include "epcontext_files.h"

namespace fs = std::filesystem;

namespace ephost_cli {

namespace {

struct CompileArgs {
  std::vector<std::string> models;
  std::string output;  // the ctx model (one model), or an existing folder for all of them
  bool embed = false;
  std::string prefix;
  std::string external_initializers;
  bool force = false;
  SessionArgs session;
};

struct Job {
  std::string model;
  std::string ctx_path;
};

std::vector<Job> plan_jobs(const CompileArgs& args) {
  std::error_code ec;
  const bool output_is_folder = !args.output.empty() && fs::is_directory(args.output, ec);
  if (!args.output.empty() && !output_is_folder && args.models.size() > 1)
    usage_error("-o names the ctx model of one model; with " + std::to_string(args.models.size()) +
                " models give an existing folder, or leave -o out to write each beside its model");
  std::vector<Job> jobs;
  std::set<std::string> outputs;
  for (const std::string& model : args.models) {
    Job job{model, default_ctx_path(model)};
    if (output_is_folder)
      job.ctx_path = (fs::path(args.output) / fs::path(job.ctx_path).filename()).string();
    else if (!args.output.empty())
      job.ctx_path = args.output;
    if (!outputs.insert(fs::absolute(job.ctx_path).lexically_normal().string()).second)
      usage_error("two models would be compiled into the same ctx model '" + job.ctx_path + "'");
    jobs.push_back(std::move(job));
  }
  return jobs;
}

Ephost::SessionOptions compile_options(const CompileArgs& args, const Job& job) {
  Ephost::SessionOptions options = make_session_options(args.session);
  // Set after --option: these are what the command promises (later entries win).
  std::vector<std::pair<std::string, std::string>> entries = {{"ep.context_enable", "1"},
                                                              {"ep.context_file_path", job.ctx_path}};
  if (args.embed) entries.emplace_back("ep.context_embed_mode", "1");
  if (!args.prefix.empty()) entries.emplace_back("ep.context_node_name_prefix", args.prefix);
  if (!args.external_initializers.empty())
    entries.emplace_back("ep.context_model_external_initializers_file_name", args.external_initializers);
  if (args.force) entries.emplace_back("ep.context_overwrite", "1");
  for (const auto& entry : entries) with_context(entry.first, [&] { options.add_config(entry.first, entry.second); });
  return options;
}

// Every file this compile may write: the ctx model, a binary per loaded plugin, the external
// initializers; compared before and after to list what was written.
std::vector<std::string> candidate_outputs(const Ephost::Env& env, const CompileArgs& args, const Job& job) {
  std::vector<std::string> files = {job.ctx_path};
  for (const EphostPluginReport& r : env.plugin_reports())
    if (r.loaded && r.name && *r.name) files.push_back(context_binary_path(job.ctx_path, job.model, r.name));
  if (!args.external_initializers.empty())
    files.push_back((fs::path(job.ctx_path).parent_path() / args.external_initializers).string());
  return files;
}

void compile_one(const Ephost::Env& env, const CompileArgs& args, const Job& job, const std::string& label,
                 bool several) {
  Ephost::SessionOptions options = compile_options(args, job);
  WrittenFiles files(candidate_outputs(env, args, job));
  const std::string lead = label.empty() ? "" : label + " ";
  std::cout << (label.empty() ? "compiling " : lead) << job.model << " -> " << job.ctx_path << std::endl;

  const auto t0 = std::chrono::steady_clock::now();
  const Ephost::Session session = [&] {
    CompileProgress progress(lead + fs::path(job.model).filename().string() + " ... compiling", several,
                             progress_mode(args.session));
    progress.attach(options);
    return Ephost::Session(env, job.model, options);
  }();
  const auto elapsed = std::chrono::steady_clock::now() - t0;

  for (const auto& [path, size] : files.written()) std::cout << "  wrote " << path << " (" << size_string(size) << ")\n";
  const CompileSummary summary = summarize_compile(session, job.ctx_path);
  for (const std::string& line : describe_compile(summary)) std::cout << "  " << line << "\n";
  if (summary.context_nodes == 0) {
    std::string providers;
    for (const auto& p : summary.providers) providers += (providers.empty() ? "" : ", ") + p.name;
    std::cout << "  warning: no provider cached a compiled part of this model (providers: " << providers
              << "); the ctx model holds ordinary nodes only. Name a compiling provider with --providers.\n";
  }
  std::cout << "  compiled in " << elapsed_string(elapsed) << std::endl;
}

int compile_command(const CompileArgs& args, const GlobalArgs& global) {
  const std::vector<Job> jobs = plan_jobs(args);
  const Ephost::Env env = create_env(global);
  const bool several = jobs.size() > 1;
  std::vector<std::string> failed;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const std::string label = several ? "[" + std::to_string(i + 1) + "/" + std::to_string(jobs.size()) + "]" : "";
    try {
      compile_one(env, args, jobs[i], label, several);
    } catch (const Ephost::Exception& e) {
      if (!several) throw;
      // Report and go on: the other models do not depend on this one.
      report_error(kCommandName, e.code(), jobs[i].model + ": " + e.message(), 1);
      failed.push_back(jobs[i].model);
    }
  }
  if (several) {
    std::cout << jobs.size() - failed.size() << " of " << jobs.size() << " models compiled";
    if (!failed.empty()) {
      std::cout << "; failed:";
      for (const auto& m : failed) std::cout << " " << m;
    }
    std::cout << std::endl;
  }
  return failed.empty() ? 0 : 1;
}

}  // namespace

Command add_compile_command(CLI::App& app) {
  auto args = std::make_shared<CompileArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compile", "Compile models ahead of time into EPContext models (<model>_ctx.onnx + <model>_<provider>.bin)");
  cmd->add_option("models", args->models, "ONNX model files")->required()->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", args->output,
                  "The ctx model to write (one model), or an existing folder to write them into "
                  "(default: <model>_ctx.onnx beside each model)");
  cmd->add_flag("--embed", args->embed, "Embed the compiled contexts in the ctx model (ep.context_embed_mode=1)");
  cmd->add_option("--prefix", args->prefix,
                  "Prefix of EPContext node names, partition names and the graph name (ep.context_node_name_prefix)");
  cmd->add_option("--external-initializers", args->external_initializers,
                  "Write the initializers of ordinary nodes to this file beside the ctx model "
                  "(ep.context_model_external_initializers_file_name)");
  cmd->add_flag("-f,--force", args->force, "Overwrite an existing ctx model and binaries (ep.context_overwrite=1)");
  add_session_args(cmd, args->session);
  return {cmd, [args](const GlobalArgs& g) { return compile_command(*args, g); }};
}

}  // namespace ephost_cli
