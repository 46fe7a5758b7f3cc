// ai.onnx opset 27 (ONNX 1.22): Range accepts float16 and bfloat16 and gains stash_type (the element
// type its values are accumulated in); the version keeps Range-11's inputs, inference and function
// body. CausalConvWithState and LinearAttention, new in 27, are not registered yet: a model using them
// is refused by the checker, naming the operator.
#include "opsets/opsets.h"
#include "opsets/schema_util.h"

namespace ephost::opsets {

void add_opset27_schemas(std::vector<onnx::OpSchema>& out) {
  const onnx::OpSchema::Attribute stash_type(
      "stash_type", "element type (TensorProto.DataType) the values are computed in (default: the inputs' type)",
      onnx::AttributeProto::INT, false);
  out.push_back(types_only_version(
      "Range", 27,
      [](const std::string&, const TypeList& allowed) {
        for (const std::string& t : allowed)
          if (t == "tensor(float)") return tensor_types({"float16", "bfloat16"});
        return TypeList{};
      },
      {stash_type}));
}

}  // namespace ephost::opsets
