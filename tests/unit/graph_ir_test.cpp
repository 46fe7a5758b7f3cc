// build_graph_ir: values, links, types, subgraphs with outer-scope values, topological order, errors.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <chrono>

#include "core/error.h"
#include "graph/graph.h"
#include "model/loader.h"
#include "model_builders.h"

using namespace ephost;
using namespace ephost_test;

namespace {

ModelAndIr build(const onnx::ModelProto& m) {
  ModelAndIr built;
  built.model = std::make_unique<Model>();
  *built.model->proto = m;
  built.model->read_header();
  built.main = build_graph_ir(*built.model);
  return built;
}

ModelAndIr load_and_build(const onnx::ModelProto& m) {
  std::string bytes = serialize(m);
  ModelAndIr built;
  built.model = load_model_from_buffer(bytes.data(), bytes.size(), LoadOptions{});
  built.main = build_graph_ir(*built.model);
  return built;
}

bool contains(const std::vector<Node*>& v, const Node* n) { return std::find(v.begin(), v.end(), n) != v.end(); }
bool contains(const std::vector<Value*>& v, const Value* x) { return std::find(v.begin(), v.end(), x) != v.end(); }

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

}  // namespace

TEST(GraphIR, ValuesLinksAndTypes) {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {-1, 3}, {"N", ""});
  add_input(g, "B", kFloat, {3});  // also an initializer below: an overridable default
  add_initializer(g, float_tensor("W", {3}, {1, 2, 3}));
  add_initializer(g, float_tensor("B", {3}, {0, 0, 0}));
  add_initializer(g, float_tensor("hi", {}, {6}));
  add_initializer(g, float_tensor("unused", {}, {7}));
  add_node(g, "Add", {"X", "W"}, {"a"});              // unnamed: "Add_0"
  add_node(g, "Mul", {"a", "B"}, {"b"}, "mul");
  add_node(g, "Clip", {"b", "", "hi"}, {"c"}, "clip");  // omitted optional input
  auto* cos = add_node(g, "ConstantOfShape", {"shape_of_c"}, {"filled"}, "fill");
  attr_tensor(cos, "value", float_tensor("", {1}, {0.5f}));
  add_node(g, "Shape", {"c"}, {"shape_of_c"});  // unnamed; the loader sorts it to index 3: "Shape_3"
  add_node(g, "Dropout", {"c"}, {"d", ""}, "drop");   // omitted optional output
  add_output(g, "c", kFloat, {-1, 3});
  add_output(g, "filled", kFloat, {}, false);
  add_output(g, "d", kFloat, {}, false);

  auto model = load_and_build(m);
  const Graph& main = *model.main;
  EXPECT_EQ(main.model, model.model.get());
  EXPECT_EQ(main.parent_graph, nullptr);
  EXPECT_EQ(main.parent_node, nullptr);
  EXPECT_EQ(main.name, "main");
  for (size_t i = 0; i < main.values.size(); ++i) {
    EXPECT_EQ(main.values[i]->index, i);
    EXPECT_EQ(main.values[i]->owner, &main);
    EXPECT_EQ(main.find(main.values[i]->name), main.values[i].get());
  }
  for (size_t i = 0; i < main.nodes.size(); ++i) EXPECT_EQ(main.nodes[i]->index, i);

  Value* X = main.find("X");
  ASSERT_TRUE(X);
  EXPECT_TRUE(X->is_graph_input);
  EXPECT_FALSE(X->is_initializer());
  EXPECT_EQ(X->type.elem_type, EPHOST_ELEMENT_FLOAT);
  EXPECT_EQ(X->type.dims, (std::vector<int64_t>{-1, 3}));
  EXPECT_EQ(X->type.dim_params, (std::vector<std::string>{"N", ""}));

  Value* W = main.find("W");
  EXPECT_TRUE(W->is_constant_initializer());
  EXPECT_FALSE(W->is_graph_input);
  EXPECT_EQ(W->type.dims, (std::vector<int64_t>{3}));
  EXPECT_EQ(W->initializer->data_as<float>()[2], 3.f);

  Value* B = main.find("B");
  EXPECT_TRUE(B->is_graph_input);
  EXPECT_TRUE(B->is_initializer());
  EXPECT_FALSE(B->is_constant_initializer());
  EXPECT_EQ(main.inputs, (std::vector<Value*>{X, B}));
  EXPECT_EQ(main.required_inputs(), (std::vector<Value*>{X}));
  EXPECT_EQ(main.initializers.size(), 4u);

  Node* add = node_named(main, "Add_0");
  ASSERT_TRUE(add);
  EXPECT_EQ(add->index, 0u);
  EXPECT_EQ(add->op_type, "Add");
  EXPECT_EQ(add->domain, "");
  EXPECT_EQ(add->owner, &main);
  EXPECT_EQ(add->proto, &model->proto->graph().node(0));
  EXPECT_EQ(add->inputs, (std::vector<Value*>{X, W}));
  ASSERT_TRUE(node_named(main, "Shape_3"));

  Value* a = main.find("a");
  EXPECT_EQ(a->producer, add);
  EXPECT_EQ(a->producer_output, 0u);
  Node* mul = node_named(main, "mul");
  EXPECT_EQ(a->consumers, (std::vector<Node*>{mul}));
  EXPECT_EQ(a->type.dims, (std::vector<int64_t>{-1, 3}));  // from shape inference
  EXPECT_EQ(a->type.dim_params[0], "N");
  EXPECT_TRUE(contains(X->consumers, add));
  EXPECT_EQ(W->producer, nullptr);

  Node* clip = node_named(main, "clip");
  ASSERT_EQ(clip->inputs.size(), 3u);
  EXPECT_EQ(clip->inputs[1], nullptr);
  EXPECT_EQ(clip->inputs[2], main.find("hi"));

  Node* drop = node_named(main, "drop");
  ASSERT_EQ(drop->outputs.size(), 2u);
  EXPECT_NE(drop->outputs[0], nullptr);
  EXPECT_EQ(drop->outputs[1], nullptr);

  Value* c = main.find("c");
  EXPECT_TRUE(c->is_graph_output);
  EXPECT_EQ(c->consumers.size(), 2u);  // Shape and Dropout
  EXPECT_EQ(main.outputs, (std::vector<Value*>{c, main.find("filled"), main.find("d")}));
  EXPECT_FALSE(a->is_graph_output);

  Node* fill = node_named(main, "fill");
  ASSERT_EQ(fill->tensor_attributes.count("value"), 1u);
  EXPECT_EQ(fill->tensor_attributes.at("value")->data_as<float>()[0], 0.5f);
  ASSERT_NE(fill->attribute("value"), nullptr);
  EXPECT_EQ(fill->attribute("nope"), nullptr);
  EXPECT_EQ(fill->subgraph("value"), nullptr);

  // The loader sorted the proto (Shape before fill); the order follows it.
  EXPECT_EQ(order_names(main), (std::vector<std::string>{"Add_0", "mul", "clip", "Shape_3", "fill", "drop"}));

  ASSERT_TRUE(main.view);
  EXPECT_EQ(main.view->graph, &main);
  EXPECT_EQ(main.view->nodes.size(), 6u);
  EXPECT_EQ(main.view->nodes[3]->name, "Shape_3");
  EXPECT_EQ(main.view->inputs.size(), 2u);
  EXPECT_EQ(main.view->outputs.size(), 3u);
  // Constant initializers that are used: not B (overridable, an input) nor "unused".
  EXPECT_EQ(main.view->initializers, (std::vector<const Value*>{W, main.find("hi")}));
  EXPECT_EQ(main.view->parent_node, nullptr);

  EXPECT_EQ(model->opset(""), 13);
  EXPECT_EQ(model->opset("ai.onnx"), 13);
}

// main: a = Relu(X); out = If(cond) { then: t = Add(a, X) } { else: e = Neg(a) }
onnx::ModelProto if_model() {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {2});
  add_input(g, "cond", kBool, {});
  add_node(g, "Relu", {"X"}, {"a"}, "relu");
  onnx::GraphProto then_g;
  then_g.set_name("then");
  add_node(&then_g, "Add", {"a", "X"}, {"t"}, "then_add");
  add_output(&then_g, "t", kFloat, {2});
  onnx::GraphProto else_g;
  else_g.set_name("else");
  add_node(&else_g, "Neg", {"a"}, {"e"}, "else_neg");
  add_output(&else_g, "e", kFloat, {2});
  auto* n = add_node(g, "If", {"cond"}, {"out"}, "if");
  attr_graph(n, "then_branch", then_g);
  attr_graph(n, "else_branch", else_g);
  add_output(g, "out", kFloat, {2});
  return m;
}

TEST(GraphIR, IfBranchesReadOuterScopeValues) {
  auto model = load_and_build(if_model());
  Graph& main = *model.main;
  Node* iff = node_named(main, "if");
  Value* a = main.find("a");
  Value* X = main.find("X");
  Value* cond = main.find("cond");

  EXPECT_EQ(iff->inputs, (std::vector<Value*>{cond}));
  EXPECT_EQ(iff->implicit_inputs, (std::vector<Value*>{a, X}));  // then-branch order, deduplicated
  EXPECT_TRUE(contains(a->consumers, iff));
  EXPECT_TRUE(contains(X->consumers, iff));
  EXPECT_EQ(a->consumers.size(), 1u);
  EXPECT_EQ(std::count(X->consumers.begin(), X->consumers.end(), iff), 1);
  EXPECT_TRUE(main.outer_scope.empty());

  ASSERT_EQ(iff->subgraphs.size(), 2u);
  EXPECT_EQ(iff->subgraphs[0].first, "then_branch");
  Graph* then_g = iff->subgraph("then_branch");
  Graph* else_g = iff->subgraph("else_branch");
  ASSERT_TRUE(then_g && else_g);
  EXPECT_EQ(then_g->parent_graph, &main);
  EXPECT_EQ(then_g->parent_node, iff);
  EXPECT_EQ(then_g->model, model.model.get());
  EXPECT_EQ(then_g->name, "then");
  EXPECT_EQ(then_g->view->parent_node, iff);

  ASSERT_EQ(then_g->outer_scope.size(), 2u);
  Value* a_then = then_g->find("a");
  ASSERT_TRUE(a_then);
  EXPECT_TRUE(a_then->is_outer_scope());
  EXPECT_EQ(a_then->outer, a);
  EXPECT_EQ(a_then->owner, then_g);
  EXPECT_EQ(a_then->producer, nullptr);
  EXPECT_EQ(a_then->type.dims, (std::vector<int64_t>{2}));
  EXPECT_EQ(then_g->values[a_then->index].get(), a_then);
  Node* then_add = node_named(*then_g, "then_add");
  EXPECT_EQ(then_add->inputs, (std::vector<Value*>{a_then, then_g->find("X")}));
  EXPECT_EQ(a_then->consumers, (std::vector<Node*>{then_add}));
  EXPECT_TRUE(then_g->find("t")->is_graph_output);
  EXPECT_EQ(then_g->outputs.size(), 1u);
  EXPECT_TRUE(then_g->inputs.empty());

  ASSERT_EQ(else_g->outer_scope.size(), 1u);
  EXPECT_EQ(else_g->outer_scope[0]->outer, a);

  EXPECT_EQ(order_names(main), (std::vector<std::string>{"relu", "if"}));
}

// main: a = Relu(X)
//   If(cond) then: s = Loop(M) { body(i, c_in): c_out = Identity(c_in); y = Add(a, a) -> scan y }
//            else: u = Unsqueeze(a, axes0)
// The Loop body reads `a` two levels up, and the then-branch reads M.
onnx::ModelProto loop_in_if_model() {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {2});
  add_input(g, "cond", kBool, {});
  add_input(g, "M", kInt64, {});
  add_initializer(g, int64_tensor("axes0", {1}, {0}));
  add_node(g, "Relu", {"X"}, {"a"}, "relu");

  onnx::GraphProto body;
  body.set_name("body");
  add_input(&body, "i", kInt64, {});
  add_input(&body, "c_in", kBool, {});
  add_node(&body, "Identity", {"c_in"}, {"c_out"}, "body_cond");
  add_node(&body, "Add", {"a", "a"}, {"y"}, "body_add");
  add_output(&body, "c_out", kBool, {});
  add_output(&body, "y", kFloat, {2});

  onnx::GraphProto then_g;
  then_g.set_name("then");
  auto* loop = add_node(&then_g, "Loop", {"M", ""}, {"s"}, "loop");
  attr_graph(loop, "body", body);
  add_output(&then_g, "s", kFloat, {-1, 2});

  onnx::GraphProto else_g;
  else_g.set_name("else");
  add_node(&else_g, "Unsqueeze", {"a", "axes0"}, {"u"}, "unsq");
  add_output(&else_g, "u", kFloat, {1, 2});

  auto* n = add_node(g, "If", {"cond"}, {"out"}, "if");
  attr_graph(n, "then_branch", then_g);
  attr_graph(n, "else_branch", else_g);
  add_output(g, "out", kFloat, {-1, 2});
  return m;
}

TEST(GraphIR, LoopNestedInIfReadsTwoLevelsUp) {
  auto model = load_and_build(loop_in_if_model());
  Graph& main = *model.main;
  Node* iff = node_named(main, "if");
  Value* a = main.find("a");
  Value* M = main.find("M");
  Value* axes0 = main.find("axes0");

  // then-branch reads M (Loop's input) and, through the Loop body, a; else-branch reads a and axes0.
  ASSERT_EQ(iff->implicit_inputs.size(), 3u);
  EXPECT_TRUE(contains(iff->implicit_inputs, a));
  EXPECT_TRUE(contains(iff->implicit_inputs, M));
  EXPECT_TRUE(contains(iff->implicit_inputs, axes0));
  EXPECT_EQ(a->consumers, (std::vector<Node*>{iff}));
  EXPECT_EQ(M->consumers, (std::vector<Node*>{iff}));

  Graph* then_g = iff->subgraph("then_branch");
  Node* loop = node_named(*then_g, "loop");
  ASSERT_TRUE(loop);
  Graph* body = loop->subgraph("body");
  ASSERT_TRUE(body);
  EXPECT_EQ(body->parent_graph, then_g);
  EXPECT_EQ(body->parent_node, loop);
  EXPECT_EQ(body->model, model.model.get());

  // Body: outer entry for a, chained to the then-branch's entry, chained to main's a.
  Value* a_body = body->find("a");
  ASSERT_TRUE(a_body);
  EXPECT_EQ(body->outer_scope, (std::vector<Value*>{a_body}));
  Value* a_then = then_g->find("a");
  ASSERT_TRUE(a_then);
  EXPECT_EQ(a_body->outer, a_then);
  EXPECT_EQ(a_then->outer, a);
  EXPECT_TRUE(contains(then_g->outer_scope, a_then));
  EXPECT_TRUE(contains(then_g->outer_scope, then_g->find("M")));

  // The Loop node's implicit input is the then-branch's entry (itself an outer-scope entry).
  EXPECT_EQ(loop->implicit_inputs, (std::vector<Value*>{a_then}));
  EXPECT_EQ(a_then->consumers, (std::vector<Node*>{loop}));
  EXPECT_EQ(loop->inputs.size(), 2u);
  EXPECT_EQ(loop->inputs[0], then_g->find("M"));
  EXPECT_EQ(loop->inputs[1], nullptr);

  Node* body_add = node_named(*body, "body_add");
  EXPECT_EQ(body_add->inputs, (std::vector<Value*>{a_body, a_body}));
  EXPECT_EQ(a_body->consumers, (std::vector<Node*>{body_add}));  // listed once
  EXPECT_EQ(body->required_inputs().size(), 2u);
  EXPECT_TRUE(body->find("c_out")->is_graph_output);
}

TEST(GraphIR, SubgraphOutputMayBeOuterValueAndLocalNamesShadow) {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {2});
  add_input(g, "cond", kBool, {});
  onnx::GraphProto then_g;  // outputs X straight from the enclosing graph
  then_g.set_name("then");
  add_output(&then_g, "X", kFloat, {2});
  onnx::GraphProto else_g;  // defines its own "X"
  else_g.set_name("else");
  add_node(&else_g, "Constant", {}, {"X"}, "local_x");
  add_output(&else_g, "X", kFloat, {2});
  auto* n = add_node(g, "If", {"cond"}, {"out"}, "if");
  attr_graph(n, "then_branch", then_g);
  attr_graph(n, "else_branch", else_g);
  add_output(g, "out", kFloat, {2});

  auto model = build(m);
  Node* iff = node_named(*model.main, "if");
  Graph* t = iff->subgraph("then_branch");
  Graph* e = iff->subgraph("else_branch");
  ASSERT_EQ(t->outputs.size(), 1u);
  EXPECT_TRUE(t->outputs[0]->is_outer_scope());
  EXPECT_TRUE(t->outputs[0]->is_graph_output);
  EXPECT_EQ(t->outputs[0]->outer, model.main->find("X"));
  EXPECT_TRUE(e->outer_scope.empty());
  EXPECT_EQ(e->outputs[0]->producer, node_named(*e, "local_x"));
  EXPECT_EQ(iff->implicit_inputs, (std::vector<Value*>{model.main->find("X")}));
}

TEST(GraphIR, TopologicalOrderIsStableKahn) {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X");
  add_node(g, "Relu", {"B"}, {"C"}, "n0");
  add_node(g, "Relu", {"A"}, {"B"}, "n1");
  add_node(g, "Neg", {"X"}, {"D"}, "n2");
  add_node(g, "Abs", {"X"}, {"A"}, "n3");
  add_output(g, "C");
  add_output(g, "D");
  auto model = build(m);  // no loader: the proto stays unsorted
  EXPECT_EQ(model.main->nodes[0]->name, "n0");
  EXPECT_EQ(order_names(*model.main), (std::vector<std::string>{"n2", "n3", "n1", "n0"}));
  EXPECT_EQ(model.main->view->nodes.front()->name, "n2");
}

TEST(GraphIR, SubgraphReadsOrderTheHolder) {
  // The If reads (through its branch) a value produced by a node listed after it.
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {2});
  add_input(g, "cond", kBool, {});
  onnx::GraphProto branch;
  branch.set_name("b");
  add_node(&branch, "Neg", {"late"}, {"r"});
  add_output(&branch, "r", kFloat, {2});
  auto* n = add_node(g, "If", {"cond"}, {"out"}, "if");
  attr_graph(n, "then_branch", branch);
  attr_graph(n, "else_branch", branch);
  add_node(g, "Relu", {"X"}, {"late"}, "producer");
  add_output(g, "out", kFloat, {2});
  auto model = build(m);
  EXPECT_EQ(order_names(*model.main), (std::vector<std::string>{"producer", "if"}));
  // The loader sorts such a graph so that the checker accepts it.
  std::string bytes = serialize(m);
  auto loaded = load_model_from_buffer(bytes.data(), bytes.size(), LoadOptions{});
  EXPECT_EQ(loaded->proto->graph().node(0).name(), "producer");
}

TEST(GraphIR, Errors) {
  {
    auto m = make_model();
    auto* g = m.mutable_graph();
    add_input(g, "X");
    add_node(g, "Add", {"X", "q"}, {"p"}, "p_node");
    add_node(g, "Relu", {"p"}, {"q"}, "q_node");
    add_node(g, "Relu", {"X"}, {"ok"}, "fine");
    add_output(g, "p");
    expect_error([&] { build(m); }, EPHOST_INVALID_GRAPH, {"cycle", "2 node(s)", "'p_node'", "'q_node'"});
  }
  {
    auto m = make_model();
    auto* g = m.mutable_graph();
    add_input(g, "X");
    add_node(g, "Relu", {"X"}, {"self"}, "a");
    add_node(g, "Add", {"self", "self2"}, {"self2"}, "selfloop");
    add_output(g, "self2");
    expect_error([&] { build(m); }, EPHOST_INVALID_GRAPH, {"cycle", "'selfloop'", "'self2'"});
  }
  {
    auto m = add_model();
    add_node(m.mutable_graph(), "Relu", {"ghost"}, {"w"}, "reader");
    expect_error([&] { build(m); }, EPHOST_INVALID_GRAPH, {"'reader'", "'ghost'"});
  }
  {
    auto m = add_model();
    add_node(m.mutable_graph(), "Relu", {"X"}, {"Z"}, "dup");
    expect_error([&] { build(m); }, EPHOST_INVALID_GRAPH, {"'dup'", "'Z'", "already defined", "'add'"});
  }
  {
    auto m = add_model();
    add_output(m.mutable_graph(), "nothing");
    expect_error([&] { build(m); }, EPHOST_INVALID_GRAPH, {"'nothing'"});
  }
  {
    auto m = add_model();
    auto* sp = m.mutable_graph()->add_sparse_initializer();
    *sp->mutable_values() = float_tensor("S", {0}, {});
    expect_error([&] { build(m); }, EPHOST_INVALID_GRAPH, {"sparse"});
  }
  {
    auto m = add_model();
    add_initializer(m.mutable_graph(), float_tensor("broken", {4}, {1, 2}));
    expect_error([&] { build(m); }, EPHOST_INVALID_GRAPH, {"'broken'"});
  }
  {
    // Inside a subgraph: the reading node and the value are named.
    auto m = if_model();
    auto* then_g = m.mutable_graph()->mutable_node(1)->mutable_attribute(0)->mutable_g();
    then_g->mutable_node(0)->set_input(1, "not_anywhere");
    expect_error([&] { build(m); }, EPHOST_INVALID_GRAPH, {"'then_add'", "'not_anywhere'", "then_branch"});
  }
}

TEST(GraphIR, LargeGraphBuildsInLinearTime) {
  // 100k nodes: a chain, with every node also reading the graph input (one value, 100k consumers).
  constexpr int kNodes = 100000;
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {4});
  std::string prev = "X";
  for (int i = 0; i < kNodes; ++i) {
    std::string out = "v" + std::to_string(i);
    add_node(g, "Add", {prev, "X"}, {out});
    prev = out;
  }
  add_output(g, prev, kFloat, {4});

  ModelAndIr model;
  model.model = std::make_unique<Model>();
  *model->proto = m;
  auto start = std::chrono::steady_clock::now();
  model.main = build_graph_ir(*model);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RecordProperty("build_seconds", std::to_string(seconds));
  std::printf("build_graph_ir on %d nodes: %.3f s\n", kNodes, seconds);
  EXPECT_EQ(model.main->topological_order.size(), static_cast<size_t>(kNodes));
  EXPECT_EQ(model.main->find("X")->consumers.size(), static_cast<size_t>(kNodes));
  EXPECT_LT(seconds, 10.0);

  // The reverse order (worst case for a naive sort) is as fast.
  auto reversed = m;
  std::reverse(reversed.mutable_graph()->mutable_node()->begin(), reversed.mutable_graph()->mutable_node()->end());
  model.main.reset();
  *model->proto = reversed;
  start = std::chrono::steady_clock::now();
  model.main = build_graph_ir(*model);
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("build_graph_ir on %d reversed nodes: %.3f s\n", kNodes, seconds);
  EXPECT_EQ(model.main->topological_order.front()->name, "Add_" + std::to_string(kNodes - 1));
  EXPECT_LT(seconds, 10.0);
}

// A rebuild after an edit that left the initializers alone shares their tensors (no second copy of the
// weights); one whose type or shape no longer matches is materialized again.
TEST(GraphIr, RebuildSharesUnchangedInitializerTensors) {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {2});
  add_initializer(g, float_tensor("W", {2}, {1, 2}));
  add_initializer(g, float_tensor("B", {2}, {3, 4}));
  add_node(g, "Add", {"X", "W"}, {"S"}, "add");
  add_node(g, "Mul", {"S", "B"}, {"Y"}, "mul");
  add_output(g, "Y", kFloat, {2});
  ModelAndIr first = load_and_build(m);
  InitializerTensors tensors = main_initializer_tensors(*first.main);
  ASSERT_EQ(tensors.size(), 2u);
  tensors["B"] = std::make_shared<Tensor>(Tensor::allocate(EPHOST_ELEMENT_FLOAT, {3}));  // no longer its shape
  std::unique_ptr<Graph> rebuilt = build_graph_ir(*first.model, tensors);
  EXPECT_EQ(rebuilt->find("W")->initializer.get(), first.main->find("W")->initializer.get());
  EXPECT_NE(rebuilt->find("B")->initializer.get(), tensors["B"].get());
  EXPECT_EQ(rebuilt->find("B")->initializer->shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ(rebuilt->find("B")->initializer->data_as<float>()[1], 4.0f);
}
