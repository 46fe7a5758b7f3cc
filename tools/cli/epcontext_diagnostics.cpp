#include "epcontext_diagnostics.h"

#include <nlohmann/json.hpp>

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

}  // namespace ephost_cli
