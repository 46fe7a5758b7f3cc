#include "session/constant_evaluator.h"

#include <onnx/onnx_pb.h>

#include "core/error.h"
#include "ephost/ephost_session_options_keys.h"
#include "model/loader.h"
#include "session/session.h"

namespace ephost {

NodeEvaluator make_constant_evaluator(Env& env, const CreationDeadline& deadline) {
  return [&env, deadline](const onnx::NodeProto& node, const std::vector<const Tensor*>& inputs,
                const onnx::ModelProto& model) -> std::vector<Tensor> {
    onnx::ModelProto mini;
    mini.set_ir_version(model.ir_version());
    *mini.mutable_opset_import() = model.opset_import();
    onnx::GraphProto* g = mini.mutable_graph();
    g->set_name("constant_folding");
    *g->add_node() = node;
    for (int i = 0; i < node.input_size() && static_cast<size_t>(i) < inputs.size(); ++i) {
      if (node.input(i).empty() || !inputs[i]) continue;
      tensor_to_proto(*inputs[i], node.input(i), g->add_initializer());
    }
    for (const std::string& out : node.output())
      if (!out.empty()) g->add_output()->set_name(out);
    std::string bytes;
    if (!mini.SerializeToString(&bytes)) fail(EPHOST_FAIL, "constant folding: cannot serialize node '{}'", node.name());
    SessionOptions options;
    options.optimization_level = 0;
    options.intra_op_threads = 1;
    options.providers.push_back({"cpu", {}});
    options.set(kEphostSessionOptionsEnableMemPattern, "0");
    auto session = Session::create_trusted_from_buffer(env, bytes.data(), bytes.size(), options);
    std::vector<Tensor> outputs;
    const RunLimits limits = deadline.limits(fmt::format("constant folding of node '{}' ({})", node.name(), node.op_type()));
    for (RuntimeValue& v : session->run({}, {}, {}, nullptr, nullptr, &limits)) {
      // Initializers are tensors: a node making a sequence or an optional (SequenceEmpty) stays a node.
      if (!v.is_tensor()) fail(EPHOST_NOT_IMPLEMENTED, "node '{}' outputs a {}", node.name(), v.describe());
      outputs.push_back(std::move(v.tensor()));
    }
    return outputs;
  };
}

}  // namespace ephost
