// ai.onnx opset 22 (ONNX 1.17): bfloat16 for 47 operators (the trigonometric functions, the
// convolutions and pools, the recurrent networks, the random generators, RoiAlign, the normalizations
// and the activations). Each version keeps the meaning of the one before and accepts bfloat16
// wherever that one accepted float.
#include "opsets/opsets.h"
#include "opsets/schema_util.h"

namespace ephost::opsets {

namespace {

constexpr int kOpset = 22;

TypeList with_bfloat16(const std::string&, const TypeList& allowed) {
  for (const std::string& t : allowed)
    if (t == "tensor(float)") return {"tensor(bfloat16)"};
  return {};
}

}  // namespace

void add_opset22_schemas(std::vector<onnx::OpSchema>& out) {
  for (const char* op :
       {"Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "AveragePool", "Bernoulli", "Conv", "ConvTranspose", "Cos",
        "Cosh", "DeformConv", "Det", "Dropout", "Elu", "EyeLike", "GRU", "GlobalAveragePool", "GlobalLpPool",
        "GlobalMaxPool", "HardSigmoid", "HardSwish", "InstanceNormalization", "LSTM", "LpNormalization", "LpPool",
        "MaxPool", "MaxRoiPool", "MaxUnpool", "Mish", "Multinomial", "NegativeLogLikelihoodLoss", "RNN",
        "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "RoiAlign", "Round", "Selu", "Sin",
        "Sinh", "Softplus", "Softsign", "Tan", "ThresholdedRelu"})
    out.push_back(types_only_version(op, kOpset, with_bfloat16));
}

}  // namespace ephost::opsets
