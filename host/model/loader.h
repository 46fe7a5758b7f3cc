// Model loading: bytes (file or buffer) -> a checked, shape-inferred Model whose ModelProto is ready
// for graph transforms and build_graph_ir (graph/). Schemas of non-standard operators the host
// understands (EPContext) must be registered with onnx first: the Env does it when it is created. The
// schemas of opsets above onnx 1.12's (opsets/opsets.h) are registered by the loader itself. Every failure is an ephost::Error with a status code a user
// recognises (NO_SUCHFILE, INVALID_PROTOBUF, INVALID_GRAPH, INVALID_ARGUMENT) and a message saying
// what was expected, what was found and where.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/free_dimensions.h"
#include "model/model.h"
#include "opsets/opsets.h"
#include "model/tensor_proto.h"

namespace ephost {

// The ai.onnx opsets a model may import: onnx 1.12's own (1 to 17) and those whose schemas host/opsets/
// registers (opsets/opsets.h). Models outside the range are rejected at load with INVALID_GRAPH; a
// model may also import no ai.onnx opset at all.
constexpr int64_t kMinSupportedOpset = opsets::kOldestOpset;
constexpr int64_t kMaxSupportedOpset = opsets::kNewestOpset;

struct LoadOptions {
  // session.model_external_initializers_file_folder_path: where external data of a model loaded from
  // a buffer lives. Empty: a buffer model with external data is an error that says to set it.
  std::string external_data_folder;
  bool run_checker = true;
  bool infer_shapes = true;
  // session.free_dimension_override*: applied to the graph inputs before the checker and shape
  // inference; the dimensions fixed are recorded in Model::overridden_dimensions.
  std::vector<FreeDimensionOverride> free_dimension_overrides;
};

// Reads, parses, checks the ai.onnx opset, resolves external data (relative to the model's folder, or
// LoadOptions::external_data_folder for a buffer; absolute paths, `..` and symlink escapes rejected;
// afterwards every tensor has its bytes in raw_data and data_location DEFAULT), turns sparse
// initializers into dense ones, checks the structure (duplicate definitions, inputs nobody defines,
// cycles; an acyclic but unsorted graph is sorted in place, stably), runs onnx::checker and shape
// inference (whose failures only log a warning). Does not build the IR.
std::unique_ptr<Model> load_model_from_file(const std::string& path, const LoadOptions& options);
std::unique_ptr<Model> load_model_from_buffer(const void* data, size_t size, const LoadOptions& options);

// Re-runs shape inference on model.proto (after graph transforms changed it). Counted as one
// whole-model shape inference (model/creation_counts.h).
void infer_model_shapes(Model& model);

// onnx shape inference on `proto`, guarded: skipped (false, with a warning) when a node does not match
// its schema; INVALID_GRAPH when an attribute it would use as an index is out of range
// (model/inference_guards.h); its own failures only log a warning. What infer_model_shapes and the
// node-local typing (model/node_types.h) run.
bool infer_shapes_guarded(onnx::ModelProto& proto);

// Drops the data of every initializer in `model` (main graph and subgraphs), keeping names, types and
// dims. Called once the IR has copied them into Tensors, so weights are not held twice; from then on
// Value::initializer is the only copy.
void release_initializer_data(onnx::ModelProto& model);

}  // namespace ephost
