// What the CPU plugin's fusion tests (cpu_fusion_test.cpp, cpu_qdq_fusion_test.cpp,
// cpu_q4_matmul_test.cpp) share: one quiet environment with the built-in CPU plugin, and the fused
// groups a session formed, read from its partition report.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ephost/ephost_cxx_api.h"

namespace ephost_test {

// One environment for the process (errors only in the log, no discovered plugins).
inline Ephost::Env& cpu_env() {
  static Ephost::Env env(EPHOST_LOG_ERROR, std::vector<std::string>{});
  return env;
}

// The op types of each fused group of the session, joined by '+' in node order
// ("DequantizeLinear+Conv+QuantizeLinear"), one entry per group.
inline std::multiset<std::string> fused_groups(const Ephost::Session& s) {
  const nlohmann::json report = nlohmann::json::parse(s.partition_report_json());
  std::map<std::string, std::string> groups;
  for (const auto& g : report.at("graphs"))
    for (const auto& n : g.at("nodes")) {
      if (n.at("fused_group").is_null()) continue;
      std::string& ops = groups[n.at("fused_group").get<std::string>()];
      ops += (ops.empty() ? "" : "+") + n.at("op_type").get<std::string>();
    }
  std::multiset<std::string> out;
  for (const auto& [name, ops] : groups) out.insert(ops);
  return out;
}

}  // namespace ephost_test
