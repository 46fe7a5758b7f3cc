// A loaded model, at the level of its ModelProto: the proto, where it came from, and the opsets it
// imports. The in-memory graph built from it (graph/graph.h) is a separate object that points into
// `proto`, so a Model must outlive every Graph built from it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model/free_dimensions.h"

namespace onnx {
class ModelProto;
}  // namespace onnx

namespace ephost {

class InitializerRelease;

class Model {
 public:
  Model();
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  std::unique_ptr<onnx::ModelProto> proto;  // owns every proto a Graph built from it points at
  std::string path;      // model file path, "" when loaded from a buffer
  std::string base_dir;  // where external data is resolved from
  int64_t ir_version = 0;
  std::map<std::string, int64_t> opsets;  // domain ("" for ai.onnx) -> version
  // Graph input dimensions session.free_dimension_override* fixed at load (messages name the key).
  std::vector<OverriddenDimension> overridden_dimensions;
  // Which initializers may be freed once their readers are done, and how they are read back
  // (model/initializer_release.h); null until the session sets it up (then it lives as long as the Model).
  std::shared_ptr<InitializerRelease> initializer_release;

  // The opset of `domain` ("" or "ai.onnx" for the default domain), -1 when not imported.
  int64_t opset(const std::string& domain) const;
  // Sets ir_version and opsets from `proto` (the loader does this; models built by hand call it).
  void read_header();
};

}  // namespace ephost
