// The schemas of opsets above onnx 1.12's 17 (host/opsets/): the ai.onnx range raised to the newest
// supported opset, models of every supported opset loading, the one above refused, and versions
// resolved as onnx resolves them (the newest version at or below the model's opset).
#include <gtest/gtest.h>
#include <onnx/defs/function.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <map>
#include <set>

#include "core/error.h"
#include "model/loader.h"
#include "model_builders.h"
#include "opsets/opsets.h"

using namespace ephost;
using namespace ephost_test;

namespace {

std::unique_ptr<Model> load_buffer(const onnx::ModelProto& m) {
  const std::string bytes = serialize(m);
  return load_model_from_buffer(bytes.data(), bytes.size(), LoadOptions{});
}

const onnx::ValueInfoProto* find_value_info(const onnx::GraphProto& g, const std::string& name) {
  for (const auto& vi : g.value_info())
    if (vi.name() == name) return &vi;
  for (const auto& vi : g.output())
    if (vi.name() == name && vi.type().tensor_type().has_shape()) return &vi;
  return nullptr;
}

std::vector<int64_t> dims_of(const onnx::ValueInfoProto* vi) {
  std::vector<int64_t> out;
  for (const auto& d : vi->type().tensor_type().shape().dim()) out.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return out;
}

int since(const char* op, int opset) {
  opsets::register_schemas();
  const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(op, opset, "");
  return s ? s->SinceVersion() : -1;
}

}  // namespace

TEST(OpsetRegistry, RaisesTheDefaultDomainRange) {
  opsets::register_schemas();
  EXPECT_EQ(opsets::registration_problem(), "");
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance();
  ASSERT_TRUE(ranges.Map().count(""));
  EXPECT_EQ(ranges.Map().at("").first, 1);
  EXPECT_EQ(ranges.Map().at("").second, opsets::kNewestOpset);
  EXPECT_EQ(ranges.LastReleaseVersionMap().at(""), opsets::kNewestOpset);
  EXPECT_EQ(kMaxSupportedOpset, 27);
  // Idempotent: a second call registers nothing twice.
  const auto before = opsets::registered_versions();
  opsets::register_schemas();
  EXPECT_EQ(opsets::registered_versions(), before);
}

TEST(OpsetRegistry, RegistersEveryOpset18Version) {
  std::set<std::string> ops;
  for (const auto& [op, version] : opsets::registered_versions())
    if (version == 18) ops.insert(op);
  const std::set<std::string> expected = {
      "BitwiseAnd", "BitwiseNot", "BitwiseOr", "BitwiseXor", "CenterCropPad", "Col2Im", "GroupNormalization",
      "LpPool", "Mish", "OptionalGetElement", "OptionalHasElement", "Pad", "ReduceL1", "ReduceL2", "ReduceLogSum",
      "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSumSquare", "Resize",
      "ScatterElements", "ScatterND", "Split"};
  EXPECT_EQ(ops, expected);
  for (const std::string& op : expected) {
    const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(op, 18, "");
    ASSERT_NE(s, nullptr) << op;
    EXPECT_TRUE(s->GetTypeAndShapeInferenceFunction() != nullptr) << op;
  }
  // ONNX defines these as functions.
  for (const char* op : {"Mish", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"})
    EXPECT_TRUE(onnx::OpSchemaRegistry::Schema(op, 18, "")->HasFunction()) << op;
  for (const char* op : {"CenterCropPad", "GroupNormalization"})
    EXPECT_TRUE(onnx::OpSchemaRegistry::Schema(op, 18, "")->HasContextDependentFunction()) << op;
}

TEST(OpsetRegistry, ResolvesVersionsAsOnnxDoes) {
  EXPECT_EQ(since("Add", 21), 14);          // unchanged since 14: its newest version at or below 21
  EXPECT_EQ(since("ReduceMean", 17), 13);   // onnx 1.12's own
  EXPECT_EQ(since("ReduceMean", 18), 18);
  EXPECT_EQ(since("ReduceMean", 21), 18);
  EXPECT_EQ(since("Split", 27), 18);
  EXPECT_EQ(since("Mish", 17), -1);         // new in 18
  EXPECT_EQ(since("Mish", 20), 18);
  EXPECT_EQ(since("ReduceSum", 18), 13);    // axes became an input in 13 already
}

TEST(OpsetRegistry, LoadsModelsOfEverySupportedOpset) {
  for (int64_t opset = 1; opset <= opsets::kNewestOpset; ++opset) {
    std::unique_ptr<Model> model;
    EXPECT_NO_THROW(model = load_buffer(add_model(opset))) << "opset " << opset;
    if (model) {
      EXPECT_EQ(model->opset(""), opset);
    }
  }
}

TEST(OpsetRegistry, RefusesTheOpsetAboveTheNewestNamingIt) {
  expect_error([&] { load_buffer(add_model(opsets::kNewestOpset + 1)); }, EPHOST_INVALID_GRAPH,
               {"opset 28", "supported ai.onnx opsets are 1 to 27"});
}

TEST(OpsetRegistry, ChecksAndInfersOpset18Nodes) {
  // ReduceMean-18 with axes as a constant input, Split-18 with num_outputs (uneven: 2 + 1).
  auto m = make_model(18);
  auto* g = m.mutable_graph();
  add_input(g, "x", kFloat, {2, 3});
  add_initializer(g, int64_tensor("axes", {1}, {1}));
  add_node(g, "ReduceMean", {"x", "axes"}, {"mean"}, "mean");
  attr_int(add_node(g, "Split", {"x"}, {"a", "b"}, "split"), "num_outputs", 2);
  attr_int(g->mutable_node(1), "axis", 1);
  add_output(g, "mean", kFloat, {}, false);
  add_output(g, "a", kFloat, {}, false);
  add_output(g, "b", kFloat, {}, false);
  auto model = load_buffer(m);
  const auto& graph = model->proto->graph();
  ASSERT_NE(find_value_info(graph, "mean"), nullptr);
  EXPECT_EQ(dims_of(find_value_info(graph, "mean")), (std::vector<int64_t>{2, 1}));
  ASSERT_NE(find_value_info(graph, "a"), nullptr);
  EXPECT_EQ(dims_of(find_value_info(graph, "a")), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(dims_of(find_value_info(graph, "b")), (std::vector<int64_t>{2, 1}));
}

TEST(OpsetRegistry, CheckerHoldsOpset18NodesToTheirSchemas) {
  // ReduceMean-18 has no axes attribute any more.
  auto m = make_model(18);
  auto* g = m.mutable_graph();
  add_input(g, "x", kFloat, {2, 3});
  attr_ints(add_node(g, "ReduceMean", {"x"}, {"y"}, "mean"), "axes", {1});
  add_output(g, "y", kFloat, {}, false);
  expect_error([&] { load_buffer(m); }, EPHOST_INVALID_GRAPH, {"ONNX checker", "axes"});
  // Mish is unknown at opset 17.
  auto old = make_model(17);
  add_input(old.mutable_graph(), "x", kFloat, {2, 3});
  add_node(old.mutable_graph(), "Mish", {"x"}, {"y"}, "mish");
  add_output(old.mutable_graph(), "y", kFloat, {}, false);
  expect_error([&] { load_buffer(old); }, EPHOST_INVALID_GRAPH, {"Mish"});
}

TEST(OpsetRegistry, ContextDependentBodiesBuild) {
  opsets::register_schemas();
  onnx::NodeProto node;
  node.set_op_type("CenterCropPad");
  node.add_input("x");
  node.add_input("s");
  node.add_output("y");
  for (bool with_axes : {false, true}) {
    if (with_axes) {
      auto* a = node.add_attribute();
      a->set_name("axes");
      a->set_type(onnx::AttributeProto::INTS);
      a->add_ints(-1);
    }
    onnx::FunctionProto body;
    onnx::FunctionBodyBuildContextImpl ctx(node, {});
    ASSERT_TRUE(onnx::OpSchemaRegistry::Schema("CenterCropPad", 18, "")->BuildContextDependentFunction(ctx, body));
    EXPECT_GT(body.node_size(), 5);
  }
  onnx::NodeProto gn;
  gn.set_op_type("GroupNormalization");
  for (const char* i : {"x", "scale", "bias"}) gn.add_input(i);
  gn.add_output("y");
  onnx::FunctionProto body;
  onnx::FunctionBodyBuildContextImpl ctx(gn, {});
  ASSERT_TRUE(onnx::OpSchemaRegistry::Schema("GroupNormalization", 18, "")->BuildContextDependentFunction(ctx, body));
  EXPECT_GT(body.node_size(), 10);
}

TEST(OpsetRegistry, RegistersEveryOpset19And20Version) {
  std::set<std::string> v19, v20;
  for (const auto& [op, version] : opsets::registered_versions()) {
    if (version == 19) v19.insert(op);
    if (version == 20) v20.insert(op);
  }
  const std::set<std::string> expected19 = {"AveragePool", "Cast", "CastLike", "Constant", "DeformConv",
                                            "DequantizeLinear", "Equal", "Identity", "If", "Loop", "Pad",
                                            "QuantizeLinear", "Reshape", "Resize", "Scan", "Shape", "Size"};
  const std::set<std::string> expected20 = {"AffineGrid", "ConstantOfShape", "DFT", "Gelu", "GridSample",
                                            "ImageDecoder", "IsInf", "IsNaN", "ReduceMax", "ReduceMin",
                                            "RegexFullMatch", "StringConcat", "StringSplit"};
  EXPECT_EQ(v19, expected19);
  EXPECT_EQ(v20, expected20);
  for (const auto& [set, version] : {std::pair{&expected19, 19}, std::pair{&expected20, 20}})
    for (const std::string& op : *set) {
      const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(op, version, "");
      ASSERT_NE(s, nullptr) << op;
      EXPECT_EQ(s->SinceVersion(), version) << op;
      EXPECT_TRUE(s->GetTypeAndShapeInferenceFunction() != nullptr) << op;
    }
  for (const char* op : {"CastLike", "Gelu"})
    EXPECT_TRUE(onnx::OpSchemaRegistry::Schema(op, 20, "")->HasContextDependentFunction()) << op;
  EXPECT_EQ(since("Gelu", 19), -1);  // new in 20
  EXPECT_EQ(since("Pad", 20), 19);
  EXPECT_EQ(since("Resize", 27), 19);
  EXPECT_EQ(since("ReduceMax", 19), 18);
  EXPECT_EQ(since("ReduceMax", 20), 20);
  EXPECT_EQ(since("DFT", 19), 17);
  EXPECT_EQ(since("DFT", 20), 20);
}

TEST(OpsetRegistry, ChecksAndInfersOpset19And20Nodes) {
  // DeformConv-19 [1, 2, 5, 5] with a 3x3 kernel, DFT-20 with axis 1 as a constant input, StringSplit-20.
  auto m = make_model(20);
  auto* g = m.mutable_graph();
  add_input(g, "x", kFloat, {1, 2, 5, 5});
  add_input(g, "w", kFloat, {4, 2, 3, 3});
  add_input(g, "offset", kFloat, {1, 18, 3, 3});
  add_node(g, "DeformConv", {"x", "w", "offset"}, {"y"}, "deform");
  add_input(g, "signal", kFloat, {2, 6, 1});
  add_initializer(g, int64_tensor("axis", {}, {1}));
  attr_int(add_node(g, "DFT", {"signal", "", "axis"}, {"spectrum"}, "dft"), "onesided", 1);
  add_node(g, "Gelu", {"x"}, {"gelu"}, "gelu");
  add_output(g, "y", kFloat, {}, false);
  add_output(g, "spectrum", kFloat, {}, false);
  add_output(g, "gelu", kFloat, {}, false);
  auto model = load_buffer(m);
  const auto& graph = model->proto->graph();
  ASSERT_NE(find_value_info(graph, "y"), nullptr);
  EXPECT_EQ(dims_of(find_value_info(graph, "y")), (std::vector<int64_t>{1, 4, 3, 3}));
  ASSERT_NE(find_value_info(graph, "spectrum"), nullptr);
  EXPECT_EQ(dims_of(find_value_info(graph, "spectrum")), (std::vector<int64_t>{2, 4, 2}));
  ASSERT_NE(find_value_info(graph, "gelu"), nullptr);
  EXPECT_EQ(dims_of(find_value_info(graph, "gelu")), (std::vector<int64_t>{1, 2, 5, 5}));
}

TEST(OpsetRegistry, Opset19And20BodiesBuild) {
  opsets::register_schemas();
  for (const char* mode : {"none", "tanh"}) {
    onnx::NodeProto node;
    node.set_op_type("Gelu");
    node.add_input("X");
    node.add_output("Y");
    auto* a = node.add_attribute();
    a->set_name("approximate");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(mode);
    onnx::FunctionProto body;
    onnx::FunctionBodyBuildContextImpl ctx(node, {});
    ASSERT_TRUE(onnx::OpSchemaRegistry::Schema("Gelu", 20, "")->BuildContextDependentFunction(ctx, body)) << mode;
    EXPECT_GT(body.node_size(), 6) << mode;
  }
  onnx::NodeProto cast_like;
  cast_like.set_op_type("CastLike");
  cast_like.add_input("input");
  cast_like.add_input("target_type");
  cast_like.add_output("output");
  onnx::TypeProto float_in, int_target;
  float_in.mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  int_target.mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT32);
  onnx::FunctionProto body;
  onnx::FunctionBodyBuildContextImpl ctx(cast_like, {float_in, int_target});
  ASSERT_TRUE(onnx::OpSchemaRegistry::Schema("CastLike", 19, "")->BuildContextDependentFunction(ctx, body));
  ASSERT_EQ(body.node_size(), 1);
  EXPECT_EQ(body.node(0).op_type(), "Cast");
}

// AffineGrid-20's body (2-D and 3-D, with and without align_corners) is a graph the checker and shape
// inference accept (its values are checked against the AffineGrid cases of generate_opset_tests.py).
TEST(OpsetRegistry, AffineGridBodyIsAValidGraph) {
  opsets::register_schemas();
  struct Case {
    std::vector<int64_t> theta, size;
    int64_t align;
  };
  for (const Case& c : {Case{{2, 2, 3}, {2, 3, 4, 5}, 0}, Case{{1, 2, 3}, {1, 1, 3, 1}, 1},
                        Case{{2, 3, 4}, {2, 1, 3, 2, 4}, 0}, Case{{1, 3, 4}, {1, 2, 2, 3, 2}, 1}}) {
    onnx::NodeProto node;
    node.set_op_type("AffineGrid");
    node.add_input("theta");
    node.add_input("size");
    node.add_output("grid");
    attr_int(&node, "align_corners", c.align);
    onnx::TypeProto theta_type, size_type;
    theta_type.mutable_tensor_type()->set_elem_type(kFloat);
    for (int64_t d : c.theta) theta_type.mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
    size_type.mutable_tensor_type()->set_elem_type(kInt64);
    size_type.mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(static_cast<int64_t>(c.size.size()));
    onnx::FunctionProto body;
    onnx::FunctionBodyBuildContextImpl ctx(node, {theta_type, size_type});
    ASSERT_TRUE(onnx::OpSchemaRegistry::Schema("AffineGrid", 20, "")->BuildContextDependentFunction(ctx, body));
    // The body as a model of its own, size a constant.
    auto m = make_model(20);
    auto* g = m.mutable_graph();
    add_input(g, "theta", kFloat, c.theta);
    add_initializer(g, int64_tensor("size", {static_cast<int64_t>(c.size.size())}, c.size));
    for (const auto& n : body.node()) *g->add_node() = n;
    add_output(g, "grid", kFloat, {}, false);
    std::unique_ptr<Model> model;
    EXPECT_NO_THROW(model = load_buffer(m)) << "align_corners " << c.align << ", rank " << c.theta[1];
  }
  // Without a static rank there is no body.
  onnx::NodeProto node;
  node.set_op_type("AffineGrid");
  node.add_input("theta");
  node.add_input("size");
  node.add_output("grid");
  onnx::FunctionProto body;
  onnx::FunctionBodyBuildContextImpl ctx(node, {});
  EXPECT_FALSE(onnx::OpSchemaRegistry::Schema("AffineGrid", 20, "")->BuildContextDependentFunction(ctx, body));
}

TEST(OpsetRegistry, RegistersEveryOpset21To26Version) {
  std::map<int, std::set<std::string>> by_opset;
  for (const auto& [op, version] : opsets::registered_versions())
    if (version >= 21) by_opset[version].insert(op);
  const std::set<std::string> shape_and_cast = {"Cast", "CastLike", "Constant", "ConstantOfShape", "Flatten",
                                                "Identity", "If", "Loop", "Pad", "Reshape", "Scan", "Shape", "Size",
                                                "Squeeze", "Transpose", "Unsqueeze"};
  auto with = [&](std::set<std::string> s, std::initializer_list<const char*> more) {
    s.insert(more.begin(), more.end());
    return s;
  };
  EXPECT_EQ(by_opset[21], with(shape_and_cast, {"DequantizeLinear", "GroupNormalization", "QLinearMatMul", "QuantizeLinear"}));
  EXPECT_EQ(by_opset[22].size(), 47u);
  EXPECT_TRUE(by_opset[22].count("Conv") && by_opset[22].count("ThresholdedRelu"));
  EXPECT_EQ(by_opset[23], with(shape_and_cast, {"Attention", "DequantizeLinear", "QuantizeLinear", "RMSNormalization",
                                                "RotaryEmbedding"}));
  EXPECT_EQ(by_opset[24], with(shape_and_cast, {"Attention", "DequantizeLinear", "QuantizeLinear", "SplitToSequence",
                                                "Swish", "TensorScatter", "TopK"}));
  EXPECT_EQ(by_opset[25], with(shape_and_cast, {"DequantizeLinear", "QuantizeLinear"}));
  EXPECT_EQ(by_opset[26], (std::set<std::string>{"BitCast", "CumProd"}));
  EXPECT_EQ(by_opset[27], (std::set<std::string>{"CausalConvWithState", "LinearAttention", "Range"}));
  EXPECT_TRUE(onnx::OpSchemaRegistry::Schema("Range", 27, "")->HasFunction());
  EXPECT_EQ(since("Pad", 21), 21);
  EXPECT_EQ(since("Pad", 22), 21);
  EXPECT_EQ(since("Conv", 22), 22);
  EXPECT_EQ(since("Attention", 27), 24);
  EXPECT_EQ(since("QuantizeLinear", 24), 24);
  // Opset 22 adds bfloat16 wherever float was allowed; a types-only copy keeps the previous version's inputs,
  // attributes and inference.
  const onnx::OpSchema* conv = onnx::OpSchemaRegistry::Schema("Conv", 22, "");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->inputs().size(), 3u);
  EXPECT_TRUE(conv->attributes().count("auto_pad"));
  bool bf16 = false;
  for (const auto& c : conv->typeConstraintParams())
    for (const auto& t : c.allowed_type_strs) bf16 = bf16 || t == "tensor(bfloat16)";
  EXPECT_TRUE(bf16);
  EXPECT_TRUE(onnx::OpSchemaRegistry::Schema("Mish", 22, "")->HasFunction());
  EXPECT_TRUE(onnx::OpSchemaRegistry::Schema("Cast", 24, "")->attributes().count("round_mode"));
}

TEST(OpsetRegistry, ChecksAndInfersOpset21To26Nodes) {
  auto m = make_model(24);
  auto* g = m.mutable_graph();
  add_input(g, "q", kFloat, {2, 3, 24});
  add_input(g, "k", kFloat, {2, 5, 8});
  add_input(g, "v", kFloat, {2, 5, 8});
  auto* attention = add_node(g, "Attention", {"q", "k", "v"}, {"attended"}, "attention");
  attr_int(attention, "q_num_heads", 6);
  attr_int(attention, "kv_num_heads", 2);
  add_input(g, "x", kFloat, {2, 6, 4});
  add_input(g, "scale", kFloat, {6});
  add_input(g, "bias", kFloat, {6});
  attr_int(add_node(g, "GroupNormalization", {"x", "scale", "bias"}, {"grouped"}, "gn"), "num_groups", 3);
  add_input(g, "w", kFloat, {4});
  add_node(g, "RMSNormalization", {"x", "w"}, {"rms"}, "rms");
  add_node(g, "Swish", {"x"}, {"swished"}, "swish");
  for (const char* o : {"attended", "grouped", "rms", "swished"}) add_output(g, o, kFloat, {}, false);
  auto model = load_buffer(m);
  const auto& graph = model->proto->graph();
  ASSERT_NE(find_value_info(graph, "attended"), nullptr);
  EXPECT_EQ(dims_of(find_value_info(graph, "attended")), (std::vector<int64_t>{2, 3, 24}));
  ASSERT_NE(find_value_info(graph, "grouped"), nullptr);
  EXPECT_EQ(dims_of(find_value_info(graph, "grouped")), (std::vector<int64_t>{2, 6, 4}));
}

TEST(OpsetRegistry, ChecksAndInfersOpset27Nodes) {
  // CausalConvWithState: output of the input's shape, present_state [batch, channels, k - 1].
  // LinearAttention (GQA 4 query heads over 2 KV heads, d_k 3, d_v 5): output [batch, seq, 4 * 5],
  // present_state [batch, 2, 3, 5].
  auto m = make_model(27);
  auto* g = m.mutable_graph();
  add_input(g, "x", kFloat, {2, 6, 7});
  add_input(g, "w", kFloat, {6, 1, 4});
  add_node(g, "CausalConvWithState", {"x", "w"}, {"conv", "carry"}, "conv");
  add_input(g, "q", kFloat, {2, 3, 12});
  add_input(g, "k", kFloat, {2, 3, 6});
  add_input(g, "v", kFloat, {2, 3, 10});
  auto* la = add_node(g, "LinearAttention", {"q", "k", "v"}, {"attended", "state"}, "la");
  attr_int(la, "q_num_heads", 4);
  attr_int(la, "kv_num_heads", 2);
  auto* rule = la->add_attribute();
  rule->set_name("update_rule");
  rule->set_type(onnx::AttributeProto::STRING);
  rule->set_s("linear");
  for (const char* o : {"conv", "carry", "attended", "state"}) add_output(g, o, kFloat, {}, false);
  auto model = load_buffer(m);
  const auto& graph = model->proto->graph();
  for (const char* o : {"conv", "carry", "attended", "state"}) ASSERT_NE(find_value_info(graph, o), nullptr) << o;
  EXPECT_EQ(dims_of(find_value_info(graph, "conv")), (std::vector<int64_t>{2, 6, 7}));
  EXPECT_EQ(dims_of(find_value_info(graph, "carry")), (std::vector<int64_t>{2, 6, 3}));
  EXPECT_EQ(dims_of(find_value_info(graph, "attended")), (std::vector<int64_t>{2, 3, 20}));
  EXPECT_EQ(dims_of(find_value_info(graph, "state")), (std::vector<int64_t>{2, 2, 3, 5}));
}

TEST(OpsetRegistry, CheckerHoldsOpset27NodesToTheirSchemas) {
  // LinearAttention's q_num_heads is required.
  auto m = make_model(27);
  auto* g = m.mutable_graph();
  for (const char* i : {"q", "k", "v"}) add_input(g, i, kFloat, {1, 2, 4});
  attr_int(add_node(g, "LinearAttention", {"q", "k", "v"}, {"y", "state"}, "la"), "kv_num_heads", 1);
  add_output(g, "y", kFloat, {}, false);
  add_output(g, "state", kFloat, {}, false);
  expect_error([&] { load_buffer(m); }, EPHOST_INVALID_GRAPH, {"ONNX checker", "q_num_heads"});
  // CausalConvWithState's present_state is not optional.
  auto conv = make_model(27);
  add_input(conv.mutable_graph(), "x", kFloat, {1, 2, 4});
  add_input(conv.mutable_graph(), "w", kFloat, {2, 1, 3});
  add_node(conv.mutable_graph(), "CausalConvWithState", {"x", "w"}, {"y"}, "conv");
  add_output(conv.mutable_graph(), "y", kFloat, {}, false);
  expect_error([&] { load_buffer(conv); }, EPHOST_INVALID_GRAPH, {"ONNX checker", "CausalConvWithState"});
}

TEST(OpsetRegistry, Opset21To24BodiesBuild) {
  opsets::register_schemas();
  onnx::TypeProto x3;
  x3.mutable_tensor_type()->set_elem_type(kFloat);
  for (int64_t d : {2, 6, 4}) x3.mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  struct Body {
    const char* op;
    int version;
    std::vector<const char*> inputs;
  };
  for (const Body& b : {Body{"GroupNormalization", 21, {"X", "scale", "bias"}}, Body{"RMSNormalization", 23, {"X", "scale"}},
                        Body{"Swish", 24, {"X"}}}) {
    onnx::NodeProto node;
    node.set_op_type(b.op);
    for (const char* i : b.inputs) node.add_input(i);
    node.add_output("Y");
    attr_int(&node, "num_groups", 3);
    if (std::string(b.op) != "GroupNormalization") node.clear_attribute();
    std::vector<onnx::TypeProto> types(b.inputs.size(), x3);
    onnx::FunctionProto body;
    onnx::FunctionBodyBuildContextImpl ctx(node, types);
    ASSERT_TRUE(onnx::OpSchemaRegistry::Schema(b.op, b.version, "")->BuildContextDependentFunction(ctx, body)) << b.op;
    EXPECT_GT(body.node_size(), 2) << b.op;
  }
}

// Attention's function body (3-D and 4-D, grouped heads, masks, past, causal) is a graph the checker
// and shape inference accept, with Y of the node's rank and (where inferred) dimensions (its values are checked by the opset cases
// whose integer masks the CPU plugin's kernel leaves to the body).
TEST(OpsetRegistry, AttentionBodyIsAValidGraph) {
  opsets::register_schemas();
  struct Input {
    const char* name;
    int32_t type;
    std::vector<int64_t> dims;
  };
  struct Case {
    std::vector<Input> inputs;
    bool causal;
    std::vector<int64_t> y;
  };
  const std::vector<Case> cases = {
      {{{"Q", kFloat, {2, 6, 3, 8}}, {"K", kFloat, {2, 2, 5, 8}}, {"V", kFloat, {2, 2, 5, 4}}}, false, {2, 6, 3, 4}},
      {{{"Q", kFloat, {1, 2, 12}}, {"K", kFloat, {1, 2, 4}}, {"V", kFloat, {1, 2, 6}}, {"attn_mask", kBool, {2, 5}},
        {"past_key", kFloat, {1, 2, 3, 2}}, {"past_value", kFloat, {1, 2, 3, 3}}},
       true,
       {1, 2, 18}}};
  for (const Case& c : cases) {
    onnx::NodeProto node;
    node.set_op_type("Attention");
    std::vector<onnx::TypeProto> types;
    for (const Input& in : c.inputs) {
      node.add_input(in.name);
      onnx::TypeProto t;
      t.mutable_tensor_type()->set_elem_type(in.type);
      for (int64_t d : in.dims) t.mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
      types.push_back(t);
    }
    node.add_output("Y");
    if (c.inputs[0].dims.size() == 3) {
      attr_int(&node, "q_num_heads", 6);
      attr_int(&node, "kv_num_heads", 2);
    }
    if (c.causal) attr_int(&node, "is_causal", 1);
    onnx::FunctionProto body;
    onnx::FunctionBodyBuildContextImpl ctx(node, types);
    ASSERT_TRUE(onnx::OpSchemaRegistry::Schema("Attention", 23, "")->BuildContextDependentFunction(ctx, body));
    auto m = make_model(23);
    auto* g = m.mutable_graph();
    for (const Input& in : c.inputs) add_input(g, in.name, in.type, in.dims);
    for (const auto& n : body.node()) *g->add_node() = n;
    add_output(g, "Y", kFloat, {}, false);
    std::unique_ptr<Model> model;
    ASSERT_NO_THROW(model = load_buffer(m));
    // Where inference gets a shape through the reshapes (their shapes are computed), Y's rank and known
    // dimensions are the node's.
    const onnx::ValueInfoProto* y = find_value_info(model->proto->graph(), "Y");
    if (!y) continue;
    const std::vector<int64_t> dims = dims_of(y);
    ASSERT_EQ(dims.size(), c.y.size());
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] >= 0) {
        EXPECT_EQ(dims[i], c.y[i]) << "dimension " << i;
      }
    }
  }
}
