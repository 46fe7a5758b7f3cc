// When each ai.onnx operator got a new version after opset 17 (ONNX's Changelog.md), for the kernel
// registry: a kernel states the newest version of its operator it implements (the opset that version
// came in), and covers the model opsets from there until the operator's next version that changes more
// than the accepted element types. A version that only adds element types does not end a kernel's
// range: its support check refuses the types it does not handle.
//
// Adding an opset: raise kNewestOpset, list the operator versions it adds in op_versions.cpp (the same
// versions the host registers schemas for, host/opsets/), and extend the kernels that implement them.
#pragma once

#include <cstdint>
#include <string>

namespace ephost::cpu {

// The newest ai.onnx opset whose operator versions op_versions.cpp lists: no kernel covers a model
// opset above it (the host may accept newer models; their nodes then find no CPU kernel).
constexpr int64_t kNewestOpset = 27;
// Below this every kernel states its range explicitly (the opsets onnx 1.12 knows).
constexpr int64_t kOnnxLibraryNewestOpset = 17;

// The last model opset (>= `implemented`) at which `op`'s version is the one introduced at or before
// `implemented`, ignoring versions that only add element types; kNewestOpset when it never changes.
int64_t last_opset_of_version(const std::string& op, int64_t implemented);

// The opset after 17 in which `op` got a version at or below `opset`, or 0 (for tests).
int64_t newest_version_after_17(const std::string& op, int64_t opset);

}  // namespace ephost::cpu
