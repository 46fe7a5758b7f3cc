#include "diamond_models.h"

#include <onnx/onnx_pb.h>

namespace ephost_cts {
namespace {

void float_value(onnx::ValueInfoProto* v, const std::string& name) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_value(2);
  t->mutable_shape()->add_dim()->set_dim_value(3);
}

void node(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& in, const std::string& out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(op + "_" + out);
  for (const auto& i : in) n->add_input(i);
  n->add_output(out);
}

bool unary(const std::string& op) { return op != "Add" && op != "Mul" && op != "Sub"; }

std::string build(const std::string& a, const std::string& b, const std::string& c) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("ephost-plugin-cts");
  auto* opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("diamond");
  float_value(g->add_input(), "x");
  node(g, a, unary(a) ? std::vector<std::string>{"x"} : std::vector<std::string>{"x", "x"}, "a");
  node(g, b, {"a"}, "b");
  node(g, c, {"a", "b"}, "y");
  float_value(g->add_output(), "y");
  std::string bytes;
  m.SerializeToString(&bytes);
  return bytes;
}

}  // namespace

std::vector<DiamondModel> diamond_models() {
  std::vector<DiamondModel> out;
  for (const char* a : {"Add", "Mul", "Relu", "Sub", "Sigmoid", "Tanh"})
    for (const char* b : {"Neg", "Abs", "Floor", "Exp", "Softsign", "Relu", "Sigmoid"})
      for (const char* c : {"Add", "Mul", "Sub"})
        if (std::string(a) != b) out.push_back({std::string(a) + " -> " + b + " -> " + c, build(a, b, c)});
  return out;
}

}  // namespace ephost_cts
