// write_model_proto (graph/graph_writer.h): an edited IR written back as ONNX builds an IR with the same
// nodes (indices, names), values and types, initializers restored after their bytes left the proto, in
// subgraphs too; the written model passes onnx's checker and runs.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>

#include "graph/graph_editor.h"
#include "graph/graph_writer.h"
#include "model/loader.h"
#include "model/tensor_proto.h"
#include "model_builders.h"
#include "session_helpers.h"

using namespace ephost;
using namespace ephost_test;

namespace {

onnx::NodeProto node(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs,
                     const std::string& name) {
  onnx::NodeProto n;
  n.set_op_type(op);
  n.set_name(name);
  for (auto& in : inputs) n.add_input(in);
  for (auto& out : outputs) n.add_output(out);
  return n;
}

// Y = If(cond) { then: Relu(X) + W } { else: Neg(X) }, W an initializer of the main graph; an unnamed
// node at the end.
onnx::ModelProto branch_model() {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "cond", kBool, {});
  add_input(g, "X", kFloat, {2});
  add_initializer(g, float_tensor("W", {2}, {10, 20}));
  onnx::GraphProto then_g;
  then_g.set_name("then");
  add_initializer(&then_g, float_tensor("B", {2}, {1, 2}));
  add_node(&then_g, "Relu", {"X"}, {"r"}, "then_relu");
  add_node(&then_g, "Add", {"r", "W"}, {"s"}, "then_add");
  add_node(&then_g, "Add", {"s", "B"}, {"t"}, "then_bias");
  add_output(&then_g, "t", kFloat, {2});
  onnx::GraphProto else_g;
  else_g.set_name("else");
  add_node(&else_g, "Neg", {"X"}, {"e"}, "else_neg");
  add_output(&else_g, "e", kFloat, {2});
  auto* n = add_node(g, "If", {"cond"}, {"y"}, "if");
  attr_graph(n, "then_branch", then_g);
  attr_graph(n, "else_branch", else_g);
  add_node(g, "Identity", {"y"}, {"Y"}, "");
  add_output(g, "Y", kFloat, {2});
  return m;
}

void expect_same_graph(const Graph& a, const Graph& b) {
  ASSERT_EQ(a.nodes.size(), b.nodes.size()) << a.name;
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    EXPECT_EQ(a.nodes[i]->name, b.nodes[i]->name);
    EXPECT_EQ(a.nodes[i]->op_type, b.nodes[i]->op_type);
    for (size_t k = 0; k < a.nodes[i]->subgraphs.size(); ++k)
      expect_same_graph(*a.nodes[i]->subgraphs[k].second, *b.nodes[i]->subgraphs[k].second);
  }
  ASSERT_EQ(a.initializers.size(), b.initializers.size()) << a.name;
  for (size_t i = 0; i < a.initializers.size(); ++i) {
    EXPECT_EQ(a.initializers[i]->name, b.initializers[i]->name);
    EXPECT_EQ(a.initializers[i]->initializer->byte_size(), b.initializers[i]->initializer->byte_size());
    EXPECT_EQ(0, std::memcmp(a.initializers[i]->initializer->data(), b.initializers[i]->initializer->data(),
                             a.initializers[i]->initializer->byte_size()));
  }
  for (const auto& v : a.values) {
    if (v->is_outer_scope()) continue;
    const Value* w = b.find(v->name);
    ASSERT_NE(w, nullptr) << v->name;
    EXPECT_EQ(w->type.elem_type, v->type.elem_type) << v->name;
    EXPECT_EQ(w->type.dims, v->type.dims) << v->name;
  }
}

}  // namespace

TEST(GraphWriter, AnEditedIrWrittenBackBuildsTheSameIr) {
  auto ir = load_with_ir(branch_model());
  Graph& main = *ir.main;
  Graph& then_branch = *main.nodes[0]->subgraph("then_branch");
  GraphEditor editor(main);
  editor.replace(*then_branch.nodes[0], {node("Abs", {"X"}, {"then/a"}, "then/abs"),
                                         node("Add", {"X", "then/a"}, {"then/s"}, "then/sum"),
                                         node("Mul", {"then/s", "W"}, {"r"}, "then/scale")});
  editor.commit();
  release_initializer_data(*ir->proto);  // as the session does: the bytes live in the IR only

  onnx::ModelProto written;
  write_model_proto(main, &written);
  auto rebuilt = load_with_ir(written);  // onnx's checker and the loader's structure check accept it
  expect_same_graph(main, *rebuilt.main);
  EXPECT_EQ(rebuilt.main->nodes[1]->name, main.nodes[1]->name);  // the unnamed node keeps its IR name
  const Graph& rebuilt_then = *rebuilt.main->nodes[0]->subgraph("then_branch");
  EXPECT_EQ(rebuilt_then.nodes[0]->name, "then/abs");
  EXPECT_EQ(rebuilt_then.find("then/a")->type.dims, (std::vector<int64_t>{2}));

  // And it computes what the edit says: r = (X + |X|) * W, then t = r + W + B.
  auto session = create_session(written);
  Tensor cond = Tensor::allocate(EPHOST_ELEMENT_BOOL, {});
  cond.data_as<uint8_t>()[0] = 1;
  Tensor x = Tensor::allocate(EPHOST_ELEMENT_FLOAT, {2});
  x.data_as<float>()[0] = -3.0f;
  x.data_as<float>()[1] = 4.0f;
  auto out = session->run({"cond", "X"}, {RuntimeValue(cond), RuntimeValue(x)}, {});
  ASSERT_EQ(out.size(), 1u);
  const float* y = out[0].tensor().data_as<float>();
  EXPECT_FLOAT_EQ(y[0], 0.0f * 10 + 10 + 1);
  EXPECT_FLOAT_EQ(y[1], 8.0f * 20 + 20 + 2);
}

TEST(GraphWriter, FoldedConstantsAreWrittenAsInitializers) {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {2});
  add_initializer(g, float_tensor("c", {2}, {1, 2}));
  add_node(g, "Neg", {"c"}, {"nc"}, "neg_constant");
  add_node(g, "Add", {"X", "nc"}, {"Y"}, "add");
  add_output(g, "Y", kFloat, {2});
  auto ir = load_with_ir(m);
  GraphEditor editor(*ir.main);
  editor.fold(*ir.main->nodes[0],
              {std::make_shared<Tensor>(tensor_from_proto(float_tensor("nc", {2}, {-1, -2})))});
  editor.commit();
  onnx::ModelProto written;
  write_model_proto(*ir.main, &written);
  ASSERT_EQ(written.graph().node_size(), 1);
  ASSERT_EQ(written.graph().initializer_size(), 2);
  EXPECT_EQ(written.graph().initializer(1).name(), "nc");
  auto rebuilt = load_with_ir(written);
  EXPECT_TRUE(rebuilt.main->find("nc")->is_constant_initializer());
}
