// The ai.onnx opsets the host accepts, and the operator schemas of the opsets that Debian's onnx 1.12
// does not know. onnx 1.12 stops at opset 17; every operator version added in a later opset is an
// onnx::OpSchema written here (opset18.cpp, opset19.cpp, ...: one file per opset), registered into
// onnx's own registry after the ai.onnx domain's version range has been raised, so that the checker,
// shape inference, function expansion and the loader's guards all see one registry and resolve
// versions as onnx does (the newest version of an operator at or below the model's opset).
//
// Adding an opset: raise kNewestOpset, write opsetNN.cpp with its schemas and list it in kOpsetTable
// (opsets.cpp); the CPU plugin's kernels say which operator versions they implement
// (plugins/cpu/op_versions.cpp).
#pragma once

#include <string>
#include <vector>

namespace onnx {
class OpSchema;
}  // namespace onnx

namespace ephost::opsets {

// The newest ai.onnx opset onnx 1.12 registers itself.
constexpr int kOnnxLibraryNewestOpset = 17;
// The newest ai.onnx opset a model may import: the ai.onnx domain's version range is raised to it.
constexpr int kNewestOpset = 27;
constexpr int kOldestOpset = 1;

// Registers the schemas written here with onnx, once per process (thread-safe; later calls return at
// once). Must run before any model is checked, inferred or expanded: the loader, the inference guards
// and the Env call it. Never throws: a schema onnx refused is logged, and registration_problem() says
// which.
void register_schemas();

// "" when every schema was registered, else what went wrong (the first problem).
const std::string& registration_problem();

// The schemas each opset file contributes (the since_version of each is that opset).
void add_opset18_schemas(std::vector<onnx::OpSchema>& out);
void add_opset19_schemas(std::vector<onnx::OpSchema>& out);
void add_opset20_schemas(std::vector<onnx::OpSchema>& out);
void add_opset21_schemas(std::vector<onnx::OpSchema>& out);
void add_opset22_schemas(std::vector<onnx::OpSchema>& out);
void add_opset23_schemas(std::vector<onnx::OpSchema>& out);
void add_opset24_schemas(std::vector<onnx::OpSchema>& out);
void add_opset25_schemas(std::vector<onnx::OpSchema>& out);
void add_opset26_schemas(std::vector<onnx::OpSchema>& out);
void add_opset27_schemas(std::vector<onnx::OpSchema>& out);

// Every (op_type, since_version) registered here, in registration order (for tests and tools).
std::vector<std::pair<std::string, int>> registered_versions();

}  // namespace ephost::opsets
