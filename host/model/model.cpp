#include "model/model.h"

#include <onnx/onnx_pb.h>

namespace ephost {

Model::Model() : proto(std::make_unique<onnx::ModelProto>()) {}
Model::~Model() = default;

int64_t Model::opset(const std::string& domain) const {
  auto it = opsets.find(domain == "ai.onnx" ? std::string() : domain);
  return it == opsets.end() ? -1 : it->second;
}

void Model::read_header() {
  ir_version = proto->ir_version();
  opsets.clear();
  for (const auto& op : proto->opset_import())
    opsets[op.domain() == "ai.onnx" ? std::string() : op.domain()] = op.version();
}

}  // namespace ephost
