// ONNX backend test cases (model.onnx + test_data_set_*/input_N.pb, output_N.pb), found and run one at a
// time, as ONNX Runtime's onnx_test_runner does: `ephost test` runs them, and so does the plugin
// conformance kit (ephost-plugin-cts). Each file is read as the model declares the value it binds to:
// a TensorProto, a SequenceProto or an OptionalProto. Models with nondeterministic ops (random
// generators, training-mode Dropout) have outputs whose values cannot be reproduced: those are
// compared by element type and shape only.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "ephost/ephost_cxx_api.h"
#include "tensor_values.h"

namespace ephost_cli {

struct TestCase {
  std::string name;             // as printed
  std::filesystem::path dir;    // holds model.onnx
};

// The cases at `path`: a model file (its folder), a case folder, or a folder searched recursively,
// sorted by name. NO_SUCHFILE when the folder cannot be searched.
std::vector<TestCase> find_cases(const std::string& path);

enum class Outcome { kPass, kFail, kSkip };
struct CaseResult {
  CaseResult(Outcome o = Outcome::kPass, std::string why = {}) : outcome(o), reason(std::move(why)) {}
  Outcome outcome;
  std::string reason;
  std::string note;  // for a pass: how it was judged, when not by value
};

// Runs every data set of case `c` with a session of `env` and `options` and compares the outputs with
// the expected ones within `tol`. With `required_provider` set, a case in which that provider runs no
// node is SKIP ("not claimed"), not judged: a plugin's numbers are only tested where it computes.
CaseResult run_case(const Ephost::Env& env, const Ephost::SessionOptions& options, const TestCase& c,
                    const Tolerance& tol, const std::string& required_provider = "");

// How many nodes `provider` runs in `session` (its partition report).
size_t nodes_run_by(const Ephost::Session& session, const std::string& provider);

}  // namespace ephost_cli
