#include "op_versions.h"

#include <unordered_map>
#include <vector>

namespace ephost::cpu {

namespace {

struct Version {
  int64_t opset;
  bool types_only;  // the version only accepts more element types
};

// Operator versions added in opsets 18 to kNewestOpset, from ONNX's Changelog.md. New operators are
// listed too (their first version), so a kernel of a new operator starts there.
const std::unordered_map<std::string, std::vector<Version>>& history() {
  static const auto* table = [] {
    auto* t = new std::unordered_map<std::string, std::vector<Version>>();
    auto add = [&](int64_t opset, bool types_only, std::initializer_list<const char*> ops) {
      for (const char* op : ops) (*t)[op].push_back({opset, types_only});
    };
    // 18 (ONNX 1.13)
    add(18, false, {"BitwiseAnd", "BitwiseNot", "BitwiseOr", "BitwiseXor", "CenterCropPad", "Col2Im",
                    "GroupNormalization", "LpPool", "Mish", "OptionalGetElement", "OptionalHasElement", "Pad",
                    "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
                    "ReduceMin", "ReduceProd", "ReduceSumSquare", "Resize", "ScatterElements", "ScatterND",
                    "Split"});
    // 19 (ONNX 1.14): float8 types; new attributes and modes
    add(19, true, {"Constant", "Equal", "Identity", "If", "Loop", "Reshape", "Scan", "Shape", "Size",
                   "DequantizeLinear"});
    add(19, false, {"AveragePool", "Cast", "CastLike", "DeformConv", "Pad", "QuantizeLinear", "Resize"});
    // 20 (ONNX 1.15)
    add(20, true, {"ConstantOfShape", "IsInf", "IsNaN", "ReduceMax", "ReduceMin"});
    add(20, false, {"AffineGrid", "DFT", "Gelu", "GridSample", "ImageDecoder", "RegexFullMatch", "StringConcat",
                    "StringSplit"});
    // 21 (ONNX 1.16): int4 and uint4; blocked quantization; GroupNormalization's scale and bias per channel
    add(21, true, {"Cast", "CastLike", "Constant", "ConstantOfShape", "Flatten", "Identity", "If", "Loop", "Pad",
                   "QLinearMatMul", "Reshape", "Scan", "Shape", "Size", "Squeeze", "Transpose", "Unsqueeze"});
    add(21, false, {"DequantizeLinear", "GroupNormalization", "QuantizeLinear"});
    // 22 (ONNX 1.17): bfloat16 for these
    add(22, true, {"Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "AveragePool", "Bernoulli", "Conv",
                   "ConvTranspose", "Cos", "Cosh", "DeformConv", "Det", "Dropout", "Elu", "EyeLike", "GRU",
                   "GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool", "HardSigmoid", "HardSwish",
                   "InstanceNormalization", "LSTM", "LpNormalization", "LpPool", "MaxPool", "MaxRoiPool",
                   "MaxUnpool", "Mish", "Multinomial", "NegativeLogLikelihoodLoss", "RNN", "RandomNormal",
                   "RandomNormalLike", "RandomUniform", "RandomUniformLike", "RoiAlign", "Round", "Selu", "Sin",
                   "Sinh", "Softplus", "Softsign", "Tan", "ThresholdedRelu"});
    // 23 (ONNX 1.18): float4e2m1; Attention, RMSNormalization, RotaryEmbedding
    // (DequantizeLinear only accepts float4e2m1; QuantizeLinear adds precision.)
    add(23, true, {"Cast", "CastLike", "Constant", "ConstantOfShape", "DequantizeLinear", "Flatten", "Identity", "If",
                   "Loop", "Pad", "Reshape", "Scan", "Shape", "Size", "Squeeze", "Transpose", "Unsqueeze"});
    add(23, false, {"Attention", "QuantizeLinear", "RMSNormalization", "RotaryEmbedding"});
    // 24 (ONNX 1.19): float8e8m0; Attention changed; Swish, TensorScatter
    // (QuantizeLinear only accepts a float8e8m0 scale; DequantizeLinear adds output_dtype; Cast's and
    // CastLike's round_mode applies to float8e8m0 targets only.)
    add(24, true, {"Cast", "CastLike", "Constant", "ConstantOfShape", "Flatten", "Identity", "If", "Loop", "Pad",
                   "QuantizeLinear", "Reshape", "Scan", "Shape", "Size", "SplitToSequence", "Squeeze", "TopK",
                   "Transpose", "Unsqueeze"});
    add(24, false, {"Attention", "DequantizeLinear", "Swish", "TensorScatter"});
    // 25 (ONNX 1.20): int2 and uint2
    add(25, true, {"Cast", "CastLike", "Constant", "ConstantOfShape", "DequantizeLinear", "Flatten", "Identity", "If",
                   "Loop", "Pad", "QuantizeLinear", "Reshape", "Scan", "Shape", "Size", "Squeeze", "Transpose",
                   "Unsqueeze"});
    // 26: BitCast, CumProd
    add(26, false, {"BitCast", "CumProd"});
    // 27: CausalConvWithState, LinearAttention; Range's new version is taken as a change of meaning
    // until a kernel is checked against it (a types-only entry would let the Range-11 kernel run it).
    add(27, false, {"CausalConvWithState", "LinearAttention", "Range"});
    return t;
  }();
  return *table;
}

}  // namespace

int64_t last_opset_of_version(const std::string& op, int64_t implemented) {
  const auto& h = history();
  auto it = h.find(op);
  if (it == h.end()) return kNewestOpset;
  for (const Version& v : it->second)  // ascending
    if (v.opset > implemented && !v.types_only) return v.opset - 1;
  return kNewestOpset;
}

int64_t newest_version_after_17(const std::string& op, int64_t opset) {
  const auto& h = history();
  auto it = h.find(op);
  int64_t found = 0;
  if (it != h.end())
    for (const Version& v : it->second)
      if (v.opset <= opset) found = v.opset;
  return found;
}

}  // namespace ephost::cpu
