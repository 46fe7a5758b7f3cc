// Graph transforms: the pipeline, no-op elimination, the shape-source rewrite, constant folding,
// unused-initializer removal.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "core/error.h"
#include "graph/graph.h"
#include "graph/graph_writer.h"
#include "model/loader.h"
#include "model_builders.h"
#include "partition/precomputed_steps.h"
#include "transform/pass.h"

using namespace ephost;
using namespace ephost_test;

namespace {

// Loads (checker + shape inference) so that the passes see inferred types.
onnx::ModelProto loaded(const onnx::ModelProto& m) {
  std::string bytes = serialize(m);
  auto model = load_model_from_buffer(bytes.data(), bytes.size(), LoadOptions{});
  return *model->proto;
}

// The IR of `m` (kept with the model it points into).
struct Ir {
  Model model;
  std::unique_ptr<Graph> graph;
  explicit Ir(const onnx::ModelProto& m) {
    model.proto = std::make_unique<onnx::ModelProto>(m);
    model.read_header();
    graph = build_graph_ir(model);
  }
  // The edited IR written back as a model (graph/graph_writer.h): what the checks read.
  onnx::ModelProto written() const {
    onnx::ModelProto out;
    write_model_proto(*graph, &out);
    return out;
  }
};

// Runs `pass` on the IR of `m` and replaces `m` by the edited IR, written back.
size_t run_pass(GraphPass& pass, onnx::ModelProto& m, TransformContext context = {}) {
  Ir ir(m);
  const size_t rewrites = pass.apply(*ir.graph, context);
  m = ir.written();
  return rewrites;
}

std::vector<PassResult> run_pipeline(const PassPipeline& pipeline, onnx::ModelProto& m, TransformContext& context) {
  Ir ir(m);
  std::vector<PassResult> results = pipeline.run(*ir.graph, context);
  m = ir.written();
  return results;
}

std::vector<std::string> op_types(const onnx::GraphProto& g) {
  std::vector<std::string> ops;
  for (const auto& n : g.node()) ops.push_back(n.op_type());
  return ops;
}

const onnx::NodeProto* find_node(const onnx::GraphProto& g, const std::string& name) {
  for (const auto& n : g.node())
    if (n.name() == name) return &n;
  return nullptr;
}

const onnx::TensorProto* find_initializer(const onnx::GraphProto& g, const std::string& name) {
  for (const auto& t : g.initializer())
    if (t.name() == name) return &t;
  return nullptr;
}

std::vector<float> floats_of(const onnx::TensorProto& t) {
  Tensor x = tensor_from_proto(t);
  return std::vector<float>(x.data_as<float>(), x.data_as<float>() + x.element_count());
}

std::vector<int64_t> ints_of(const onnx::TensorProto& t) {
  Tensor x = tensor_from_proto(t);
  return std::vector<int64_t>(x.data_as<int64_t>(), x.data_as<int64_t>() + x.element_count());
}

// Still a valid model: the checker passes and the IR builds.
void expect_valid(const onnx::ModelProto& m) {
  std::string bytes = serialize(m);
  std::unique_ptr<Model> model;
  ASSERT_NO_THROW(model = load_model_from_buffer(bytes.data(), bytes.size(), LoadOptions{}));
  ASSERT_NO_THROW(build_graph_ir(*model));
}

// A fake evaluator: elementwise Add/Mul of float tensors of one shape; DequantizeLinear of int8 by a
// float scalar scale (no zero point); "Big" returns 17 MiB and "Huge" 65 MiB (over
// kMaxFoldedTensorBytes); anything else throws.
struct FakeEvaluator {
  int calls = 0;
  std::vector<std::string> seen;

  NodeEvaluator fn() {
    return [this](const onnx::NodeProto& node, const std::vector<const Tensor*>& inputs,
                  const onnx::ModelProto&) -> std::vector<Tensor> {
      ++calls;
      seen.push_back(node.op_type());
      if (node.op_type() == "Big") return {Tensor::allocate(EPHOST_ELEMENT_FLOAT, {int64_t(17) << 18})};
      if (node.op_type() == "Huge") return {Tensor::allocate(EPHOST_ELEMENT_FLOAT, {int64_t(65) << 18})};
      if (node.op_type() == "DequantizeLinear") {
        const Tensor& q = *inputs.at(0);
        const float scale = *inputs.at(1)->data_as<float>();
        Tensor out = Tensor::allocate(EPHOST_ELEMENT_FLOAT, q.shape());
        for (int64_t i = 0; i < q.element_count(); ++i) out.data_as<float>()[i] = q.data_as<int8_t>()[i] * scale;
        std::vector<Tensor> result;
        result.push_back(std::move(out));
        return result;
      }
      if (node.op_type() != "Add" && node.op_type() != "Mul") throw std::runtime_error("not supported");
      const Tensor& a = *inputs.at(0);
      const Tensor& b = *inputs.at(1);
      if (a.shape() != b.shape()) throw std::runtime_error("shape mismatch");
      Tensor out = Tensor::allocate(EPHOST_ELEMENT_FLOAT, a.shape());
      for (int64_t i = 0; i < a.element_count(); ++i)
        out.data_as<float>()[i] = node.op_type() == "Add" ? a.data_as<float>()[i] + b.data_as<float>()[i]
                                                          : a.data_as<float>()[i] * b.data_as<float>()[i];
      std::vector<Tensor> result;
      result.push_back(std::move(out));
      return result;
    };
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// No-op elimination

TEST(NoopElimination, RemovesIdentityChainsAndRewiresConsumers) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "X");
  add_node(g, "Identity", {"X"}, {"i1"}, "id1");
  add_node(g, "Identity", {"i1"}, {"i2"}, "id2");
  add_node(g, "Relu", {"i2"}, {"r"}, "relu");
  add_node(g, "Add", {"i1", "r"}, {"Z"}, "add");
  add_output(g, "Z");
  m = loaded(m);
  auto pass = make_noop_elimination_pass();
  EXPECT_EQ(run_pass(*pass, m), 2u);
  EXPECT_EQ(op_types(m.graph()), (std::vector<std::string>{"Relu", "Add"}));
  EXPECT_EQ(find_node(m.graph(), "relu")->input(0), "X");
  EXPECT_EQ(find_node(m.graph(), "add")->input(0), "X");
  for (const auto& vi : m.graph().value_info()) EXPECT_NE(vi.name(), "i1");
  EXPECT_EQ(run_pass(*pass, m), 0u);
  expect_valid(m);
}

TEST(NoopElimination, KeepsNodesProducingGraphOutputs) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "X");
  add_node(g, "Identity", {"X"}, {"Z"}, "id");
  add_output(g, "Z");
  m = loaded(m);
  auto pass = make_noop_elimination_pass();
  EXPECT_EQ(run_pass(*pass, m), 0u);
  EXPECT_EQ(m.graph().node_size(), 1);
}

TEST(NoopElimination, Dropout) {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X");
  add_initializer(g, bool_tensor("no_training", false));
  add_initializer(g, bool_tensor("training", true));
  add_node(g, "Dropout", {"X"}, {"d1"}, "plain");
  add_node(g, "Dropout", {"d1", "", "no_training"}, {"d2", "unused_mask"}, "inference");
  add_node(g, "Dropout", {"d2", "", "training"}, {"d3"}, "train");
  add_node(g, "Dropout", {"d3"}, {"d4", "mask"}, "mask_used");
  add_node(g, "Relu", {"d4"}, {"Z"}, "relu");
  add_output(g, "Z");
  add_output(g, "mask", kBool, {2, 3});
  m = loaded(m);
  auto pass = make_noop_elimination_pass();
  EXPECT_EQ(run_pass(*pass, m), 2u);
  EXPECT_EQ(find_node(m.graph(), "plain"), nullptr);
  EXPECT_EQ(find_node(m.graph(), "inference"), nullptr);
  ASSERT_NE(find_node(m.graph(), "train"), nullptr);
  EXPECT_EQ(find_node(m.graph(), "train")->input(0), "X");
  EXPECT_NE(find_node(m.graph(), "mask_used"), nullptr);
  expect_valid(m);
}

// Before opset 7, Dropout's is_test attribute chose the mode and defaulted to training.
TEST(NoopElimination, DropoutBeforeOpset7OnlyInTestMode) {
  auto m = make_model(6);
  auto* g = m.mutable_graph();
  add_input(g, "X");
  add_node(g, "Dropout", {"X"}, {"d1"}, "default_training");
  attr_int(add_node(g, "Dropout", {"d1"}, {"d2"}, "training"), "is_test", 0);
  attr_int(add_node(g, "Dropout", {"d2"}, {"d3"}, "test"), "is_test", 1);
  add_node(g, "Relu", {"d3"}, {"Z"}, "relu");
  add_output(g, "Z");
  m = loaded(m);
  auto pass = make_noop_elimination_pass();
  EXPECT_EQ(run_pass(*pass, m), 1u);
  EXPECT_NE(find_node(m.graph(), "default_training"), nullptr);
  EXPECT_NE(find_node(m.graph(), "training"), nullptr);
  EXPECT_EQ(find_node(m.graph(), "test"), nullptr);
  EXPECT_EQ(find_node(m.graph(), "relu")->input(0), "d2");
  expect_valid(m);
}

TEST(NoopElimination, CastToSameTypeOnly) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "X");
  attr_int(add_node(g, "Cast", {"X"}, {"same"}, "same_cast"), "to", kFloat);
  attr_int(add_node(g, "Cast", {"same"}, {"ints"}, "int_cast"), "to", kInt64);
  add_node(g, "Neg", {"ints"}, {"Z"});
  add_output(g, "Z", kInt64, {2, 3});
  auto unknown = m;  // same graph without types: the Cast is kept
  m = loaded(m);
  auto pass = make_noop_elimination_pass();
  EXPECT_EQ(run_pass(*pass, m), 1u);
  EXPECT_EQ(find_node(m.graph(), "same_cast"), nullptr);
  EXPECT_EQ(find_node(m.graph(), "int_cast")->input(0), "X");
  expect_valid(m);

  unknown.mutable_graph()->mutable_input(0)->clear_type();
  EXPECT_EQ(run_pass(*pass, unknown), 0u);
}

TEST(NoopElimination, ReshapeExpandFlattenWithSameShape) {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {2, 3});
  add_input(g, "D", kFloat, {-1, 3}, {"n", ""});
  add_initializer(g, int64_tensor("same_shape", {2}, {2, 3}));
  add_initializer(g, int64_tensor("other_shape", {2}, {3, 2}));
  add_initializer(g, int64_tensor("zero_minus_one", {2}, {0, -1}));
  add_node(g, "Reshape", {"X", "same_shape"}, {"r1"}, "reshape_same");
  add_node(g, "Reshape", {"r1", "zero_minus_one"}, {"r2"}, "reshape_copy");
  add_node(g, "Expand", {"r2", "same_shape"}, {"e"}, "expand_same");
  attr_int(add_node(g, "Flatten", {"e"}, {"f"}, "flatten_2d"), "axis", 1);
  add_node(g, "Reshape", {"f", "other_shape"}, {"r3"}, "reshape_other");
  add_node(g, "Reshape", {"D", "same_shape"}, {"r4"}, "reshape_dynamic");
  add_output(g, "r3", kFloat, {3, 2});
  add_output(g, "r4", kFloat, {2, 3});
  m = loaded(m);
  auto pass = make_noop_elimination_pass();
  EXPECT_EQ(run_pass(*pass, m), 4u);
  EXPECT_EQ(op_types(m.graph()), (std::vector<std::string>{"Reshape", "Reshape"}));
  EXPECT_EQ(find_node(m.graph(), "reshape_other")->input(0), "X");
  expect_valid(m);

  // The initializers it left unused go with the unused-initializer pass.
  auto unused = make_unused_initializer_elimination_pass();
  EXPECT_EQ(run_pass(*unused, m), 1u);  // zero_minus_one
  EXPECT_EQ(find_initializer(m.graph(), "zero_minus_one"), nullptr);
  EXPECT_NE(find_initializer(m.graph(), "same_shape"), nullptr);
}

TEST(NoopElimination, SubgraphLocalValuesOnly) {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {2});
  add_input(g, "cond", kBool, {});
  add_node(g, "Identity", {"X"}, {"read_by_branch"}, "outer_id");  // read by a subgraph: kept
  onnx::GraphProto then_g;
  then_g.set_name("then");
  add_node(&then_g, "Identity", {"read_by_branch"}, {"t1"}, "local_id");  // local: removed
  add_node(&then_g, "Relu", {"t1"}, {"t2"}, "then_relu");
  add_node(&then_g, "Identity", {"t2"}, {"t"}, "output_id");  // branch output: kept
  add_output(&then_g, "t", kFloat, {2});
  onnx::GraphProto else_g;
  else_g.set_name("else");
  add_node(&else_g, "Neg", {"X"}, {"e"});
  add_output(&else_g, "e", kFloat, {2});
  auto* n = add_node(g, "If", {"cond"}, {"Z"}, "if");
  attr_graph(n, "then_branch", then_g);
  attr_graph(n, "else_branch", else_g);
  add_output(g, "Z", kFloat, {2});
  m = loaded(m);
  auto pass = make_noop_elimination_pass();
  EXPECT_EQ(run_pass(*pass, m), 1u);
  ASSERT_NE(find_node(m.graph(), "outer_id"), nullptr);
  const auto& branch = find_node(m.graph(), "if")->attribute(0).g();
  EXPECT_EQ(find_node(branch, "local_id"), nullptr);
  EXPECT_EQ(find_node(branch, "then_relu")->input(0), "read_by_branch");
  EXPECT_NE(find_node(branch, "output_id"), nullptr);
  expect_valid(m);
}

// ---------------------------------------------------------------------------------------------
// Shape-source rewrite

TEST(ShapeSourceRewrite, ShapeOfDequantizeReadsTheQuantizedValue) {
  // d = DQ(X); Z = Reshape(d, Shape(d)) keeps the DQ (the Reshape reads it) but the Shape reads X.
  // e = DQ(Y) feeds only a Shape (with start, opset 15): the DQ goes. q = Q(F) feeds a Shape and is a
  // graph output: the Shape stays on q (reading F would give the float value a second reader).
  constexpr int32_t kUint8 = onnx::TensorProto::UINT8;
  auto m = make_model(15);
  auto* g = m.mutable_graph();
  add_input(g, "X", kUint8, {-1, 4}, {"n", ""});
  add_input(g, "Y", kUint8, {-1, 2, 3}, {"m", "", ""});
  add_input(g, "F", kFloat, {-1, 5}, {"k", ""});
  add_initializer(g, float_tensor("scale", {}, {0.5f}));
  add_node(g, "DequantizeLinear", {"X", "scale"}, {"d"}, "dq_x");
  add_node(g, "Shape", {"d"}, {"s"}, "shape_d");
  add_node(g, "Reshape", {"d", "s"}, {"Z"}, "reshape");
  add_node(g, "DequantizeLinear", {"Y", "scale"}, {"e"}, "dq_y");
  attr_int(add_node(g, "Shape", {"e"}, {"S2"}, "shape_e"), "start", 1);
  add_node(g, "QuantizeLinear", {"F", "scale"}, {"q"}, "q_f");
  add_node(g, "Shape", {"q"}, {"S3"}, "shape_q");
  add_output(g, "Z", kFloat, {-1, 4});
  add_output(g, "S2", kInt64, {2});
  add_output(g, "S3", kInt64, {2});
  add_output(g, "q", kUint8, {-1, 5});
  m = loaded(m);

  auto pass = make_shape_source_rewrite_pass();
  EXPECT_EQ(pass->min_level(), 1);
  EXPECT_EQ(run_pass(*pass, m), 2u);
  EXPECT_EQ(find_node(m.graph(), "shape_d")->input(0), "X");
  EXPECT_EQ(find_node(m.graph(), "reshape")->input(0), "d");
  EXPECT_NE(find_node(m.graph(), "dq_x"), nullptr);
  EXPECT_EQ(find_node(m.graph(), "dq_y"), nullptr);
  const onnx::NodeProto* shape_e = find_node(m.graph(), "shape_e");
  ASSERT_NE(shape_e, nullptr);
  EXPECT_EQ(shape_e->input(0), "Y");
  ASSERT_EQ(shape_e->attribute_size(), 1);
  EXPECT_EQ(shape_e->attribute(0).name(), "start");
  EXPECT_EQ(shape_e->attribute(0).i(), 1);
  EXPECT_EQ(find_node(m.graph(), "shape_q")->input(0), "q");
  EXPECT_NE(find_node(m.graph(), "q_f"), nullptr);
  expect_valid(m);

  // Nothing is left to rewrite.
  EXPECT_EQ(run_pass(*pass, m), 0u);
}

TEST(ShapeSourceRewrite, OtherProducersAndOuterValuesAreLeft) {
  // Shape(Relu(X)) is not rewritten; a Shape inside a subgraph reading the outer graph's DQ output is
  // left (the producer lives in another graph).
  constexpr int32_t kUint8 = onnx::TensorProto::UINT8;
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {2, 3});
  add_input(g, "Q", kUint8, {2, 3});
  add_input(g, "cond", kBool, {});
  add_initializer(g, float_tensor("scale", {}, {0.5f}));
  add_node(g, "Relu", {"X"}, {"r"}, "relu");
  add_node(g, "Shape", {"r"}, {"S"}, "shape_r");
  add_node(g, "DequantizeLinear", {"Q", "scale"}, {"d"}, "dq");
  onnx::GraphProto branch;
  branch.set_name("branch");
  add_node(&branch, "Shape", {"d"}, {"bs"}, "shape_in_branch");
  add_output(&branch, "bs", kInt64, {2});
  auto* iff = add_node(g, "If", {"cond"}, {"I"}, "if");
  attr_graph(iff, "then_branch", branch);
  branch.set_name("other");
  attr_graph(iff, "else_branch", branch);
  add_output(g, "S", kInt64, {2});
  add_output(g, "I", kInt64, {2});
  m = loaded(m);

  auto pass = make_shape_source_rewrite_pass();
  EXPECT_EQ(run_pass(*pass, m), 0u);
  EXPECT_EQ(find_node(m.graph(), "shape_r")->input(0), "r");
  EXPECT_NE(find_node(m.graph(), "dq"), nullptr);
}

// ---------------------------------------------------------------------------------------------
// One DequantizeLinear per operator

TEST(UniqueDequantize, ReadersOfSeparateOperatorsGetTheirOwnCopy) {
  // d = DQ(X) feeds two MatMuls and a residual Add far downstream (separate operators: the Add and the
  // second MatMul get copies); e = DQ(Y) feeds ReduceMean and Sub of one LayerNorm (kept shared);
  // f = DQ(Z) feeds three Slices (one Split: kept shared); a DQ of a constant is never copied.
  constexpr int32_t kUint8 = onnx::TensorProto::UINT8;
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X", kUint8, {2, 4});
  add_input(g, "Y", kUint8, {2, 4});
  add_input(g, "Z", kUint8, {6});
  add_initializer(g, float_tensor("scale", {}, {0.5f}));
  add_initializer(g, float_tensor("W", {4, 4}, std::vector<float>(16, 0.25f)));
  add_node(g, "DequantizeLinear", {"X", "scale"}, {"d"}, "dq_x");
  add_node(g, "MatMul", {"d", "W"}, {"m1"}, "mm1");
  add_node(g, "MatMul", {"d", "W"}, {"m2"}, "mm2");
  std::string v = "m1";
  for (int i = 0; i < 12; ++i) {  // a block longer than any decomposed operator
    add_node(g, "Relu", {v}, {"r" + std::to_string(i)}, "relu" + std::to_string(i));
    v = "r" + std::to_string(i);
  }
  add_node(g, "Add", {v, "d"}, {"A"}, "residual");
  add_node(g, "DequantizeLinear", {"Y", "scale"}, {"e"}, "dq_y");
  attr_ints(add_node(g, "ReduceMean", {"e"}, {"mean"}, "mean"), "axes", {-1});
  add_node(g, "Sub", {"e", "mean"}, {"D"}, "sub");
  add_node(g, "DequantizeLinear", {"Z", "scale"}, {"f"}, "dq_z");
  for (int i = 0; i < 3; ++i) {
    const std::string k = std::to_string(i);
    add_initializer(g, int64_tensor("s" + k, {1}, {2 * i}));
    add_initializer(g, int64_tensor("e" + k, {1}, {2 * i + 2}));
    add_node(g, "Slice", {"f", "s" + k, "e" + k}, {"S" + k}, "slice" + k);
  }
  add_output(g, "A", kFloat, {2, 4});
  add_output(g, "m2", kFloat, {2, 4});
  add_output(g, "D", kFloat, {2, 4});
  for (int i = 0; i < 3; ++i) add_output(g, "S" + std::to_string(i), kFloat, {2});
  m = loaded(m);

  auto pass = make_unique_dequantize_pass();
  EXPECT_EQ(pass->min_level(), 1);
  EXPECT_EQ(run_pass(*pass, m), 2u);
  const std::string mm2_in = find_node(m.graph(), "mm2")->input(0), add_in = find_node(m.graph(), "residual")->input(1);
  EXPECT_EQ(find_node(m.graph(), "mm1")->input(0), "d");
  EXPECT_NE(mm2_in, "d");
  EXPECT_NE(add_in, "d");
  EXPECT_NE(mm2_in, add_in);
  int dq_of_x = 0;
  for (const auto& n : m.graph().node())
    if (n.op_type() == "DequantizeLinear" && n.input(0) == "X") {
      ++dq_of_x;
      EXPECT_TRUE(n.output(0) == "d" || n.output(0) == mm2_in || n.output(0) == add_in) << n.output(0);
    }
  EXPECT_EQ(dq_of_x, 3);
  EXPECT_EQ(find_node(m.graph(), "sub")->input(0), "e");
  for (int i = 0; i < 3; ++i) EXPECT_EQ(find_node(m.graph(), "slice" + std::to_string(i))->input(0), "f");
  expect_valid(m);

  // Each operator has its own now.
  EXPECT_EQ(run_pass(*pass, m), 0u);
}

// ---------------------------------------------------------------------------------------------
// Constant folding

namespace {

// c = Add(W1, W2); d = Mul(c, W1); Z = Add(X, d)
onnx::ModelProto foldable_model() {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {3});
  add_initializer(g, float_tensor("W1", {3}, {1, 2, 3}));
  add_initializer(g, float_tensor("W2", {3}, {10, 20, 30}));
  add_node(g, "Add", {"W1", "W2"}, {"c"}, "fold_add");
  add_node(g, "Mul", {"c", "W1"}, {"d"}, "fold_mul");
  add_node(g, "Add", {"X", "d"}, {"Z"}, "keep_add");
  add_output(g, "Z", kFloat, {3});
  return loaded(m);
}

}  // namespace

TEST(ConstantFolding, FoldsChainsWithTheEvaluator) {
  auto m = foldable_model();
  FakeEvaluator eval;
  TransformContext ctx;
  ctx.evaluate = eval.fn();
  auto pass = make_constant_folding_pass();
  EXPECT_EQ(run_pass(*pass, m, ctx), 2u);
  EXPECT_EQ(eval.calls, 2);
  EXPECT_EQ(op_types(m.graph()), (std::vector<std::string>{"Add"}));
  ASSERT_NE(find_initializer(m.graph(), "d"), nullptr);
  EXPECT_EQ(floats_of(*find_initializer(m.graph(), "d")), (std::vector<float>{11, 44, 99}));
  EXPECT_EQ(run_pass(*pass, m, ctx), 0u);
  expect_valid(m);

  // Cleaning up: c, W2 (and W1) are no longer read.
  auto unused = make_unused_initializer_elimination_pass();
  EXPECT_EQ(run_pass(*unused, m), 3u);
  ASSERT_EQ(m.graph().initializer_size(), 1);
  EXPECT_EQ(m.graph().initializer(0).name(), "d");
}

TEST(ConstantFolding, WithoutEvaluatorOnlyConstantsAndShapes) {
  auto m = foldable_model();
  auto pass = make_constant_folding_pass();
  EXPECT_EQ(run_pass(*pass, m), 0u);
  EXPECT_EQ(m.graph().node_size(), 3);
}

TEST(ConstantFolding, ConstantNodesBecomeInitializers) {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {3});
  attr_tensor(add_node(g, "Constant", {}, {"k"}, "const_tensor"), "value", float_tensor("", {3}, {1, 2, 3}));
  attr_ints(add_node(g, "Constant", {}, {"ints"}, "const_ints"), "value_ints", {3, 1});
  attr_float(add_node(g, "Constant", {}, {"f"}, "const_float"), "value_float", 2.5f);
  add_node(g, "Add", {"X", "k"}, {"a"});
  add_node(g, "Mul", {"a", "f"}, {"b"});
  add_node(g, "Reshape", {"b", "ints"}, {"Z"});
  add_output(g, "Z", kFloat, {}, false);
  m = loaded(m);
  auto pass = make_constant_folding_pass();
  EXPECT_EQ(run_pass(*pass, m), 3u);
  EXPECT_EQ(op_types(m.graph()), (std::vector<std::string>{"Add", "Mul", "Reshape"}));
  EXPECT_EQ(floats_of(*find_initializer(m.graph(), "k")), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(ints_of(*find_initializer(m.graph(), "ints")), (std::vector<int64_t>{3, 1}));
  const auto* f = find_initializer(m.graph(), "f");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->dims_size(), 0);
  EXPECT_EQ(floats_of(*f), (std::vector<float>{2.5f}));
  expect_valid(m);
}

TEST(ConstantFolding, ShapeAndSizeOfStaticValues) {
  auto m = make_model(15);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {2, 3, 4});
  add_input(g, "D", kFloat, {-1, 3});
  add_node(g, "Shape", {"X"}, {"s"}, "shape");
  auto* sliced = add_node(g, "Shape", {"X"}, {"s_tail"}, "shape_sliced");
  attr_int(sliced, "start", -2);
  add_node(g, "Size", {"X"}, {"n"}, "size");
  add_node(g, "Shape", {"D"}, {"sd"}, "shape_dynamic");
  attr_int(add_node(g, "Concat", {"s", "s_tail", "sd"}, {"cat"}, "concat"), "axis", 0);
  add_node(g, "Mul", {"n", "n"}, {"nn"});
  add_output(g, "cat", kInt64, {-1});
  add_output(g, "nn", kInt64, {}, false);
  m = loaded(m);
  auto pass = make_constant_folding_pass();
  EXPECT_EQ(run_pass(*pass, m), 3u);
  EXPECT_EQ(ints_of(*find_initializer(m.graph(), "s")), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(ints_of(*find_initializer(m.graph(), "s_tail")), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(ints_of(*find_initializer(m.graph(), "n")), (std::vector<int64_t>{24}));
  EXPECT_NE(find_node(m.graph(), "shape_dynamic"), nullptr);
  expect_valid(m);
}

TEST(ConstantFolding, WhatIsNeverFolded) {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {3});
  add_input(g, "cond", kBool, {});
  add_input(g, "Over", kFloat, {3});  // an overridable initializer: not constant
  add_initializer(g, float_tensor("Over", {3}, {1, 1, 1}));
  add_initializer(g, float_tensor("W", {3}, {1, 2, 3}));
  add_node(g, "RandomNormalLike", {"W"}, {"rnd"}, "random");
  add_node(g, "Add", {"W", "Over"}, {"over_sum"}, "reads_overridable");
  add_node(g, "Add", {"W", "W"}, {"to_output"}, "graph_output");
  add_node(g, "Mul", {"W", "W"}, {"read_by_branch"}, "outer_read");
  add_node(g, "Huge", {"W"}, {"huge"}, "huge", "");
  add_node(g, "Neg", {"W"}, {"neg"}, "evaluator_throws");
  onnx::GraphProto branch;
  branch.set_name("b");
  add_node(&branch, "Add", {"read_by_branch", "W"}, {"t"});
  add_output(&branch, "t", kFloat, {3});
  auto* iff = add_node(g, "If", {"cond"}, {"if_out"}, "if");
  attr_graph(iff, "then_branch", branch);
  attr_graph(iff, "else_branch", branch);
  add_node(g, "Sum", {"X", "rnd", "over_sum", "if_out", "neg"}, {"sum"}, "sum");
  add_output(g, "sum", kFloat, {3});
  add_output(g, "to_output", kFloat, {3});
  LoadOptions no_check;
  no_check.run_checker = false;  // "Huge" is no ONNX operator
  std::string bytes = serialize(m);
  m = *load_model_from_buffer(bytes.data(), bytes.size(), no_check)->proto;

  // The If's branches are left alone too (Add(read_by_branch, W) reads outer values).
  FakeEvaluator eval;
  TransformContext ctx;
  ctx.evaluate = eval.fn();
  auto pass = make_constant_folding_pass();
  EXPECT_EQ(run_pass(*pass, m, ctx), 0u);
  EXPECT_EQ(m.graph().node_size(), 8);
  // Only the evaluable candidates reached the evaluator: Huge (too large) and Neg (throws).
  EXPECT_EQ(eval.seen, (std::vector<std::string>{"Huge", "Neg"}));
}

TEST(ConstantFolding, FoldsOutputsUpTo64MiB) {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {3});
  add_initializer(g, float_tensor("W", {3}, {1, 2, 3}));
  add_node(g, "Add", {"W", "W"}, {"w2"}, "small");
  add_node(g, "Add", {"X", "w2"}, {"Z"});
  add_node(g, "Big", {"W"}, {"big"}, "big", "");  // 17 MiB: above the old 16 MiB limit
  add_node(g, "Huge", {"W"}, {"huge"}, "huge", "");
  add_node(g, "Sum", {"big", "huge"}, {"S"}, "sum");
  add_output(g, "Z", kFloat, {3});
  add_output(g, "S", kFloat, {-1});
  LoadOptions no_check;
  no_check.run_checker = false;  // "Big" and "Huge" are no ONNX operators
  std::string bytes = serialize(m);
  m = *load_model_from_buffer(bytes.data(), bytes.size(), no_check)->proto;
  FakeEvaluator eval;
  TransformContext ctx;
  ctx.evaluate = eval.fn();
  EXPECT_EQ(run_pass(*make_constant_folding_pass(), m, ctx), 2u);
  EXPECT_EQ(floats_of(*find_initializer(m.graph(), "w2")), (std::vector<float>{2, 4, 6}));
  ASSERT_NE(find_initializer(m.graph(), "big"), nullptr);
  EXPECT_EQ(find_initializer(m.graph(), "huge"), nullptr);
  EXPECT_NE(find_node(m.graph(), "huge"), nullptr);
}

namespace {

onnx::TensorProto int8_tensor(const std::string& name, const std::vector<int64_t>& dims,
                              const std::vector<int8_t>& values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::INT8);
  for (int64_t d : dims) t.add_dims(d);
  for (int8_t v : values) t.add_int32_data(v);
  return t;
}

// X [3] + DequantizeLinear(Wq) * W, X [3] + DequantizeLinear(Wq), and X reshaped by the Shape of a
// second DequantizeLinear of Wq (which only that Shape reads).
onnx::ModelProto quantized_weight_model() {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {3});
  add_initializer(g, int8_tensor("Wq", {3}, {2, -4, 6}));
  add_initializer(g, float_tensor("s", {}, {0.5f}));
  add_initializer(g, float_tensor("W", {3}, {10, 20, 30}));
  add_node(g, "DequantizeLinear", {"Wq", "s"}, {"dq"}, "dq");
  add_node(g, "Mul", {"dq", "W"}, {"dqw"}, "dq_times_w");
  add_node(g, "Add", {"X", "dqw"}, {"Z"}, "add_dqw");
  add_node(g, "Add", {"X", "dq"}, {"Z2"}, "add_dq");
  add_node(g, "DequantizeLinear", {"Wq", "s"}, {"dq_shaped"}, "dq_only_shaped");
  add_node(g, "Shape", {"dq_shaped"}, {"shape"}, "shape");
  add_node(g, "Reshape", {"X", "shape"}, {"Z3"}, "reshape");
  add_output(g, "Z", kFloat, {3});
  add_output(g, "Z2", kFloat, {3});
  add_output(g, "Z3", kFloat, {3});
  return loaded(m);
}

std::vector<float> floats_of(const Tensor& t) {
  return std::vector<float>(t.data_as<float>(), t.data_as<float>() + t.element_count());
}

}  // namespace

// DequantizeLinear of a constant (a QDQ model's quantized weight) is precomputed but kept, so that a
// provider can fuse it; so is what reads it; its outputs read as constants, computed on first request
// only (an int8 group that fuses the weight never makes its float copy). A Shape of it folds, and a
// precomputed node nobody reads any more goes, never computed.
TEST(ConstantFolding, PrecomputesDequantizedWeightsOnRequestAndKeepsTheirNodes) {
  Ir ir(quantized_weight_model());
  FakeEvaluator eval;
  TransformContext ctx;
  ctx.evaluate = eval.fn();
  ctx.evaluate_later = eval.fn();
  auto pass = make_constant_folding_pass();
  // dq, dq_times_w and dq_only_shaped precomputed, shape folded, dq_only_shaped removed.
  EXPECT_EQ(pass->apply(*ir.graph, ctx), 5u);
  EXPECT_TRUE(eval.seen.empty());
  const Value* dq = ir.graph->find("dq");
  ASSERT_NE(dq, nullptr);
  ASSERT_NE(dq->precomputed, nullptr);
  ASSERT_NE(dq->producer, nullptr);
  EXPECT_EQ(dq->producer->name, "dq");
  EXPECT_FALSE(dq->is_initializer());
  EXPECT_TRUE(dq->is_constant());
  const Value* dqw = ir.graph->find("dqw");
  ASSERT_NE(dqw->precomputed, nullptr);
  EXPECT_EQ(dqw->producer->name, "dq_times_w");
  EXPECT_TRUE(ir.graph->find("shape")->is_constant_initializer());
  std::vector<std::string> names;
  for (const Node* n : ir.graph->topological_order) names.push_back(n->name);
  EXPECT_EQ(names, (std::vector<std::string>{"dq", "dq_times_w", "add_dqw", "add_dq", "reshape"}));
  EXPECT_EQ(pass->apply(*ir.graph, ctx), 0u);
  EXPECT_TRUE(eval.seen.empty());
  // Asked for: dqw computes dq first, each once.
  ASSERT_NE(dqw->constant_data(), nullptr);
  EXPECT_EQ(floats_of(*dqw->constant_data()), (std::vector<float>{10, -40, 90}));
  EXPECT_EQ(floats_of(*dq->constant_data()), (std::vector<float>{1, -2, 3}));
  EXPECT_EQ(eval.seen, (std::vector<std::string>{"DequantizeLinear", "Mul"}));
}

// Without an evaluator for later, nothing is precomputed: the DequantizeLinear stays an ordinary node.
TEST(ConstantFolding, NothingIsPrecomputedWithoutALaterEvaluator) {
  Ir ir(quantized_weight_model());
  FakeEvaluator eval;
  TransformContext ctx;
  ctx.evaluate = eval.fn();
  make_constant_folding_pass()->apply(*ir.graph, ctx);
  EXPECT_EQ(ir.graph->find("dq")->precomputed, nullptr);
  EXPECT_FALSE(ir.graph->find("dq")->is_constant());
  EXPECT_TRUE(eval.seen.empty());
}

// After partitioning, a step that runs only a precomputed node is dropped and its outputs become
// initializers; the node stays in the IR. A precomputed node inside a fused group keeps its step.
TEST(PrecomputedSteps, DropsSingleStepsOfPrecomputedNodes) {
  for (const bool mul_fused : {false, true}) {
    SCOPED_TRACE(mul_fused ? "Mul in a fused group" : "Mul on its own");
    Ir ir(quantized_weight_model());
    FakeEvaluator eval;
    TransformContext ctx;
    ctx.evaluate = eval.fn();
    ctx.evaluate_later = eval.fn();
    make_constant_folding_pass()->apply(*ir.graph, ctx);
    std::vector<GraphPartition> partitions(1);
    GraphPartition& p = partitions.front();
    p.graph = ir.graph.get();
    for (const Node* n : ir.graph->topological_order) {
      PartitionGroup group;
      group.nodes = {n};
      group.name = n->name;
      group.fused = mul_fused && n->name == "dq_times_w";
      p.groups.push_back(std::move(group));
    }
    EXPECT_EQ(drop_precomputed_steps(*ir.graph, partitions), mul_fused ? 1u : 2u);
    std::vector<std::string> steps;
    for (const PartitionGroup& group : p.groups) steps.push_back(group.name);
    EXPECT_EQ(steps, mul_fused ? (std::vector<std::string>{"dq_times_w", "add_dqw", "add_dq", "reshape"})
                               : (std::vector<std::string>{"add_dqw", "add_dq", "reshape"}));
    const Value* dq = ir.graph->find("dq");
    EXPECT_TRUE(dq->is_constant_initializer());
    EXPECT_EQ(dq->producer->name, "dq");
    EXPECT_NE(std::find(ir.graph->initializers.begin(), ir.graph->initializers.end(), dq), ir.graph->initializers.end());
    EXPECT_EQ(ir.graph->find("dqw")->is_initializer(), !mul_fused);
    EXPECT_EQ(ir.graph->topological_order.size(), 5u);  // every node stays
  }
}

// The host's one constant folding reaches into subgraphs: a branch's Constant and a node reading it
// with an initializer of the enclosing graph fold into an initializer of the branch; what reads the
// branch's own input stays, and so does the enclosing initializer (the else branch still reads it).
TEST(ConstantFolding, FoldsInsideSubgraphsWithOuterConstants) {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {3});
  add_input(g, "cond", kBool, {});
  add_initializer(g, float_tensor("W", {3}, {1, 2, 3}));
  onnx::GraphProto then_g;
  then_g.set_name("then");
  attr_tensor(add_node(&then_g, "Constant", {}, {"k"}, "branch_const"), "value", float_tensor("", {3}, {10, 20, 30}));
  add_node(&then_g, "Add", {"k", "W"}, {"kw"}, "branch_fold");
  add_node(&then_g, "Add", {"X", "kw"}, {"t"}, "branch_keep");
  add_output(&then_g, "t", kFloat, {3});
  onnx::GraphProto else_g;
  else_g.set_name("else");
  add_node(&else_g, "Mul", {"X", "W"}, {"e"}, "else_keep");
  add_output(&else_g, "e", kFloat, {3});
  auto* iff = add_node(g, "If", {"cond"}, {"Z"}, "if");
  attr_graph(iff, "then_branch", then_g);
  attr_graph(iff, "else_branch", else_g);
  add_output(g, "Z", kFloat, {3});
  m = loaded(m);

  FakeEvaluator eval;
  TransformContext ctx;
  ctx.evaluate = eval.fn();
  auto pass = make_constant_folding_pass();
  EXPECT_EQ(run_pass(*pass, m, ctx), 2u);
  EXPECT_EQ(eval.seen, (std::vector<std::string>{"Add"}));
  const auto& branch = find_node(m.graph(), "if")->attribute(0).g();
  EXPECT_EQ(op_types(branch), (std::vector<std::string>{"Add"}));
  ASSERT_NE(find_initializer(branch, "kw"), nullptr);
  EXPECT_EQ(floats_of(*find_initializer(branch, "kw")), (std::vector<float>{11, 22, 33}));
  EXPECT_NE(find_initializer(m.graph(), "W"), nullptr);
  EXPECT_EQ(run_pass(*pass, m, ctx), 0u);
  expect_valid(m);

  // The branch's k is read by nobody now: the unused-initializer pass drops it there.
  auto unused = make_unused_initializer_elimination_pass();
  EXPECT_EQ(run_pass(*unused, m), 1u);
  EXPECT_EQ(find_initializer(find_node(m.graph(), "if")->attribute(0).g(), "k"), nullptr);
  EXPECT_NE(find_initializer(m.graph(), "W"), nullptr);
}

// ---------------------------------------------------------------------------------------------
// Pipeline

namespace {

class CountingPass : public GraphPass {
 public:
  CountingPass(std::string name, int level, size_t per_run) : name_(std::move(name)), level_(level), per_run_(per_run) {}
  std::string name() const override { return name_; }
  int min_level() const override { return level_; }
  size_t apply(Graph&, TransformContext&) override {
    ++runs;
    return per_run_;
  }
  int runs = 0;

 private:
  std::string name_;
  int level_;
  size_t per_run_;
};

}  // namespace

TEST(PassPipeline, RoundsLevelsAndCounts) {
  PassPipeline pipeline;
  auto busy = std::make_unique<CountingPass>("busy", 1, 1);
  auto idle = std::make_unique<CountingPass>("idle", 1, 0);
  auto extended = std::make_unique<CountingPass>("extended", 2, 5);
  CountingPass* busy_p = busy.get();
  CountingPass* idle_p = idle.get();
  CountingPass* extended_p = extended.get();
  pipeline.add(std::move(busy));
  pipeline.add(std::move(idle));
  pipeline.add(std::move(extended));

  onnx::ModelProto m = make_model();
  TransformContext ctx;
  ctx.level = 1;
  auto results = run_pipeline(pipeline, m, ctx);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].pass, "busy");
  EXPECT_EQ(results[0].rewrites, 4u);  // never settles: stops after 4 rounds
  EXPECT_EQ(results[1].rewrites, 0u);
  EXPECT_EQ(busy_p->runs, 4);
  EXPECT_EQ(idle_p->runs, 4);
  EXPECT_EQ(extended_p->runs, 0);

  ctx.level = 0;
  EXPECT_TRUE(run_pipeline(pipeline, m, ctx).empty());
  EXPECT_EQ(busy_p->runs, 4);
}

TEST(PassPipeline, DefaultPipelineRepeatsUntilSettled) {
  // s = Shape(X); r = Reshape(X, s); Z = Relu(Identity(r)).
  // Round 1 removes the Identity and folds the Shape; round 2 sees Reshape(X, [2,3]) as a no-op and
  // drops the now unused initializer; round 3 changes nothing.
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {2, 3});
  add_node(g, "Shape", {"X"}, {"s"}, "shape");
  add_node(g, "Reshape", {"X", "s"}, {"r"}, "reshape");
  add_node(g, "Identity", {"r"}, {"i"}, "id");
  add_node(g, "Relu", {"i"}, {"Z"}, "relu");
  add_output(g, "Z", kFloat, {2, 3});
  m = loaded(m);

  TransformContext ctx;  // no evaluator
  ctx.level = 1;
  auto results = run_pipeline(default_pipeline(), m, ctx);
  ASSERT_EQ(results.size(), 5u);
  EXPECT_EQ(results[0].pass, "NoopElimination");
  EXPECT_EQ(results[0].rewrites, 2u);
  EXPECT_EQ(results[1].pass, "ShapeSourceRewrite");
  EXPECT_EQ(results[1].rewrites, 0u);
  EXPECT_EQ(results[2].pass, "ConstantFolding");
  EXPECT_EQ(results[2].rewrites, 1u);
  EXPECT_EQ(results[3].pass, "UniqueDequantize");
  EXPECT_EQ(results[3].rewrites, 0u);
  EXPECT_EQ(results[4].pass, "UnusedInitializerElimination");
  EXPECT_EQ(results[4].rewrites, 1u);
  EXPECT_EQ(op_types(m.graph()), (std::vector<std::string>{"Relu"}));
  EXPECT_EQ(m.graph().node(0).input(0), "X");
  EXPECT_EQ(m.graph().initializer_size(), 0);

  // The transformed model reloads, re-infers and builds.
  std::string bytes = serialize(m);
  auto model = load_model_from_buffer(bytes.data(), bytes.size(), LoadOptions{});
  infer_model_shapes(*model);
  EXPECT_EQ(build_graph_ir(*model)->nodes.size(), 1u);
}
