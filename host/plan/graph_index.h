// A checked, compact copy of a PlanGraph's edges: each step's inputs and outputs in flat arrays
// (absent optionals dropped) and the producer of each value. Made once by one sequential walk over
// the steps, so the planners' later walks in execution order (random step ids) touch a few dense
// arrays instead of every step's own heap vectors.
#pragma once

#include <cstddef>
#include <vector>

#include "plan/plan_graph.h"

namespace ephost::plan {

// A run of value ids inside a GraphIndex.
struct ValueIds {
  const int* first;
  const int* last;
  const int* begin() const { return first; }
  const int* end() const { return last; }
};

struct GraphIndex {
  std::vector<int> producer;      // per value: the step that outputs it, -1 when none does
  std::vector<int> input_begin;   // step s reads inputs[input_begin[s] .. input_begin[s + 1])
  std::vector<int> inputs;
  std::vector<int> output_begin;  // step s writes outputs[output_begin[s] .. output_begin[s + 1])
  std::vector<int> outputs;

  ValueIds inputs_of(int step) const { return range(inputs, input_begin, step); }
  ValueIds outputs_of(int step) const { return range(outputs, output_begin, step); }

 private:
  static ValueIds range(const std::vector<int>& ids, const std::vector<int>& begin, int step) {
    const int* base = ids.data();
    return {base + begin[static_cast<size_t>(step)], base + begin[static_cast<size_t>(step) + 1]};
  }
};

// Throws INVALID_GRAPH when a step names a value id outside the graph, when two steps (or one step
// twice) output the same value, or when a step outputs a graph input, an initializer or an
// outer-scope value.
GraphIndex index_graph(const PlanGraph& g);

}  // namespace ephost::plan
