// Node-local typing (model/node_types.h): nodes added to a model are typed from the types around them,
// subgraphs included, without inferring the whole model again; and function expansion types what it
// splices in that way.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <unordered_set>

#include "model/creation_counts.h"
#include "model/loader.h"
#include "model/node_types.h"
#include "model_builders.h"
#include "transform/function_expansion.h"

using namespace ephost;
using namespace ephost_test;

namespace {

std::unique_ptr<Model> load(const onnx::ModelProto& m) {
  const std::string bytes = serialize(m);
  return load_model_from_buffer(bytes.data(), bytes.size(), LoadOptions{});
}

std::vector<int64_t> dims_of(const onnx::ValueInfoProto& vi) {
  std::vector<int64_t> dims;
  for (const auto& d : vi.type().tensor_type().shape().dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return dims;
}

const onnx::ValueInfoProto* find_info(const std::vector<onnx::ValueInfoProto>& infos, const std::string& name) {
  for (const auto& vi : infos)
    if (vi.name() == name) return &vi;
  return nullptr;
}

}  // namespace

TEST(NodeTypes, TypesNewNodesFromTheTypesAroundThem) {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {2, 3});
  add_node(g, "Relu", {"X"}, {"Y"}, "relu");
  add_output(g, "Y", kFloat, {2, 3});
  auto model = load(m);

  // Two new nodes reading the graph's Y and each other: Transpose(Y) -> t, Cast(t to int64) -> c.
  onnx::NodeProto transpose, cast;
  transpose.set_op_type("Transpose");
  transpose.add_input("Y");
  transpose.add_output("t");
  cast.set_op_type("Cast");
  cast.add_input("t");
  cast.add_output("c");
  attr_int(&cast, "to", kInt64);
  const GraphTypes types(model->proto->graph(), nullptr);
  CreationCounts counts;
  std::vector<onnx::ValueInfoProto> typed;
  {
    CountCreationWork count(counts);
    typed = infer_node_types(*model, {&transpose, &cast}, [&](const std::string& n) { return types.find(n); });
  }
  EXPECT_EQ(counts.shape_inferences, 0u);  // not a whole-model inference
  ASSERT_EQ(typed.size(), 2u);
  ASSERT_NE(find_info(typed, "t"), nullptr);
  EXPECT_EQ(find_info(typed, "t")->type().tensor_type().elem_type(), kFloat);
  EXPECT_EQ(dims_of(*find_info(typed, "t")), (std::vector<int64_t>{3, 2}));
  ASSERT_NE(find_info(typed, "c"), nullptr);
  EXPECT_EQ(find_info(typed, "c")->type().tensor_type().elem_type(), kInt64);
  EXPECT_EQ(dims_of(*find_info(typed, "c")), (std::vector<int64_t>{3, 2}));
}

TEST(NodeTypes, UnknownInputsLeaveOutputsUntyped) {
  auto model = load([] {
    auto m = make_model(13);
    auto* g = m.mutable_graph();
    add_input(g, "X", kFloat, {2});
    add_node(g, "Relu", {"X"}, {"Y"}, "relu");
    add_output(g, "Y", kFloat, {2});
    return m;
  }());
  onnx::NodeProto relu;
  relu.set_op_type("Relu");
  relu.add_input("nobody_typed_this");
  relu.add_output("r");
  const auto typed = infer_node_types(*model, {&relu}, [](const std::string&) { return nullptr; });
  EXPECT_EQ(find_info(typed, "r"), nullptr);
}

TEST(NodeTypes, GraphTypesPreferDeclaredTypesAndLookOutward) {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {4});
  add_initializer(g, float_tensor("W", {2, 2}, {1, 2, 3, 4}));
  add_node(g, "Relu", {"X"}, {"Y"}, "relu");
  add_output(g, "Y", kFloat, {4});
  onnx::GraphProto inner;
  add_input(&inner, "Z", kInt64, {1});
  const GraphTypes outer_types(*g, nullptr);
  const GraphTypes inner_types(inner, &outer_types);
  ASSERT_NE(inner_types.find("X"), nullptr);
  EXPECT_EQ(inner_types.find("X")->tensor_type().elem_type(), kFloat);
  ASSERT_NE(inner_types.find("W"), nullptr);
  EXPECT_EQ(inner_types.find("W")->tensor_type().shape().dim_size(), 2);
  EXPECT_EQ(inner_types.find("Z")->tensor_type().elem_type(), kInt64);
  EXPECT_EQ(outer_types.find("Z"), nullptr);
  EXPECT_EQ(inner_types.find("missing"), nullptr);
}

// MeanVarianceNormalization's body, spliced into the IR: every value it defines is typed, and the model
// was neither inferred again nor its IR rebuilt.
TEST(NodeTypes, FunctionExpansionTypesTheBody) {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {2, 3, 2, 2});
  add_node(g, "MeanVarianceNormalization", {"X"}, {"Y"}, "mvn");
  add_output(g, "Y", kFloat, {2, 3, 2, 2});
  auto model = load(m);
  auto main = build_graph_ir(*model);
  CreationCounts counts;
  {
    CountCreationWork count(counts);
    FunctionBodies bodies(*model);
    EXPECT_EQ(expand_function_nodes(bodies, *main, {main->nodes[0].get()}), 1u);
  }
  EXPECT_EQ(counts.shape_inferences, 0u);
  EXPECT_EQ(counts.ir_builds, 0u);
  ASSERT_GT(main->nodes.size(), 1u);
  for (const auto& n : main->nodes)
    for (const Value* o : n->outputs) {
      ASSERT_NE(o, nullptr);
      EXPECT_EQ(o->type.elem_type, kFloat) << o->name << " (" << n->op_type << ")";
      EXPECT_TRUE(o->type.has_shape) << o->name << " (" << n->op_type << ")";
    }
}
