// What a run is fed: binding inputs by name to the main graph's inputs, each checked against its
// declared type (kind, element type, shape), with errors that name the input and what was expected.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/runtime_value.h"
#include "graph/graph.h"
#include "model/free_dimensions.h"

namespace ephost {

// Throws INVALID_ARGUMENT for an unknown input, one given twice, a missing one or one that does not
// fit its declared type. Initializers that are also inputs may be overridden, else keep their value.
// A size that does not fit a dimension in `overridden` is refused naming the override's key.
std::vector<std::pair<const Value*, RuntimeValue>> bind_run_inputs(
    const Graph& main, const std::vector<std::string>& names, const std::vector<RuntimeValue>& values,
    const std::vector<OverriddenDimension>& overridden = {});

// Index of each requested output among the main graph's outputs (all of them when `names` is empty).
// Throws INVALID_ARGUMENT naming the model's outputs for an unknown name.
std::vector<size_t> pick_run_outputs(const Graph& main, const std::vector<std::string>& names);

}  // namespace ephost
