// The planner's input: an abstract graph of values and steps, independent of the graph IR. The
// executor builds it: a step is what it runs as one unit (a single node's kernel, or a fused group's
// compiled function), a value is a tensor that steps read and write. Ids are indices into the vectors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ephost::plan {

struct PlanValue {
  std::string name;            // for messages and describe(); may be empty
  int64_t static_bytes = -1;   // byte size known before running (all dims known), else -1
  // "" unless the size is known symbolically: two values with the same non-empty key always have
  // the same byte size (e.g. "f32[N,64,80,80]").
  std::string shape_key;
  bool is_graph_input = false;
  bool is_initializer = false;
  bool is_graph_output = false;
  bool is_outer_scope = false;  // provided by an enclosing graph (subgraph of If/Loop/Scan)
  int32_t device = 0;           // memory blocks are per device
};

// An output the step may write into the buffer of one of its inputs (ONNX Runtime's MayInplace and
// Alias): positions in PlanStep::inputs and PlanStep::outputs.
struct InPlacePair {
  int input = -1;
  int output = -1;
};

struct PlanStep {
  std::string name;         // for messages; may be empty
  std::vector<int> inputs;  // value ids, including implicit (subgraph) inputs; -1 = absent optional
  std::vector<int> outputs; // value ids; -1 = absent optional
  // Outputs that may take their input's buffer when the step is that input's last reader; empty for
  // every step whose kernel did not declare so.
  std::vector<InPlacePair> in_place;
};

struct PlanGraph {
  std::vector<PlanValue> values;
  std::vector<PlanStep> steps;
};

// "'conv1' (#3)", or "#3" for an unnamed step: how messages name a step.
inline std::string step_label(const PlanGraph& g, int step) {
  const std::string& name = g.steps[static_cast<size_t>(step)].name;
  return name.empty() ? "#" + std::to_string(step) : "'" + name + "' (#" + std::to_string(step) + ")";
}

// "'x' (v5)", or "v5" for an unnamed value: how messages name a value.
inline std::string value_label(const PlanGraph& g, int value) {
  const std::string& name = g.values[static_cast<size_t>(value)].name;
  return name.empty() ? "v" + std::to_string(value) : "'" + name + "' (v" + std::to_string(value) + ")";
}

}  // namespace ephost::plan
