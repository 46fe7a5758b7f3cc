// Time per operator, from a session's Chrome trace (`ephost bench --per-op`): the operator spans
// plugins report inside their steps (category "op", plugin ABI 4), and every step that reports none
// counted as one operator of its own, summed by operator type and by node.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace ephost_cli {

struct OperatorTime {
  std::string key;      // an op type ("Conv+Relu" for a fused chain), or a node (the span's name)
  double total_ms = 0;  // over every run of the trace
  int64_t count = 0;    // spans summed
};

struct OperatorProfile {
  int64_t runs = 0;                  // "model run" spans in the trace
  double total_ms = 0;               // of every operator (and step without operators)
  std::vector<OperatorTime> by_op_type;  // largest first
  std::vector<OperatorTime> by_node;     // largest first
};

// Reads a trace as Profiler writes it ({"traceEvents": [{"cat", "name", "dur" (µs), "args"}, ...]}).
OperatorProfile operator_profile(const nlohmann::json& trace);

// The `top` largest of each kind, in milliseconds per run, with their share of the total.
void print_operator_profile(const OperatorProfile& profile, size_t top, std::ostream& os);

// The same as JSON: {"runs", "total_ms_per_run", "by_op_type": [{"op_type", "ms_per_run", "share",
// "count"}], "by_node": [{"node", ...}]}, `top` of each.
nlohmann::ordered_json operator_profile_json(const OperatorProfile& profile, size_t top);

}  // namespace ephost_cli
