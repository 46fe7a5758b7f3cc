#include "operator_profile.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "tensor_values.h"
#include "text_table.h"

namespace ephost_cli {
namespace {

std::string arg(const nlohmann::json& event, const char* key) {
  const auto args = event.find("args");
  if (args == event.end() || !args->is_object()) return "";
  const auto it = args->find(key);
  return it != args->end() && it->is_string() ? it->get<std::string>() : "";
}

std::vector<OperatorTime> largest_first(const std::map<std::string, OperatorTime>& sums) {
  std::vector<OperatorTime> out;
  for (const auto& [key, t] : sums) out.push_back(t);
  std::stable_sort(out.begin(), out.end(), [](const OperatorTime& a, const OperatorTime& b) {
    return a.total_ms > b.total_ms;
  });
  return out;
}

double per_run(const OperatorProfile& p, double ms) { return p.runs > 0 ? ms / static_cast<double>(p.runs) : ms; }

std::string share(const OperatorProfile& p, double ms) {
  if (p.total_ms <= 0) return "-";
  char text[16];
  std::snprintf(text, sizeof(text), "%.1f%%", 100.0 * ms / p.total_ms);
  return text;
}

}  // namespace

OperatorProfile operator_profile(const nlohmann::json& trace) {
  OperatorProfile profile;
  const auto events = trace.find("traceEvents");
  if (events == trace.end() || !events->is_array()) return profile;
  // Steps whose plugin reported operator spans: their own span would count the same time twice.
  std::set<std::string> split_steps;
  for (const nlohmann::json& e : *events)
    if (e.value("cat", "") == "op") split_steps.insert(arg(e, "step"));
  std::map<std::string, OperatorTime> by_type, by_node;
  auto add = [&](const std::string& type, const std::string& node, double ms) {
    for (auto [sums, key] : {std::pair{&by_type, &type}, std::pair{&by_node, &node}}) {
      OperatorTime& t = (*sums)[*key];
      t.key = *key;
      t.total_ms += ms;
      ++t.count;
    }
    profile.total_ms += ms;
  };
  for (const nlohmann::json& e : *events) {
    const std::string cat = e.value("cat", "");
    const double ms = e.value("dur", 0.0) / 1000.0;
    if (cat == "session" && e.value("name", "") == "model run") ++profile.runs;
    if (cat == "op") add(arg(e, "op_type"), e.value("name", ""), ms);
    if (cat == "node" && !split_steps.count(e.value("name", ""))) add(arg(e, "op_type"), e.value("name", ""), ms);
  }
  profile.by_op_type = largest_first(by_type);
  profile.by_node = largest_first(by_node);
  return profile;
}

void print_operator_profile(const OperatorProfile& profile, size_t top, std::ostream& os) {
  os << "operators (" << profile.runs << " profiled runs, " << ms_to_string(per_run(profile, profile.total_ms))
     << " ms per run in operators):\n";
  for (const auto& [title, list] : {std::pair{"op type", &profile.by_op_type}, std::pair{"node", &profile.by_node}}) {
    TextTable table({title, "ms/run", "share", "spans"});
    for (size_t i = 0; i < list->size() && i < top; ++i) {
      const OperatorTime& t = (*list)[i];
      table.add_row({t.key, ms_to_string(per_run(profile, t.total_ms)), share(profile, t.total_ms),
                     std::to_string(t.count)});
    }
    os << "  top " << std::min(top, list->size()) << " of " << list->size() << " by " << title << ":\n";
    table.print(os, "    ");
  }
}

nlohmann::ordered_json operator_profile_json(const OperatorProfile& profile, size_t top) {
  nlohmann::ordered_json j;
  j["runs"] = profile.runs;
  j["total_ms_per_run"] = per_run(profile, profile.total_ms);
  for (const auto& [field, key, list] : {std::tuple{"by_op_type", "op_type", &profile.by_op_type},
                                         std::tuple{"by_node", "node", &profile.by_node}}) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (size_t i = 0; i < list->size() && i < top; ++i) {
      const OperatorTime& t = (*list)[i];
      rows.push_back({{key, t.key},
                      {"ms_per_run", per_run(profile, t.total_ms)},
                      {"share", profile.total_ms > 0 ? t.total_ms / profile.total_ms : 0.0},
                      {"count", t.count}});
    }
    j[field] = rows;
  }
  return j;
}

}  // namespace ephost_cli
