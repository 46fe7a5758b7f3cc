// Function expansion: nodes no provider claims run as their function bodies (schema functions,
// context-dependent ones, model-local functions), in subgraphs too, with unique names, bound
// attributes and checked opsets; the expanded models compute what the ops define.
//
// The schema-function cases use a stand-in capability query that refuses the function op (the
// built-in CPU plugin has kernels for most of them), then run the expanded model on the CPU plugin.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_set>

#include "plugin_abi/handles.h"
#include "core/error.h"
#include "graph/graph_writer.h"
#include "model/loader.h"
#include "model_builders.h"
#include "session/session.h"
#include "session/unclaimed_functions.h"
#include "session_helpers.h"
#include "transform/function_expansion.h"

using namespace ephost;
using namespace ephost_test;

namespace {

// The model as expanded: written from the IR, where the bodies were spliced in (the ModelProto keeps the
// graph as loaded).
onnx::ModelProto expanded(const ModelAndIr& model) {
  onnx::ModelProto m;
  write_model_proto(*model.main, &m);
  return m;
}

// One provider that claims every node except those of `refused` ops.
CapabilityQuery claims_all_but(std::set<std::string> refused) {
  return [refused](size_t, const GraphView& view) {
    std::vector<EphostCapability::Claim> claims;
    for (const Node* n : view.nodes)
      if (!refused.count(n->op_type)) claims.push_back({false, {n}, {}});
    return claims;
  };
}

std::vector<std::string> op_types(const onnx::GraphProto& g) {
  std::vector<std::string> ops;
  for (const auto& n : g.node()) ops.push_back(n.op_type());
  return ops;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

Tensor float_input(const std::vector<int64_t>& shape) {
  Tensor t = Tensor::allocate(EPHOST_ELEMENT_FLOAT, shape);
  float* p = t.data_as<float>();
  for (int64_t i = 0; i < t.element_count(); ++i) p[i] = std::sin(0.7f * static_cast<float>(i)) * 3.0f + 0.25f;
  return t;
}

// Runs `model` (serialized, on the CPU plugin) with float inputs of the given names and shapes.
std::vector<Tensor> run(const onnx::ModelProto& model, const std::vector<std::string>& names,
                        const std::vector<Tensor>& inputs) {
  std::string bytes = serialize(model);
  auto session = Session::create_from_buffer(quiet_env(), bytes.data(), bytes.size(), SessionOptions{});
  std::vector<Tensor> outputs;
  for (const RuntimeValue& v : session->run(names, std::vector<RuntimeValue>(inputs.begin(), inputs.end()), {}))
    outputs.push_back(v.tensor());
  return outputs;
}

// MeanVarianceNormalization over `axes` of x[N,C,H,W] as ONNX defines it: (x - mean) / (std + 1e-9).
std::vector<float> mvn_reference(const Tensor& x, const std::vector<int64_t>& axes) {
  const auto& s = x.shape();
  const float* p = x.data_as<float>();
  auto reduced = [&](int64_t i) {  // index of i's group
    int64_t key = 0, rest = i;
    std::vector<int64_t> idx(4);
    for (int d = 3; d >= 0; --d) {
      idx[d] = rest % s[d];
      rest /= s[d];
    }
    for (int d = 0; d < 4; ++d)
      key = key * s[d] + (std::find(axes.begin(), axes.end(), d) != axes.end() ? 0 : idx[d]);
    return key;
  };
  std::map<int64_t, std::pair<double, double>> sums;  // group -> (sum, sum of squares)
  std::map<int64_t, int> counts;
  for (int64_t i = 0; i < x.element_count(); ++i) {
    auto& [sum, sq] = sums[reduced(i)];
    sum += p[i];
    sq += double(p[i]) * p[i];
    ++counts[reduced(i)];
  }
  std::vector<float> y(static_cast<size_t>(x.element_count()));
  for (int64_t i = 0; i < x.element_count(); ++i) {
    const auto& [sum, sq] = sums[reduced(i)];
    const double n = counts[reduced(i)], mean = sum / n, var = sq / n - mean * mean;
    y[static_cast<size_t>(i)] = static_cast<float>((p[i] - mean) / (std::sqrt(var) + 1e-9));
  }
  return y;
}

void expect_near(const Tensor& got, const std::vector<float>& want, float tol = 1e-4f) {
  ASSERT_EQ(static_cast<size_t>(got.element_count()), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got.data_as<float>()[i], want[i], tol * std::max(1.0f, std::fabs(want[i]))) << "at " << i;
}

onnx::ModelProto mvn_model(const std::vector<int64_t>* axes) {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {2, 3, 2, 2});
  auto* n = add_node(g, "MeanVarianceNormalization", {"X"}, {"Y"}, "mvn");
  if (axes) attr_ints(n, "axes", *axes);
  add_output(g, "Y", kFloat, {2, 3, 2, 2});
  return m;
}

}  // namespace

TEST(FunctionExpansion, SchemaFunctionTakesTheSchemaDefaultOfAnOmittedAttribute) {
  auto model = load_with_ir(mvn_model(nullptr));
  EXPECT_EQ(expand_unclaimed_functions(*model, model.main, claims_all_but({"MeanVarianceNormalization"}), 1), 1u);
  const onnx::ModelProto written = expanded(model);
  const auto& g = written.graph();
  EXPECT_FALSE(contains(op_types(g), "MeanVarianceNormalization"));
  int reduce_means = 0;
  for (const auto& n : g.node()) {
    EXPECT_EQ(n.name().rfind("mvn/", 0), 0u) << n.name();
    if (n.op_type() != "ReduceMean") continue;
    ++reduce_means;
    ASSERT_EQ(n.attribute_size(), 1);
    EXPECT_EQ(n.attribute(0).name(), "axes");
    EXPECT_TRUE(n.attribute(0).ref_attr_name().empty());
    EXPECT_EQ(std::vector<int64_t>(n.attribute(0).ints().begin(), n.attribute(0).ints().end()),
              (std::vector<int64_t>{0, 2, 3}));
  }
  EXPECT_EQ(reduce_means, 2);
  // The body replaced the node in the IR.
  for (const auto& n : model.main->nodes) EXPECT_NE(n->op_type, "MeanVarianceNormalization");

  Tensor x = float_input({2, 3, 2, 2});
  expect_near(run(expanded(model), {"X"}, {x})[0], mvn_reference(x, {0, 2, 3}));
}

TEST(FunctionExpansion, SchemaFunctionTakesTheNodesAttribute) {
  std::vector<int64_t> axes = {1};
  auto model = load_with_ir(mvn_model(&axes));
  EXPECT_EQ(expand_unclaimed_functions(*model, model.main, claims_all_but({"MeanVarianceNormalization"}), 1), 1u);
  Tensor x = float_input({2, 3, 2, 2});
  expect_near(run(expanded(model), {"X"}, {x})[0], mvn_reference(x, {1}));
}

TEST(FunctionExpansion, ClaimedNodesStayAsTheyAre) {
  auto model = load_with_ir(mvn_model(nullptr));
  EXPECT_EQ(expand_unclaimed_functions(*model, model.main, claims_all_but({}), 1), 0u);
  EXPECT_EQ(op_types(expanded(model).graph()), std::vector<std::string>{"MeanVarianceNormalization"});
}

// Celu's body is built from the node (context-dependent): alpha becomes a constant of the body.
TEST(FunctionExpansion, ContextDependentFunction) {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {2, 3});
  attr_float(add_node(g, "Celu", {"X"}, {"Y"}, "celu"), "alpha", 2.0f);
  add_output(g, "Y", kFloat, {2, 3});
  auto model = load_with_ir(m);
  EXPECT_EQ(expand_unclaimed_functions(*model, model.main, claims_all_but({"Celu"}), 1), 1u);
  EXPECT_FALSE(contains(op_types(expanded(model).graph()), "Celu"));
  Tensor x = float_input({2, 3});
  std::vector<float> want;
  for (int64_t i = 0; i < 6; ++i) {
    const float v = x.data_as<float>()[i];
    want.push_back(std::max(0.0f, v) + std::min(0.0f, 2.0f * (std::exp(v / 2.0f) - 1.0f)));
  }
  expect_near(run(expanded(model), {"X"}, {x})[0], want);
}

// CausalConvWithState-27's body (host/opsets/opset27.cpp) gives the CPU kernel's outputs: with and without
// bias and past_state, each activation, kernel sizes 4, 3 and 1 (no carried state).
TEST(FunctionExpansion, CausalConvWithStateBodyGivesTheKernelsOutputs) {
  struct Variant {
    int64_t k;
    bool bias, past;
    const char* activation;
  };
  const int64_t batch = 2, channels = 3, length = 5;
  for (const Variant& v : {Variant{4, true, true, "silu"}, Variant{4, false, false, "none"},
                           Variant{3, true, false, "swish"}, Variant{1, false, true, "none"},
                           Variant{1, true, false, "silu"}}) {
    SCOPED_TRACE(std::string("k=") + std::to_string(v.k) + " bias=" + std::to_string(v.bias) +
                 " past=" + std::to_string(v.past) + " " + v.activation);
    auto m = make_model(27, 12);
    auto* g = m.mutable_graph();
    std::vector<std::string> names{"input", "weight"};
    std::vector<Tensor> inputs{float_input({batch, channels, length}), float_input({channels, 1, v.k})};
    add_input(g, "input", kFloat, {batch, channels, length});
    add_input(g, "weight", kFloat, {channels, 1, v.k});
    if (v.bias) {
      add_input(g, "bias", kFloat, {channels});
      names.push_back("bias");
      inputs.push_back(float_input({channels}));
    }
    if (v.past) {
      add_input(g, "past_state", kFloat, {batch, channels, v.k - 1});
      names.push_back("past_state");
      inputs.push_back(float_input({batch, channels, v.k - 1}));
    }
    auto* node = add_node(g, "CausalConvWithState",
                          {"input", "weight", v.bias ? "bias" : "", v.past ? "past_state" : ""},
                          {"output", "present_state"}, "conv");
    auto* activation = node->add_attribute();
    activation->set_name("activation");
    activation->set_type(onnx::AttributeProto::STRING);
    activation->set_s(v.activation);
    add_output(g, "output", kFloat, {batch, channels, length});
    add_output(g, "present_state", kFloat, {batch, channels, v.k - 1});
    const std::vector<Tensor> kernel = run(m, names, inputs);
    auto model = load_with_ir(m);
    EXPECT_EQ(expand_unclaimed_functions(*model, model.main, claims_all_but({"CausalConvWithState"}), 1), 1u);
    const onnx::ModelProto written = expanded(model);
    EXPECT_FALSE(contains(op_types(written.graph()), "CausalConvWithState"));
    EXPECT_TRUE(contains(op_types(written.graph()), "Conv"));
    const std::vector<Tensor> outputs = run(written, names, inputs);
    ASSERT_EQ(kernel.size(), 2u);
    ASSERT_EQ(outputs.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(outputs[i].shape(), kernel[i].shape()) << "output " << i;
      const float* want = kernel[i].data_as<float>();
      expect_near(outputs[i], std::vector<float>(want, want + kernel[i].element_count()));
    }
  }
}

// Two expansions of one op, named alike, next to a value that already has a generated name.
TEST(FunctionExpansion, NamesStayUniqueInTheModel) {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {2, 3, 2, 2});
  add_input(g, "mvn/X_RM", kFloat, {2, 3, 2, 2});
  add_node(g, "MeanVarianceNormalization", {"X"}, {"A"}, "mvn");
  add_node(g, "MeanVarianceNormalization", {"A"}, {"B"}, "mvn");
  add_node(g, "Add", {"B", "mvn/X_RM"}, {"Y"}, "add");
  add_output(g, "Y", kFloat, {2, 3, 2, 2});
  auto model = load_with_ir(m);
  EXPECT_EQ(expand_unclaimed_functions(*model, model.main, claims_all_but({"MeanVarianceNormalization"}), 1), 2u);
  std::set<std::string> defined;
  const onnx::ModelProto written = expanded(model);
  for (const auto& n : written.graph().node())
    for (const auto& o : n.output()) EXPECT_TRUE(defined.insert(o).second) << o << " defined twice";
  EXPECT_FALSE(defined.count("mvn/X_RM"));
  // The loader's structure check and the checker accept the expanded model.
  EXPECT_NO_THROW(load_with_ir(written));

  Tensor x = float_input({2, 3, 2, 2}), zero = Tensor::allocate(EPHOST_ELEMENT_FLOAT, {2, 3, 2, 2});
  std::fill(zero.data_as<float>(), zero.data_as<float>() + zero.element_count(), 0.0f);
  Tensor once = Tensor::allocate(EPHOST_ELEMENT_FLOAT, {2, 3, 2, 2});
  std::vector<float> a = mvn_reference(x, {0, 2, 3});
  std::copy(a.begin(), a.end(), once.data_as<float>());
  expect_near(run(expanded(model), {"X", "mvn/X_RM"}, {x, zero})[0], mvn_reference(once, {0, 2, 3}), 1e-3f);
}

// A function node in an If branch, reading a value of the enclosing graph.
TEST(FunctionExpansion, ExpandsInSubgraphs) {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "cond", kBool, {});
  add_input(g, "X", kFloat, {2, 3, 2, 2});
  onnx::GraphProto then_branch, else_branch;
  then_branch.set_name("then");
  add_node(&then_branch, "MeanVarianceNormalization", {"X"}, {"t"}, "mvn_in_branch");
  add_output(&then_branch, "t", kFloat, {2, 3, 2, 2});
  else_branch.set_name("else");
  add_node(&else_branch, "Identity", {"X"}, {"e"}, "identity");
  add_output(&else_branch, "e", kFloat, {2, 3, 2, 2});
  auto* branch = add_node(g, "If", {"cond"}, {"Y"}, "if");
  attr_graph(branch, "then_branch", then_branch);
  attr_graph(branch, "else_branch", else_branch);
  add_output(g, "Y", kFloat, {2, 3, 2, 2});
  auto model = load_with_ir(m);
  EXPECT_EQ(expand_unclaimed_functions(*model, model.main, claims_all_but({"MeanVarianceNormalization"}), 1), 1u);
  const onnx::ModelProto written = expanded(model);
  const auto& expanded_branch = written.graph().node(0).attribute(0).g();
  EXPECT_FALSE(contains(op_types(expanded_branch), "MeanVarianceNormalization"));
  EXPECT_TRUE(contains(op_types(expanded_branch), "ReduceMean"));

  Tensor cond = Tensor::allocate(EPHOST_ELEMENT_BOOL, {});
  cond.data_as<uint8_t>()[0] = 1;
  Tensor x = float_input({2, 3, 2, 2});
  expect_near(run(expanded(model), {"cond", "X"}, {cond, x})[0], mvn_reference(x, {0, 2, 3}));
}

namespace {

// com.example ScaledRelu(X; alpha) = LeakyRelu(X; alpha); Outer(X; alpha) = ScaledRelu(X; alpha) + X.
onnx::ModelProto local_function_model() {
  auto m = make_model(13);
  auto* custom = m.add_opset_import();
  custom->set_domain("com.example");
  custom->set_version(1);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {2, 3});
  attr_float(add_node(g, "Outer", {"X"}, {"Y"}, "outer", "com.example"), "alpha", 0.5f);
  add_output(g, "Y", kFloat, {2, 3});

  auto define = [&](const std::string& name) {
    auto* f = m.add_functions();
    f->set_name(name);
    f->set_domain("com.example");
    f->add_input("X");
    f->add_output("Y");
    f->add_attribute("alpha");
    auto* ai_onnx = f->add_opset_import();
    ai_onnx->set_domain("");
    ai_onnx->set_version(13);
    auto* mine = f->add_opset_import();
    mine->set_domain("com.example");
    mine->set_version(1);
    return f;
  };
  auto ref_alpha = [](onnx::NodeProto* n) {
    auto* a = n->add_attribute();
    a->set_name("alpha");
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_ref_attr_name("alpha");
  };
  auto* scaled = define("ScaledRelu");
  auto* leaky = scaled->add_node();
  leaky->set_op_type("LeakyRelu");
  leaky->add_input("X");
  leaky->add_output("Y");
  ref_alpha(leaky);
  auto* outer = define("Outer");
  auto* call = outer->add_node();
  call->set_op_type("ScaledRelu");
  call->set_domain("com.example");
  call->add_input("X");
  call->add_output("S");
  ref_alpha(call);
  auto* add = outer->add_node();
  add->set_op_type("Add");
  add->add_input("S");
  add->add_input("X");
  add->add_output("Y");
  return m;
}

}  // namespace

// End to end: no provider has a kernel for a model-local function, so the session expands it (and
// the function it calls) and the CPU plugin runs the bodies.
TEST(FunctionExpansion, SessionRunsModelLocalFunctions) {
  std::string bytes = serialize(local_function_model());
  auto session = Session::create_from_buffer(quiet_env(), bytes.data(), bytes.size(), SessionOptions{});
  for (const auto& n : session->graph().nodes) EXPECT_EQ(n->domain, "") << n->name << " " << n->op_type;
  Tensor x = float_input({2, 3});
  std::vector<float> want;
  for (int64_t i = 0; i < 6; ++i) {
    const float v = x.data_as<float>()[i];
    want.push_back((v > 0 ? v : 0.5f * v) + v);
  }
  expect_near(session->run({"X"}, {RuntimeValue(x)}, {})[0].tensor(), want);
}

// A body written for opset 12 that uses ReduceSum, whose axes became an input at opset 13, cannot
// run in an opset-13 model.
TEST(FunctionExpansion, RefusesABodyWhoseOpsChangedSinceItsOpset) {
  auto m = make_model(13);
  auto* custom = m.add_opset_import();
  custom->set_domain("com.example");
  custom->set_version(1);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {2, 3});
  add_node(g, "RowSum", {"X"}, {"Y"}, "rowsum", "com.example");
  add_output(g, "Y", kFloat, {2, 1});
  auto* f = m.add_functions();
  f->set_name("RowSum");
  f->set_domain("com.example");
  f->add_input("X");
  f->add_output("Y");
  auto* old = f->add_opset_import();
  old->set_domain("");
  old->set_version(12);
  auto* sum = f->add_node();
  sum->set_op_type("ReduceSum");
  sum->add_input("X");
  sum->add_output("Y");
  attr_ints(sum, "axes", {1});

  LoadOptions unchecked;  // onnx's checker refuses such a model too; the expansion must not rely on it
  unchecked.run_checker = false;
  unchecked.infer_shapes = false;
  auto model = load_with_ir(m, unchecked);
  FunctionBodies bodies(*model);
  expect_error([&] { expand_function_nodes(bodies, *model.main, {model.main->nodes[0].get()}); }, EPHOST_INVALID_GRAPH,
               {"node 'rowsum' (RowSum)", "ReduceSum", "opset 12", "opset 13"});
}

// A node with neither a kernel nor a body is still the partitioner's clear error.
TEST(FunctionExpansion, NodesWithoutBodiesAreLeftToThePartitioner) {
  auto m = make_model(13);
  auto* custom = m.add_opset_import();
  custom->set_domain("com.example");
  custom->set_version(1);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {2, 3});
  add_node(g, "NoSuchOp", {"X"}, {"Y"}, "mystery", "com.example");
  add_output(g, "Y", kFloat, {2, 3});
  std::string bytes = serialize(m);
  expect_error([&] { Session::create_from_buffer(quiet_env(), bytes.data(), bytes.size(), SessionOptions{}); },
               EPHOST_INVALID_GRAPH, {"no provider claimed", "mystery", "NoSuchOp"});
}
