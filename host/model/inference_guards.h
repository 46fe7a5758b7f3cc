// Checks that run before onnx 1.12's shape inference for the operators whose inference trusts its
// inputs: an attribute out of range there is an out-of-bounds access in onnx, not an error (GatherND's
// batch_dims, LayerNormalization's axis, ...). Each guard wraps the operator's inference function in
// onnx's schema registry (every opset version of it); a node that fails a guard is not inferred, and
// the problem is reported as an INVALID_GRAPH error naming the node, attribute, value and valid range.
#pragma once

#include <string>
#include <vector>

namespace ephost {

// Wraps the inference functions once per process (later calls do nothing). Must run before any
// shape inference: infer_model_shapes calls it.
void install_inference_guards();

// Collects what the guards refused while `*this` lives, on the calling thread (shape inference runs
// on the thread that asked for it).
class GuardFindings {
 public:
  GuardFindings();
  ~GuardFindings();
  GuardFindings(const GuardFindings&) = delete;
  GuardFindings& operator=(const GuardFindings&) = delete;
  struct Problem {
    std::string op_type;  // onnx's inference context does not say which node: callers find it by type
    std::string what;     // "batch_dims -2 is negative"
  };
  // In inference order.
  const std::vector<Problem>& problems() const { return problems_; }

 private:
  friend void report_guard_problem(const std::string& op_type, const std::string& problem);
  std::vector<Problem> problems_;
  GuardFindings* previous_;
};

// Records a problem in the innermost GuardFindings of this thread (for the guards).
void report_guard_problem(const std::string& op_type, const std::string& problem);

}  // namespace ephost
