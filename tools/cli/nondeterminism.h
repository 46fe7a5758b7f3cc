// Which operators of a model produce values no other implementation can reproduce: random
// generators, and Dropout in training mode. `ephost test` compares the outputs of such models by
// element type and shape only (their reference values came from numpy's random generator).
#pragma once

#include <string>
#include <vector>

namespace ephost_cli {

// The nondeterministic op types in the model at `model_path` (main graph, subgraphs and model-local
// functions), sorted and without duplicates; empty when every op is deterministic. These count:
// RandomNormal, RandomNormalLike, RandomUniform, RandomUniformLike, Bernoulli, Multinomial (ai.onnx),
// and Dropout whose training_mode input is present and not a constant false (before opset 7: whose
// is_test attribute is 0, its default). A file that does not parse gives an empty list: creating the
// session reports that.
std::vector<std::string> nondeterministic_ops(const std::string& model_path);

}  // namespace ephost_cli
