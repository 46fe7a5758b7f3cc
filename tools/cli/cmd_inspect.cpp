// ephost inspect MODEL: what an EPContext model holds (each EPContext node's source, partition, embed
// mode, cached context and its size, SDK version, hardware architecture) and what the installed
// plugins think of each context (optimal, prefer recompile, unsupported, not mine, with the reason),
// without creating a session.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "epcontext_files.h"
#include "text_table.h"

namespace ephost_cli {

namespace {

using nlohmann::json;

struct InspectArgs {
  std::string model;
  bool json = false;
  std::vector<std::string> options;  // KEY=VALUE
};

std::string text(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "-";
  if (it->is_string()) return it->get<std::string>().empty() ? "-" : it->get<std::string>();
  return it->dump();
}

std::string bytes_text(const json& node, const char* key) {
  auto it = node.find(key);
  if (it == node.end() || !it->is_number_unsigned()) return "-";
  return size_string(it->get<uintmax_t>());
}

// A node with main_context=0 names no file: its graph is in the binary of a main context.
std::string context_text(const json& node) {
  const std::string cache = text(node, "ep_cache_context");
  if (cache == "-" && node.value("main_context", 1) == 0) return "(in a main context's binary)";
  return cache;
}

void print_nodes(const json& nodes) {
  TextTable table({"node", "source", "partition", "main", "embed", "context", "size", "graph", "sdk", "hardware",
                   "source model"});
  for (const auto& n : nodes)
    table.add_row({text(n, "name"), text(n, "source"), text(n, "partition_name"), text(n, "main_context"),
                   text(n, "embed_mode"), context_text(n), bytes_text(n, "context_bytes"), bytes_text(n, "graph_bytes"),
                   text(n, "ep_sdk_version"), text(n, "hardware_architecture"), text(n, "onnx_model_filename")});
  table.print(std::cout, "  ", 60);
}

void print_verdicts(const json& nodes) {
  TextTable table({"node", "plugin", "verdict", "reason"});
  std::vector<std::string> errors;
  for (const auto& n : nodes) {
    const json verdicts = n.value("verdicts", json::array());
    if (verdicts.empty())
      table.add_row({text(n, "name"), "-", "no_provider",
                     "no installed plugin has the source key '" + text(n, "source") + "' ('ephost plugins' lists them)"});
    for (const auto& v : verdicts) {
      std::string plugin = text(v, "provider");
      if (text(v, "version") != "-") plugin += " " + text(v, "version");
      if (text(v, "sdk_version") != "-") plugin += " (SDK " + text(v, "sdk_version") + ")";
      table.add_row({text(n, "name"), plugin, text(v, "verdict"), text(v, "reason") == "-" ? "" : text(v, "reason")});
    }
    if (n.contains("error") && n["error"].is_string()) errors.push_back(text(n, "name") + ": " + text(n, "error"));
  }
  table.print(std::cout, "  ", 160);
  if (!errors.empty()) {
    std::cout << "contexts that cannot be read:\n";
    for (const auto& e : errors) std::cout << "  " << e << "\n";
  }
}

int inspect_command(const InspectArgs& args, const GlobalArgs& global) {
  const Ephost::Env env = create_env(global);
  SessionArgs session_args;
  session_args.options = args.options;
  const Ephost::SessionOptions options = make_session_options(session_args);
  const std::string report_text =
      with_context(args.model, [&] { return env.inspect_ep_context_model_json(args.model, options); });
  if (args.json) {
    std::cout << report_text << std::endl;
    return 0;
  }
  const json report = json::parse(report_text, nullptr, false);
  if (report.is_discarded() || !report.is_object())
    throw Ephost::Exception(EPHOST_FAIL, "libephost's inspection report is not a JSON object");

  std::cout << "model: " << args.model << "\n";
  const json metadata = report.value("metadata", json::object());
  if (!metadata.empty()) {
    std::cout << "compatibility info (model metadata):\n";
    for (const auto& [key, value] : metadata.items())
      std::cout << "  " << key << ": " << (value.is_string() ? value.get<std::string>() : value.dump()) << "\n";
  }
  const json nodes = report.value("nodes", json::array());
  if (nodes.empty()) {
    std::cout << "no EPContext nodes: an ordinary model (compile it with 'ephost compile')" << std::endl;
    return 0;
  }
  std::cout << nodes.size() << (nodes.size() == 1 ? " EPContext node:\n" : " EPContext nodes:\n");
  print_nodes(nodes);
  std::cout << "verdicts of the installed plugins whose source keys match:\n";
  print_verdicts(nodes);
  std::cout.flush();
  return 0;
}

}  // namespace

Command add_inspect_command(CLI::App& app) {
  auto args = std::make_shared<InspectArgs>();
  CLI::App* cmd = app.add_subcommand(
      "inspect", "List the EPContext nodes of a model and the verdict of each installed plugin on them");
  cmd->add_option("model", args->model, "ONNX model file (an EPContext model)")->required()->check(CLI::ExistingFile);
  cmd->add_flag("--json", args->json, "Print libephost's report as JSON");
  add_repeatable(cmd, "--option", args->options,
                 "Session configuration entry KEY=VALUE (repeatable), e.g. "
                 "session.model_external_initializers_file_folder_path=DIR");
  return {cmd, [args](const GlobalArgs& g) { return inspect_command(*args, g); }};
}

}  // namespace ephost_cli
