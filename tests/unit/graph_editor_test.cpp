// GraphEditor (graph/graph_editor.h): splice, replace, add_initializer, fold, precompute and remove on a
// built IR keep producers, consumers, indices, orders and views exact, type what they add locally, refuse
// bad edits without changing anything, and a frozen IR refuses every edit.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>

#include "core/error.h"
#include "graph/graph.h"
#include "graph/graph_editor.h"
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

Node* node_named(const Graph& g, const std::string& name) {
  for (const auto& n : g.nodes)
    if (n->name == name) return n.get();
  return nullptr;
}

std::vector<std::string> order_names(const Graph& g) {
  std::vector<std::string> names;
  for (const Node* n : g.topological_order) names.push_back(n->name);
  return names;
}

bool reads(const Value* v, const Node* n) {
  return std::find(v->consumers.begin(), v->consumers.end(), n) != v->consumers.end();
}

// Indices dense and in place, every link both ways, the view the whole graph.
void expect_consistent(const Graph& g) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node* n = g.nodes[i].get();
    EXPECT_EQ(n->index, i) << n->name;
    EXPECT_EQ(n->owner, &g);
    for (const Value* in : n->inputs) {
      if (in) {
        EXPECT_TRUE(reads(in, n)) << n->name << " reads " << in->name;
      }
    }
    for (size_t k = 0; k < n->outputs.size(); ++k)
      if (n->outputs[k]) {
        EXPECT_EQ(n->outputs[k]->producer, n);
        EXPECT_EQ(n->outputs[k]->producer_output, k);
      }
  }
  for (size_t i = 0; i < g.values.size(); ++i) {
    const Value* v = g.values[i].get();
    EXPECT_EQ(v->index, i) << v->name;
    EXPECT_EQ(g.find(v->name), v) << v->name;
  }
  EXPECT_EQ(g.by_name.size(), g.values.size());
  EXPECT_EQ(g.topological_order.size(), g.nodes.size());
  ASSERT_TRUE(g.view);
  EXPECT_EQ(g.view->nodes.size(), g.nodes.size());
}

// X[2, 3] -> Relu -> r -> Neg -> n; Y = n + cc, where cc = Add(c, c) of an initializer.
onnx::ModelProto chain_model() {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {2, 3});
  add_initializer(g, float_tensor("c", {2, 3}, {1, 2, 3, 4, 5, 6}));
  add_node(g, "Relu", {"X"}, {"r"}, "relu");
  add_node(g, "Add", {"c", "c"}, {"cc"}, "add_constants");
  add_node(g, "Neg", {"r"}, {"n"}, "neg");
  add_node(g, "Add", {"n", "cc"}, {"Y"}, "add");
  add_output(g, "Y", kFloat, {2, 3});
  return m;
}

}  // namespace

TEST(GraphEditor, SpliceAddsTypedNodesReadingTheGraph) {
  auto ir = load_with_ir(chain_model());
  Graph& g = *ir.main;
  GraphEditor editor(g);
  auto added = editor.splice(g, {node("Transpose", {"X"}, {"t"}, "transpose"), node("Relu", {"t"}, {"tr"}, "tr")});
  editor.commit();
  ASSERT_EQ(added.size(), 2u);
  expect_consistent(g);
  const Value* t = g.find("t");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->producer, added[0]);
  EXPECT_TRUE(reads(g.find("X"), added[0]));
  EXPECT_TRUE(reads(t, added[1]));
  // Typed from what they read: the transpose of a [2, 3] float.
  EXPECT_EQ(t->type.elem_type, kFloat);
  EXPECT_EQ(t->type.dims, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(g.find("tr")->type.dims, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(added[1]->proto->op_type(), "Relu");  // the proto lives as long as the IR
  EXPECT_EQ(g.nodes.size(), 6u);
}

TEST(GraphEditor, ReplacePutsTheNewNodesWhereTheNodeWas) {
  auto ir = load_with_ir(chain_model());
  Graph& g = *ir.main;
  Value* r = g.find("r");
  Node* neg = node_named(g, "neg");
  GraphEditor editor(g);
  auto added = editor.replace(*node_named(g, "relu"),
                              {node("Abs", {"X"}, {"relu/a"}, "relu/abs"), node("Add", {"X", "relu/a"}, {"r"}, "relu/add")});
  editor.commit();
  expect_consistent(g);
  EXPECT_EQ(node_named(g, "relu"), nullptr);
  // The output keeps its Value: its consumer and type are untouched, its producer is the new node.
  EXPECT_EQ(g.find("r"), r);
  EXPECT_EQ(r->producer, added[1]);
  EXPECT_TRUE(reads(r, neg));
  EXPECT_EQ(r->type.dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(g.find("relu/a")->type.elem_type, kFloat);
  // X is read by the two new nodes only: the replaced node no longer counts as a consumer.
  EXPECT_EQ(g.find("X")->consumers, (std::vector<Node*>{added[0], added[1]}));
  EXPECT_EQ(order_names(g), (std::vector<std::string>{"relu/abs", "relu/add", "add_constants", "neg", "add"}));
  EXPECT_EQ(g.nodes[0]->name, "relu/abs");
}

TEST(GraphEditor, ReplaceTwiceNestsInPlace) {
  // A node that replaced another is itself replaced (a function body using another function).
  auto ir = load_with_ir(chain_model());
  Graph& g = *ir.main;
  GraphEditor editor(g);
  auto first = editor.replace(*node_named(g, "relu"), {node("Relu", {"X"}, {"r"}, "relu/inner")});
  editor.replace(*first[0], {node("Abs", {"X"}, {"r"}, "relu/inner/abs")});
  editor.commit();
  expect_consistent(g);
  EXPECT_EQ(order_names(g), (std::vector<std::string>{"relu/inner/abs", "add_constants", "neg", "add"}));
}

TEST(GraphEditor, FoldTurnsOutputsIntoConstantInitializers) {
  auto ir = load_with_ir(chain_model());
  Graph& g = *ir.main;
  const size_t values = g.values.size();
  GraphEditor editor(g);
  auto folded = std::make_shared<Tensor>(tensor_from_proto(float_tensor("cc", {2, 3}, {2, 4, 6, 8, 10, 12})));
  editor.fold(*node_named(g, "add_constants"), {folded});
  editor.commit();
  expect_consistent(g);
  const Value* cc = g.find("cc");
  ASSERT_NE(cc, nullptr);
  EXPECT_TRUE(cc->is_constant_initializer());
  EXPECT_EQ(cc->initializer, folded);
  EXPECT_EQ(cc->producer, nullptr);
  EXPECT_TRUE(std::find(g.view->initializers.begin(), g.view->initializers.end(), cc) != g.view->initializers.end());
  // c is read by nobody now: still an initializer, left out of the view.
  EXPECT_TRUE(g.find("c")->consumers.empty());
  EXPECT_TRUE(std::find(g.view->initializers.begin(), g.view->initializers.end(), g.find("c")) ==
              g.view->initializers.end());
  EXPECT_EQ(g.values.size(), values);
  EXPECT_EQ(g.nodes.size(), 3u);
}

TEST(GraphEditor, FoldRefusesAValueOfAnotherType) {
  auto ir = load_with_ir(chain_model());
  Graph& g = *ir.main;
  GraphEditor editor(g);
  auto wrong = std::make_shared<Tensor>(tensor_from_proto(int64_tensor("cc", {1}, {1})));
  expect_error([&] { editor.fold(*node_named(g, "add_constants"), {wrong}); }, EPHOST_INVALID_ARGUMENT,
               {"add_constants", "'cc'", "element type"});
  expect_error([&] { editor.fold(*node_named(g, "add_constants"), {}); }, EPHOST_INVALID_ARGUMENT, {"1 outputs"});
  EXPECT_EQ(g.find("cc")->producer, node_named(g, "add_constants"));
}

TEST(GraphEditor, RemoveDropsANodeNobodyReads) {
  auto m = chain_model();
  add_node(m.mutable_graph(), "Sigmoid", {"X"}, {"dead"}, "dead_end");
  auto ir = load_with_ir(m);
  Graph& g = *ir.main;
  const size_t values = g.values.size();
  GraphEditor editor(g);
  // A node whose output is read is refused, and nothing changes.
  expect_error([&] { editor.remove(*node_named(g, "neg")); }, EPHOST_INVALID_ARGUMENT, {"'n'", "read by node 'add'"});
  expect_error([&] { editor.remove(*node_named(g, "add")); }, EPHOST_INVALID_ARGUMENT, {"a graph output"});
  Node* dead = node_named(g, "dead_end");
  editor.remove(*dead);
  expect_error([&] { editor.remove(*dead); }, EPHOST_INVALID_ARGUMENT, {"already removed"});
  editor.commit();
  expect_consistent(g);
  EXPECT_EQ(g.find("dead"), nullptr);
  EXPECT_EQ(node_named(g, "dead_end"), nullptr);
  EXPECT_EQ(g.values.size(), values - 1);
  EXPECT_EQ(g.find("X")->consumers.size(), 1u);
  // The name is free again.
  GraphEditor again(g);
  again.splice(g, {node("Sigmoid", {"X"}, {"dead"}, "reborn")});
  again.commit();
  expect_consistent(g);
}

TEST(GraphEditor, AddAndRemoveInitializers) {
  // What the EPContext fallback does: a source model's weight goes in, then the nodes that read it; a
  // later edit of the same batch reads it too, and the node that edit replaces leaves c unread.
  auto ir = load_with_ir(chain_model());
  Graph& g = *ir.main;
  const size_t values = g.values.size();
  GraphEditor editor(g);
  auto weight = std::make_shared<Tensor>(tensor_from_proto(float_tensor("w", {2, 3}, {1, 1, 1, 1, 1, 1})));
  // A name the graph defines (an initializer, a node output), or no value, is refused and changes nothing.
  expect_error([&] { editor.add_initializer(g, "c", weight); }, EPHOST_INVALID_ARGUMENT, {"'c'", "already defined"});
  expect_error([&] { editor.add_initializer(g, "r", weight); }, EPHOST_INVALID_ARGUMENT, {"'r'", "already defined"});
  expect_error([&] { editor.add_initializer(g, "v", nullptr); }, EPHOST_INVALID_ARGUMENT, {"no value", "'v'"});
  EXPECT_EQ(g.values.size(), values);
  Value* w = editor.add_initializer(g, "w", weight);
  auto spliced = editor.splice(g, {node("Mul", {"X", "w"}, {"xw"}, "scale")});
  editor.replace(*node_named(g, "add_constants"), {node("Add", {"w", "w"}, {"cc"}, "add_w")});
  expect_error([&] { editor.remove_initializer(*g.find("X")); }, EPHOST_INVALID_ARGUMENT, {"'X'", "not a constant initializer"});
  expect_error([&] { editor.remove_initializer(*w); }, EPHOST_INVALID_ARGUMENT, {"'w'", "read by node 'scale'"});
  editor.remove_initializer(*g.find("c"));
  editor.commit();
  expect_consistent(g);
  EXPECT_EQ(g.find("c"), nullptr);
  ASSERT_EQ(g.find("w"), w);
  EXPECT_TRUE(w->is_constant_initializer());
  EXPECT_EQ(w->initializer, weight);
  EXPECT_EQ(w->type.elem_type, kFloat);
  EXPECT_EQ(w->type.dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(g.initializers, std::vector<Value*>{w});
  EXPECT_TRUE(std::find(g.view->initializers.begin(), g.view->initializers.end(), w) != g.view->initializers.end());
  EXPECT_TRUE(reads(w, spliced[0]));
  EXPECT_TRUE(reads(w, node_named(g, "add_w")));
  EXPECT_EQ(g.find("xw")->type.dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(g.values.size(), values + 1);  // c went, w and xw came
  freeze(g);
  expect_error([&] { editor.add_initializer(g, "late", weight); }, EPHOST_INVALID_ARGUMENT, {"frozen"});
}

TEST(GraphEditor, PrecomputeKeepsTheNodeAndItsOutputReadsAsAConstant) {
  auto ir = load_with_ir(chain_model());
  Graph& g = *ir.main;
  GraphEditor editor(g);
  Node* add_constants = node_named(g, "add_constants");
  auto wrong = std::make_shared<Tensor>(tensor_from_proto(int64_tensor("cc", {1}, {1})));
  expect_error([&] { editor.precompute(*add_constants, std::make_shared<PrecomputedNode>(
                                                           std::vector<std::shared_ptr<Tensor>>{wrong})); },
               EPHOST_INVALID_ARGUMENT, {"precompute", "'cc'", "element type"});
  // Not precomputed yet: its read output has no value to become an initializer.
  expect_error([&] { editor.keep_precomputed_as_initializers(*add_constants); }, EPHOST_INVALID_ARGUMENT,
               {"'cc'", "not precomputed"});
  // Computed on first request only, and once.
  auto value = std::make_shared<Tensor>(tensor_from_proto(float_tensor("cc", {2, 3}, {2, 4, 6, 8, 10, 12})));
  int computations = 0;
  editor.precompute(*add_constants, std::make_shared<PrecomputedNode>([&] {
                      ++computations;
                      return std::vector<std::shared_ptr<Tensor>>{value};
                    }));
  editor.commit();
  expect_consistent(g);
  const Value* cc = g.find("cc");
  ASSERT_NE(cc->precomputed, nullptr);
  EXPECT_TRUE(cc->is_constant());
  EXPECT_FALSE(cc->precomputed->computed());
  EXPECT_EQ(computations, 0);
  EXPECT_EQ(cc->constant_data(), value.get());
  EXPECT_EQ(cc->constant_data(), value.get());
  EXPECT_EQ(computations, 1);
  EXPECT_EQ(cc->producer, add_constants);
  EXPECT_FALSE(cc->is_initializer());
  EXPECT_EQ(g.nodes.size(), 4u);
  // After partitioning (no step runs the node): an initializer, the node kept as its record.
  GraphEditor after(g);
  after.keep_precomputed_as_initializers(*add_constants);
  after.commit();
  EXPECT_EQ(computations, 1);
  EXPECT_TRUE(cc->is_constant_initializer());
  EXPECT_EQ(cc->initializer, value);
  EXPECT_EQ(cc->producer, add_constants);
  EXPECT_TRUE(std::find(g.initializers.begin(), g.initializers.end(), cc) != g.initializers.end());
}

TEST(GraphEditor, APrecomputationThatFailsLeavesTheNodeAsItWas) {
  auto ir = load_with_ir(chain_model());
  Graph& g = *ir.main;
  Node* add_constants = node_named(g, "add_constants");
  {
    GraphEditor editor(g);
    editor.precompute(*add_constants, std::make_shared<PrecomputedNode>([]() -> std::vector<std::shared_ptr<Tensor>> {
                        throw std::runtime_error("no evaluator");
                      }));
    editor.commit();
  }
  const Value* cc = g.find("cc");
  EXPECT_THROW(cc->constant_data(), std::runtime_error);
  GraphEditor after(g);
  EXPECT_THROW(after.keep_precomputed_as_initializers(*add_constants), std::runtime_error);
  after.commit();
  EXPECT_FALSE(cc->is_initializer());
  EXPECT_TRUE(std::find(g.initializers.begin(), g.initializers.end(), cc) == g.initializers.end());
}

TEST(GraphEditor, RefusedEditsChangeNothing) {
  auto ir = load_with_ir(chain_model());
  Graph& g = *ir.main;
  Node* relu = node_named(g, "relu");
  GraphEditor editor(g);
  expect_error([&] { editor.replace(*relu, {node("Abs", {"X"}, {"other"}, "abs")}); }, EPHOST_INVALID_ARGUMENT,
               {"replacing node 'relu'", "output 'r'"});
  expect_error([&] { editor.replace(*relu, {node("Abs", {"r"}, {"r"}, "abs")}); }, EPHOST_INVALID_ARGUMENT,
               {"an output of the node it replaces"});
  expect_error([&] { editor.splice(g, {node("Abs", {"nowhere"}, {"a"}, "abs")}); }, EPHOST_INVALID_ARGUMENT,
               {"reads 'nowhere'"});
  expect_error([&] { editor.splice(g, {node("Abs", {"X"}, {"n"}, "abs")}); }, EPHOST_INVALID_ARGUMENT,
               {"defines 'n'", "already defined"});
  editor.commit();
  expect_consistent(g);
  EXPECT_EQ(g.find("r")->producer, relu);
  EXPECT_EQ(g.nodes.size(), 4u);
  EXPECT_TRUE(g.edited_protos.empty());
}

TEST(GraphEditor, ACycleIsReportedAtCommit) {
  auto ir = load_with_ir(chain_model());
  Graph& g = *ir.main;
  GraphEditor editor(g);
  // r := Identity(n), while n = Neg(r).
  editor.replace(*node_named(g, "relu"), {node("Identity", {"n"}, {"r"}, "loop")});
  expect_error([&] { editor.commit(); }, EPHOST_INVALID_GRAPH, {"cycle", "loop"});
}

TEST(GraphEditor, SubgraphEditLinksNewOuterScopeReads) {
  // main: a = Relu(X); out = If(cond) { then: t = Neg(a) } { else: e = Abs(a) }
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {2});
  add_input(g, "Z", kFloat, {2});
  add_input(g, "cond", kBool, {});
  add_node(g, "Relu", {"X"}, {"a"}, "relu");
  onnx::GraphProto then_g;
  then_g.set_name("then");
  add_node(&then_g, "Neg", {"a"}, {"t"}, "then_neg");
  add_output(&then_g, "t", kFloat, {2});
  onnx::GraphProto else_g;
  else_g.set_name("else");
  add_node(&else_g, "Abs", {"a"}, {"e"}, "else_abs");
  add_output(&else_g, "e", kFloat, {2});
  auto* n = add_node(g, "If", {"cond"}, {"out"}, "if");
  attr_graph(n, "then_branch", then_g);
  attr_graph(n, "else_branch", else_g);
  add_output(g, "out", kFloat, {2});
  auto ir = load_with_ir(m);
  Graph& main = *ir.main;
  Node* iff = node_named(main, "if");
  Graph& then_branch = *iff->subgraph("then_branch");
  Value* z = main.find("Z");
  EXPECT_FALSE(reads(z, iff));

  GraphEditor editor(main);
  editor.replace(*node_named(then_branch, "then_neg"),
                 {node("Neg", {"a"}, {"then/n"}, "then/neg"), node("Add", {"then/n", "Z"}, {"t"}, "then/add")});
  editor.commit();
  expect_consistent(main);
  expect_consistent(then_branch);
  // Z is read from inside the branch now: an outer-scope entry there, an implicit input of If here.
  const Value* inner_z = then_branch.find("Z");
  ASSERT_NE(inner_z, nullptr);
  EXPECT_EQ(inner_z->outer, z);
  EXPECT_TRUE(std::find(iff->implicit_inputs.begin(), iff->implicit_inputs.end(), z) != iff->implicit_inputs.end());
  EXPECT_TRUE(reads(z, iff));
  EXPECT_EQ(then_branch.find("then/n")->type.dims, (std::vector<int64_t>{2}));
}

TEST(GraphEditor, AFrozenIrRefusesEveryEdit) {
  auto ir = load_with_ir(chain_model());
  Graph& g = *ir.main;
  GraphEditor editor(g);
  freeze(g);
  expect_error([&] { GraphEditor late(g); }, EPHOST_INVALID_ARGUMENT, {"frozen"});
  expect_error([&] { editor.splice(g, {node("Abs", {"X"}, {"a"}, "abs")}); }, EPHOST_INVALID_ARGUMENT, {"frozen"});
  expect_error([&] { editor.remove(*node_named(g, "add")); }, EPHOST_INVALID_ARGUMENT, {"frozen"});
  expect_error([&] { editor.commit(); }, EPHOST_INVALID_ARGUMENT, {"frozen"});
  EXPECT_EQ(g.nodes.size(), 4u);
}

TEST(GraphEditor, TypeProtoRoundTrip) {
  TypeInfo tensor;
  tensor.kind = EPHOST_VALUE_TENSOR;
  tensor.elem_type = tensor.tensor_elem_type = kFloat;
  tensor.has_shape = true;
  tensor.dims = {-1, 3};
  tensor.dim_params = {"N", ""};
  TypeInfo sequence;
  sequence.kind = EPHOST_VALUE_SEQUENCE;
  sequence.tensor_elem_type = kInt64;
  TypeInfo optional;
  optional.kind = EPHOST_VALUE_OPTIONAL;
  optional.optional_kind = EPHOST_VALUE_TENSOR;
  optional.tensor_elem_type = kFloat;
  for (const TypeInfo& info : {tensor, sequence, optional}) {
    onnx::TypeProto proto;
    ASSERT_TRUE(type_proto_from_info(info, &proto));
    const TypeInfo back = type_info_from_proto(proto);
    EXPECT_EQ(back.kind, info.kind);
    EXPECT_EQ(back.optional_kind, info.optional_kind);
    EXPECT_EQ(back.tensor_elem_type, info.tensor_elem_type);
    EXPECT_EQ(back.elem_type, info.elem_type);
    EXPECT_EQ(back.has_shape, info.has_shape);
    EXPECT_EQ(back.dims, info.dims);
    EXPECT_EQ(back.dim_params, info.dim_params);
  }
  onnx::TypeProto unknown;
  EXPECT_FALSE(type_proto_from_info(TypeInfo{}, &unknown));
}
