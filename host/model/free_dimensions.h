// Free-dimension overrides (session.free_dimension_override.<name>, ..._denotation.<denotation>; seed:
// ONNX Runtime's FreeDimensionOverrideTransformer): symbolic graph input dimensions fixed to a size when
// the model is loaded, before shape inference, so the graph's shapes become static and providers can
// plan at session creation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace onnx {
class GraphProto;
}  // namespace onnx

namespace ephost {

struct FreeDimensionOverride {
  std::string key;          // the session option that set it, for messages
  std::string name;         // the dim_param (or denotation) it matches
  bool by_denotation = false;
  int64_t value = 0;        // > 0
};

// One graph input dimension an override fixed.
struct OverriddenDimension {
  std::string input;
  size_t axis = 0;
  std::string key;
  int64_t value = 0;
};

// Sets every main-graph input dimension whose dim_param (or denotation) an override names to its value
// (a dimension already fixed is left alone). Logs a warning naming each override that matched nothing.
// Returns the dimensions it fixed.
std::vector<OverriddenDimension> apply_free_dimension_overrides(onnx::GraphProto& graph,
                                                                const std::vector<FreeDimensionOverride>& overrides);

}  // namespace ephost
