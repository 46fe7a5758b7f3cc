#include "epcontext_diagnostics.h"

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "tool_errors.h"

namespace ephost_cli {

namespace {

std::string text_or(const nlohmann::json& j, const char* key, const std::string& fallback) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() && !it->get<std::string>().empty() ? it->get<std::string>() : fallback;
}

std::string describe(const nlohmann::json& d) {
  std::string line = "EPContext node '" + text_or(d, "node", "?") + "' (source " + text_or(d, "source", "?") +
                     ", provider " + text_or(d, "provider", "none") + "): " + text_or(d, "status", "INVALID_GRAPH") +
                     ": " + text_or(d, "reason", "no reason given");
  if (d.value("fell_back", false))
    line += "; fell back to " + std::to_string(d.value("fallback_nodes", 0)) + " node(s) on the next providers";
  return line;
}

}  // namespace

std::vector<std::string> unusable_context_lines(const Ephost::Session& session) {
  const std::string text = with_context("EPContext report", [&] { return session.ep_context_report_json(); });
  const nlohmann::json report = nlohmann::json::parse(text, nullptr, false);
  std::vector<std::string> lines;
  if (!report.is_array()) return lines;
  for (const auto& d : report)
    if (d.is_object() && d.value("status", "OK") != "OK") lines.push_back(describe(d));
  return lines;
}

std::string wait_for_context_rebuild(const Ephost::Session& session) {
  bool told = false;
  while (true) {
    const nlohmann::json report = nlohmann::json::parse(session.ep_context_report_json(), nullptr, false);
    nlohmann::json rebuild;
    if (report.is_array())
      for (const auto& d : report)
        if (d.is_object() && d.contains("rebuild") && d["rebuild"].is_object()) rebuild = d["rebuild"];
    if (rebuild.is_null()) return {};
    const std::string state = rebuild.value("state", "");
    if (state == "running") {
      if (!told) std::cerr << "waiting for the EPContext cache rebuild to finish...\n";
      told = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    const std::string ctx = rebuild.value("ctx_model", "");
    if (state == "written") {
      std::string files;
      for (const auto& f : rebuild.value("files", nlohmann::json::array()))
        files += (files.empty() ? "" : ", ") + f.get<std::string>();
      char seconds[32];
      std::snprintf(seconds, sizeof(seconds), "%.2f", rebuild.value("seconds", 0.0));
      return std::string("EPContext cache rebuilt in ") + seconds + " s: " + files +
             " (the next session loads it)";
    }
    return "EPContext cache '" + ctx + "' rebuild " + state + (rebuild.contains("reason")
                                                                    ? ": " + rebuild.value("reason", "")
                                                                    : std::string());
  }
}

}  // namespace ephost_cli
