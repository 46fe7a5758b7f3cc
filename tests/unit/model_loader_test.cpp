// Model loading: parsing, opsets, structure, checker, shape inference, external data, TensorProto
// conversion, and robustness against arbitrary bytes.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>

#include "core/error.h"
#include "graph/graph.h"
#include "model/loader.h"
#include "model_builders.h"
#include "transform/pass.h"

using namespace ephost;
using namespace ephost_test;

namespace {

LoadOptions defaults() { return LoadOptions{}; }
const LoadOptions kDefaultLoadOptions{};

std::unique_ptr<Model> load_buffer(const onnx::ModelProto& m, LoadOptions options = {}) {
  std::string bytes = serialize(m);
  return load_model_from_buffer(bytes.data(), bytes.size(), options);
}

const onnx::ValueInfoProto* find_value_info(const onnx::GraphProto& g, const std::string& name) {
  for (const auto& vi : g.value_info())
    if (vi.name() == name) return &vi;
  return nullptr;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Parsing and files

TEST(ModelLoader, LoadsFromFile) {
  TempDir dir;
  std::string path = dir.write("add.onnx", serialize(add_model()));
  auto model = load_model_from_file(path, defaults());
  EXPECT_EQ(model->path, path);
  EXPECT_EQ(std::filesystem::path(model->base_dir), std::filesystem::absolute(dir.path()));
  EXPECT_EQ(model->ir_version, 8);
  EXPECT_EQ(model->opset(""), 13);
  EXPECT_EQ(model->opset("ai.onnx"), 13);
  EXPECT_EQ(model->opset("com.example"), -1);
  ASSERT_EQ(model->proto->graph().node_size(), 1);
  std::unique_ptr<Graph> main = build_graph_ir(*model);
  ASSERT_TRUE(main);
  EXPECT_EQ(main->nodes.size(), 1u);
}

TEST(ModelLoader, LoadsFromBuffer) {
  auto model = load_buffer(add_model());
  EXPECT_EQ(model->path, "");
  EXPECT_EQ(model->opset(""), 13);
}

TEST(ModelLoader, MissingFileIsNoSuchFile) {
  TempDir dir;
  std::string path = dir.file("nope/missing.onnx");
  expect_error([&] { load_model_from_file(path, defaults()); }, EPHOST_NO_SUCHFILE, {path});
}

TEST(ModelLoader, DirectoryIsInvalidArgument) {
  TempDir dir;
  expect_error([&] { load_model_from_file(dir.path().string(), defaults()); }, EPHOST_INVALID_ARGUMENT,
               {"directory"});
}

TEST(ModelLoader, MalformedBytesAreInvalidProtobuf) {
  const std::string junk = "\xff\xff\xff\xff this is not a protobuf \x0a\xff\xff\xff\xff\x0f";
  expect_error([&] { load_model_from_buffer(junk.data(), junk.size(), defaults()); }, EPHOST_INVALID_PROTOBUF,
               {"failed to parse", "ModelProto", std::to_string(junk.size()) + " bytes"});
  TempDir dir;
  std::string path = dir.write("junk.onnx", junk);
  expect_error([&] { load_model_from_file(path, defaults()); }, EPHOST_INVALID_PROTOBUF,
               {"failed to parse", path});
}

TEST(ModelLoader, TruncatedModelIsInvalidProtobuf) {
  std::string bytes = serialize(add_model());
  bytes.resize(bytes.size() - 3);
  expect_error([&] { load_model_from_buffer(bytes.data(), bytes.size(), defaults()); }, EPHOST_INVALID_PROTOBUF,
               {"failed to parse"});
}

TEST(ModelLoader, EmptyInputs) {
  expect_error([&] { load_model_from_buffer("", 0, defaults()); }, EPHOST_INVALID_PROTOBUF, {"empty"});
  expect_error([&] { load_model_from_buffer(nullptr, 12, defaults()); }, EPHOST_INVALID_ARGUMENT, {"NULL"});
  TempDir dir;
  std::string path = dir.write("empty.onnx", "");
  expect_error([&] { load_model_from_file(path, defaults()); }, EPHOST_INVALID_PROTOBUF, {"empty", path});
}

// ---------------------------------------------------------------------------------------------
// Guards before onnx's shape inference

// onnx 1.12's conv shape inference takes the kernel's rank from W and indexes X's shape with it
// unchecked (fuzz_model found the read past the end under ASan: a QLinearConv with X [1,1,7] and W
// [1,1,1,1]). The guard refuses the mismatch by name, for every conv-like operator.
TEST(ModelLoader, ConvWeightsOfAnotherRankThanTheInputAreRefused) {
  struct Case {
    const char* op;
    int32_t elem;
    std::vector<std::string> inputs;  // X first; the weights are "w"
    int64_t opset;
    size_t w_index;
  };
  const int32_t u8 = onnx::TensorProto::UINT8;
  const Case cases[] = {
      {"Conv", kFloat, {"x", "w"}, 13, 1},
      {"ConvTranspose", kFloat, {"x", "w"}, 13, 1},
      {"ConvInteger", u8, {"x", "w"}, 13, 1},
      {"QLinearConv", u8, {"x", "xs", "xz", "w", "ws", "wz", "ys", "yz"}, 13, 3},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    for (const bool mismatch : {true, false}) {
      onnx::ModelProto m = make_model(c.opset);
      auto* g = m.mutable_graph();
      for (const std::string& name : c.inputs) {
        if (name == "x") add_input(g, name, c.elem, mismatch ? std::vector<int64_t>{1, 1, 7} : std::vector<int64_t>{1, 1, 7, 7});
        else if (name == "w") add_input(g, name, c.elem, {1, 1, 1, 1});
        else add_input(g, name, name[1] == 's' ? kFloat : u8, {});
      }
      add_node(g, c.op, c.inputs, {"y"}, "conv");
      add_output(g, "y", c.op == std::string("ConvInteger") ? onnx::TensorProto::INT32 : c.elem, {}, false);
      if (mismatch)
        expect_error([&] { load_buffer(m); }, EPHOST_INVALID_GRAPH,
                     {"node 'conv' (" + std::string(c.op) + ")", "(input " + std::to_string(c.w_index) + ") have rank 4",
                      "X has rank 3"});
      else
        EXPECT_NO_THROW(load_buffer(m));
    }
  }
}

// onnx 1.12's conv and pool inference divides by each stride unchecked (fuzz_context_model: SIGFPE from
// a Conv with strides [2, 0]). Strides and dilations below 1 are refused by name before it runs.
TEST(ModelLoader, ConvAndPoolStridesAndDilationsBelowOneAreRefused) {
  struct Case {
    const char* op;
    const char* attribute;
    std::vector<int64_t> values;
    const char* expected;  // "" when the model loads
  };
  const Case cases[] = {
      {"Conv", "strides", {2, 0}, "strides[1] is 0"},     {"Conv", "dilations", {-1, 1}, "dilations[0] is -1"},
      {"Conv", "strides", {2, 1}, ""},                    {"MaxPool", "strides", {0, 0}, "strides[0] is 0"},
      {"AveragePool", "strides", {1, -3}, "strides[1] is -3"}, {"LpPool", "strides", {0, 1}, "strides[0] is 0"},
      {"ConvTranspose", "strides", {0, 1}, "strides[0] is 0"}, {"MaxPool", "strides", {1, 1}, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.op) + " " + c.attribute);
    onnx::ModelProto m = make_model(13);
    auto* g = m.mutable_graph();
    add_input(g, "x", kFloat, {1, 1, 7, 5});
    const bool conv = std::string(c.op).rfind("Conv", 0) == 0;
    if (conv) add_input(g, "w", kFloat, {1, 1, 3, 3});
    auto* n = add_node(g, c.op, conv ? std::vector<std::string>{"x", "w"} : std::vector<std::string>{"x"}, {"y"}, "node");
    if (!conv) attr_ints(n, "kernel_shape", {3, 3});
    attr_ints(n, c.attribute, c.values);
    add_output(g, "y", kFloat, {}, false);
    if (*c.expected)
      expect_error([&] { load_buffer(m); }, EPHOST_INVALID_GRAPH,
                   {"node 'node' (" + std::string(c.op) + ")", c.expected, "every one must be at least 1"});
    else
      EXPECT_NO_THROW(load_buffer(m));
  }
}

// Found by the edge sweep (tests/fuzz/edge_sweep.py): onnx 1.12's DepthToSpace inference divides by
// blocksize squared, which overflows to 0 at 2^32 (SIGFPE); its STFT inference reads three signal
// dimensions whatever the rank (SEGV at rank 1). Both refused by name; sound models still load.
TEST(ModelLoader, DepthToSpaceBlocksizeAndStftSignalRankAreCheckedBeforeInference) {
  for (const int64_t blocksize : {int64_t{1} << 32, int64_t{2}}) {
    onnx::ModelProto m = make_model(13);
    auto* g = m.mutable_graph();
    add_input(g, "x", kFloat, {1, 4, 2, 2});
    attr_int(add_node(g, "DepthToSpace", {"x"}, {"y"}, "d2s"), "blocksize", blocksize);
    add_output(g, "y", kFloat, {}, false);
    if (blocksize == 2)
      EXPECT_NO_THROW(load_buffer(m));
    else
      expect_error([&] { load_buffer(m); }, EPHOST_INVALID_GRAPH,
                   {"node 'd2s' (DepthToSpace)", "blocksize 4294967296 is out of range [1, 3037000499]"});
  }
  struct Case {
    std::vector<int64_t> signal;
    int64_t frame_step;
    const char* expected;
  };
  for (const Case& c : {Case{{8}, 2, "the signal has rank 1"}, Case{{1, 8, 1}, 0, "frame_step is 0"},
                        Case{{1, 8, 1}, 2, ""}}) {
    onnx::ModelProto m = make_model(17);
    auto* g = m.mutable_graph();
    add_input(g, "x", kFloat, c.signal);
    auto* step = g->add_initializer();
    step->set_name("step");
    step->set_data_type(onnx::TensorProto::INT64);
    step->add_int64_data(c.frame_step);
    add_input(g, "window", kFloat, {4});
    add_node(g, "STFT", {"x", "step", "window"}, {"y"}, "stft");
    add_output(g, "y", kFloat, {}, false);
    if (*c.expected)
      expect_error([&] { load_buffer(m); }, EPHOST_INVALID_GRAPH, {"node 'stft' (STFT)", c.expected});
    else
      EXPECT_NO_THROW(load_buffer(m));
  }
}

// Without output_shape, onnx 1.12's MaxUnpool inference takes the channels from dimension 1 of the
// indices I unchecked (fuzz_model: a read past I's shape when I had rank 1). I of another rank is
// refused by name; I of unknown shape is a valid model that loads with y's shape left unknown.
TEST(ModelLoader, MaxUnpoolIndicesOfAnotherRankAreRefusedAndUnknownOnesNotInferred) {
  enum class Indices { kRank1, kRank4, kUnknownShape };
  for (const Indices indices : {Indices::kRank1, Indices::kRank4, Indices::kUnknownShape}) {
    SCOPED_TRACE(static_cast<int>(indices));
    onnx::ModelProto m = make_model(11);
    auto* g = m.mutable_graph();
    add_input(g, "x", kFloat, {1, 1, 2, 2});
    auto* i = g->add_input();
    i->set_name("i");
    set_type(i, onnx::TensorProto::INT64, indices == Indices::kRank1 ? std::vector<int64_t>{4} : std::vector<int64_t>{1, 1, 2, 2},
             {}, indices != Indices::kUnknownShape);
    auto* n = add_node(g, "MaxUnpool", {"x", "i"}, {"y"}, "unpool");
    attr_ints(n, "kernel_shape", {2, 2});
    attr_ints(n, "strides", {2, 2});
    add_output(g, "y", kFloat, {}, false);
    if (indices == Indices::kRank1) {
      expect_error([&] { load_buffer(m); }, EPHOST_INVALID_GRAPH,
                   {"node 'unpool' (MaxUnpool)", "the indices I have rank 1 but X has rank 4"});
    } else {
      std::unique_ptr<Model> model;
      ASSERT_NO_THROW(model = load_buffer(m));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Opsets

TEST(ModelLoader, RejectsUnsupportedOpsets) {
  expect_error([&] { load_buffer(add_model(28)); }, EPHOST_INVALID_GRAPH, {"opset 28", "1 to 27"});
  expect_error([&] { load_buffer(add_model(0)); }, EPHOST_INVALID_GRAPH, {"opset 0", "start at 1"});
  expect_error([&] { load_buffer(add_model(-3)); }, EPHOST_INVALID_GRAPH, {"opset -3", "start at 1"});
  EXPECT_NO_THROW(load_buffer(add_model(1)));
  EXPECT_NO_THROW(load_buffer(add_model(6)));
  EXPECT_NO_THROW(load_buffer(add_model(17)));
  EXPECT_NO_THROW(load_buffer(add_model(18)));
  EXPECT_NO_THROW(load_buffer(add_model(27)));
}

// A model may import no ai.onnx opset (training-only models import just ai.onnx.preview.training),
// but then no node may use the default domain, even when the checker is off.
TEST(ModelLoader, ModelWithoutAiOnnxImport) {
  auto m = add_model();
  m.mutable_opset_import(0)->set_domain("com.example");
  for (bool checker : {true, false}) {
    LoadOptions options;
    options.run_checker = checker;
    options.infer_shapes = checker;
    expect_error([&] { load_buffer(m, options); }, EPHOST_INVALID_GRAPH, {"'add' (Add)", "domain 'ai.onnx'", "does not import"});
  }
  m.clear_opset_import();
  expect_error([&] { load_buffer(m); }, EPHOST_INVALID_GRAPH, {"domain 'ai.onnx'", "does not import"});

  auto training = make_model();
  training.mutable_opset_import(0)->set_domain("ai.onnx.preview.training");
  training.mutable_opset_import(0)->set_version(1);
  auto* g = training.mutable_graph();
  add_input(g, "R", kFloat, {});
  add_input(g, "T", kInt64, {});
  add_input(g, "X", kFloat, {2});
  add_input(g, "G", kFloat, {2});
  add_input(g, "H", kFloat, {2});
  add_node(g, "Adagrad", {"R", "T", "X", "G", "H"}, {"X_new", "H_new"}, "adagrad")
      ->set_domain("ai.onnx.preview.training");
  add_output(g, "X_new", kFloat, {2});
  add_output(g, "H_new", kFloat, {2});
  auto model = load_buffer(training);
  EXPECT_EQ(model->opset(""), -1);
  EXPECT_EQ(model->opset("ai.onnx.preview.training"), 1);
}

TEST(ModelLoader, AcceptsExplicitAiOnnxDomain) {
  auto m = add_model();
  m.mutable_opset_import(0)->set_domain("ai.onnx");
  auto model = load_buffer(m);
  EXPECT_EQ(model->opset(""), 13);
}

// ---------------------------------------------------------------------------------------------
// Structure

TEST(ModelLoader, RejectsCycle) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "X");
  add_node(g, "Add", {"X", "d"}, {"c"}, "first");
  add_node(g, "Relu", {"c"}, {"d"}, "second");
  add_output(g, "c");
  expect_error([&] { load_buffer(m); }, EPHOST_INVALID_GRAPH, {"cycle", "'first'", "'second'", "'d'"});
}

TEST(ModelLoader, RejectsDanglingInput) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "X");
  add_node(g, "Add", {"X", "nowhere"}, {"Z"}, "adder");
  add_output(g, "Z");
  expect_error([&] { load_buffer(m); }, EPHOST_INVALID_GRAPH, {"'adder'", "'nowhere'"});
}

TEST(ModelLoader, RejectsDanglingGraphOutput) {
  auto m = add_model();
  add_output(m.mutable_graph(), "ghost");
  expect_error([&] { load_buffer(m); }, EPHOST_INVALID_GRAPH, {"'ghost'"});
}

TEST(ModelLoader, RejectsDuplicateDefinitions) {
  {
    auto m = add_model();
    add_node(m.mutable_graph(), "Relu", {"X"}, {"Z"}, "again");
    expect_error([&] { load_buffer(m); }, EPHOST_INVALID_GRAPH, {"'again'", "'Z'", "already defined", "'add'"});
  }
  {
    auto m = add_model();
    add_node(m.mutable_graph(), "Relu", {"Z"}, {"X"}, "shadow_input");
    expect_error([&] { load_buffer(m); }, EPHOST_INVALID_GRAPH, {"'X'", "graph input"});
  }
  {
    auto m = add_model();
    add_initializer(m.mutable_graph(), float_tensor("W", {1}, {1.f}));
    add_initializer(m.mutable_graph(), float_tensor("W", {1}, {2.f}));
    expect_error([&] { load_buffer(m); }, EPHOST_INVALID_GRAPH, {"'W'", "more than once"});
  }
  {
    auto m = add_model();
    add_input(m.mutable_graph(), "X");
    expect_error([&] { load_buffer(m); }, EPHOST_INVALID_GRAPH, {"'X'", "more than once"});
  }
}

TEST(ModelLoader, SortsUnsortedAcyclicGraph) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "X");
  add_node(g, "Relu", {"b"}, {"c"}, "third");
  add_node(g, "Neg", {"a"}, {"b"}, "second");
  add_node(g, "Abs", {"X"}, {"a"}, "first");
  add_output(g, "c");
  auto model = load_buffer(m);
  const auto& nodes = model->proto->graph().node();
  ASSERT_EQ(nodes.size(), 3);
  EXPECT_EQ(nodes[0].name(), "first");
  EXPECT_EQ(nodes[1].name(), "second");
  EXPECT_EQ(nodes[2].name(), "third");
}

TEST(ModelLoader, RejectsDanglingInputInsideSubgraph) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "cond", kBool, {});
  onnx::GraphProto then_g, else_g;
  then_g.set_name("then");
  add_node(&then_g, "Identity", {"missing_outer"}, {"t"}, "then_id");
  add_untyped_output(&then_g, "t");
  else_g.set_name("else");
  add_node(&else_g, "Identity", {"cond"}, {"e"}, "else_id");
  add_untyped_output(&else_g, "e");
  auto* n = add_node(g, "If", {"cond"}, {"out"}, "if");
  attr_graph(n, "then_branch", then_g);
  attr_graph(n, "else_branch", else_g);
  add_output(g, "out", kBool, {}, false);
  expect_error([&] { load_buffer(m); }, EPHOST_INVALID_GRAPH, {"'then_id'", "'missing_outer'", "subgraph"});
}

// ---------------------------------------------------------------------------------------------
// Checker and shape inference

TEST(ModelLoader, CheckerFailureIsInvalidGraph) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "X");
  add_node(g, "NoSuchOperator", {"X"}, {"Z"}, "bad");
  add_output(g, "Z");
  expect_error([&] { load_buffer(m); }, EPHOST_INVALID_GRAPH, {"ONNX checker", "NoSuchOperator"});

  LoadOptions off;
  off.run_checker = false;
  EXPECT_NO_THROW(load_buffer(m, off));
}

TEST(ModelLoader, CheckerRejectsMissingIrVersion) {
  auto m = add_model();
  m.clear_ir_version();
  expect_error([&] { load_buffer(m); }, EPHOST_INVALID_GRAPH, {"ir_version"});
}

TEST(ModelLoader, InfersShapes) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {-1, 3}, {"batch", ""});
  add_input(g, "Y", kFloat, {1, 3});
  add_node(g, "Relu", {"X"}, {"r"});
  add_node(g, "Add", {"r", "Y"}, {"Z"});
  add_output(g, "Z", kFloat, {}, false);
  auto model = load_buffer(m);
  const auto* vi = find_value_info(model->proto->graph(), "r");
  ASSERT_NE(vi, nullptr);
  ASSERT_TRUE(vi->type().tensor_type().has_shape());
  EXPECT_EQ(vi->type().tensor_type().shape().dim(0).dim_param(), "batch");
  EXPECT_EQ(vi->type().tensor_type().shape().dim(1).dim_value(), 3);

  std::unique_ptr<Graph> main = build_graph_ir(*model);
  const Value* z = main->find("Z");
  ASSERT_NE(z, nullptr);
  EXPECT_EQ(z->type.elem_type, EPHOST_ELEMENT_FLOAT);
  ASSERT_TRUE(z->type.has_shape);
  EXPECT_EQ(z->type.dims, (std::vector<int64_t>{-1, 3}));
  EXPECT_EQ(z->type.dim_params[0], "batch");
}

TEST(ModelLoader, ShapeInferenceFailureOnlyWarns) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {2, 3});
  add_input(g, "Y", kFloat, {4, 5});
  add_node(g, "Add", {"X", "Y"}, {"Z"});  // not broadcastable: inference fails
  add_output(g, "Z", kFloat, {}, false);
  EXPECT_NO_THROW(load_buffer(m));
}

// ---------------------------------------------------------------------------------------------
// External data

namespace {

std::string float_bytes(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

// Z = Add(X, W), W [2,3] stored externally at `location`.
onnx::ModelProto external_model(const std::string& location, int64_t offset = -1, int64_t length = -1) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "X");
  auto* w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(kFloat);
  w->add_dims(2);
  w->add_dims(3);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto kv = [&](const std::string& k, const std::string& v) {
    auto* e = w->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  kv("location", location);
  if (offset >= 0) kv("offset", std::to_string(offset));
  if (length >= 0) kv("length", std::to_string(length));
  add_node(g, "Add", {"X", "W"}, {"Z"}, "add");
  add_output(g, "Z");
  return m;
}

const std::vector<float> kWeights = {1, 2, 3, 4, 5, 6};

void expect_weights_resolved(Model& model) {
  const auto& w = model.proto->graph().initializer(0);
  EXPECT_EQ(w.data_location(), onnx::TensorProto::DEFAULT);
  EXPECT_EQ(w.external_data_size(), 0);
  EXPECT_EQ(w.raw_data(), float_bytes(kWeights));
  std::unique_ptr<Graph> main = build_graph_ir(model);
  const Value* v = main->find("W");
  ASSERT_NE(v, nullptr);
  ASSERT_TRUE(v->is_constant_initializer());
  EXPECT_EQ(v->initializer->shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(v->initializer->data_as<float>()[5], 6.f);
}

}  // namespace

TEST(ExternalData, ResolvedRelativeToModelFolder) {
  TempDir dir;
  // 8 bytes of padding, the weights, more padding.
  dir.write("weights.bin", std::string(8, 'x') + float_bytes(kWeights) + std::string(4, 'y'));
  std::string path = dir.write("model.onnx", serialize(external_model("weights.bin", 8, 24)));
  auto model = load_model_from_file(path, defaults());
  expect_weights_resolved(*model);
}

TEST(ExternalData, SubfolderAndImplicitLength) {
  TempDir dir;
  dir.write("data/w.bin", float_bytes(kWeights) + "trailing");
  std::string path = dir.write("model.onnx", serialize(external_model("data/w.bin")));
  auto model = load_model_from_file(path, defaults());
  expect_weights_resolved(*model);
}

TEST(ExternalData, RejectsParentEscape) {
  TempDir dir;
  dir.write("w.bin", float_bytes(kWeights));
  std::string path = dir.write("sub/model.onnx", serialize(external_model("../w.bin")));
  expect_error([&] { load_model_from_file(path, defaults()); }, EPHOST_INVALID_GRAPH, {"'W'", "'../w.bin'"});
  path = dir.write("sub/model2.onnx", serialize(external_model("a/../../w.bin")));
  expect_error([&] { load_model_from_file(path, defaults()); }, EPHOST_INVALID_GRAPH, {"'W'", "..'"});
  path = dir.write("sub/model3.onnx", serialize(external_model("..\\w.bin")));
  expect_error([&] { load_model_from_file(path, defaults()); }, EPHOST_INVALID_GRAPH, {"'W'"});
}

TEST(ExternalData, RejectsAbsoluteLocation) {
  TempDir dir;
  std::string abs = dir.write("w.bin", float_bytes(kWeights));
  std::string path = dir.write("model.onnx", serialize(external_model(abs)));
  expect_error([&] { load_model_from_file(path, defaults()); }, EPHOST_INVALID_GRAPH, {"'W'", abs, "absolute"});
}

TEST(ExternalData, RejectsSymlinkEscape) {
  TempDir dir;
  std::string outside = dir.write("outside/w.bin", float_bytes(kWeights));
  std::filesystem::create_directories(dir.path() / "model");
  std::filesystem::create_symlink(outside, dir.path() / "model" / "link.bin");
  std::string path = dir.write("model/model.onnx", serialize(external_model("link.bin")));
  expect_error([&] { load_model_from_file(path, defaults()); }, EPHOST_INVALID_GRAPH,
               {"'W'", "'link.bin'", "outside"});

  // A sibling folder whose name merely starts with the model folder's name is outside too.
  std::string sibling = dir.write("model_evil/w.bin", float_bytes(kWeights));
  std::filesystem::create_symlink(sibling, dir.path() / "model" / "sibling.bin");
  path = dir.write("model/model2.onnx", serialize(external_model("sibling.bin")));
  expect_error([&] { load_model_from_file(path, defaults()); }, EPHOST_INVALID_GRAPH, {"'W'", "outside"});

  // A symlink that stays inside the folder is fine.
  std::string inside = dir.write("model/data/real.bin", float_bytes(kWeights));
  std::filesystem::create_symlink(inside, dir.path() / "model" / "inside.bin");
  path = dir.write("model/model3.onnx", serialize(external_model("inside.bin")));
  auto model = load_model_from_file(path, defaults());
  expect_weights_resolved(*model);
}

TEST(ExternalData, InvalidOffsetOrLengthText) {
  TempDir dir;
  dir.write("w.bin", float_bytes(kWeights));
  auto m = external_model("w.bin");
  auto* kv = m.mutable_graph()->mutable_initializer(0)->add_external_data();
  kv->set_key("offset");
  kv->set_value("99999999999999999999999");
  std::string path = dir.write("model.onnx", serialize(m));
  expect_error([&] { load_model_from_file(path, defaults()); }, EPHOST_INVALID_GRAPH, {"'W'", "offset"});
}

TEST(ExternalData, RejectsOutOfRange) {
  TempDir dir;
  dir.write("w.bin", float_bytes(kWeights));
  std::string path = dir.write("m1.onnx", serialize(external_model("w.bin", 4, 24)));
  expect_error([&] { load_model_from_file(path, defaults()); }, EPHOST_INVALID_GRAPH,
               {"'W'", "'w.bin'", "offset 4", "outside the file"});
  path = dir.write("m2.onnx", serialize(external_model("w.bin", 1000)));
  expect_error([&] { load_model_from_file(path, defaults()); }, EPHOST_INVALID_GRAPH, {"'W'", "offset 1000"});
  path = dir.write("m3.onnx", serialize(external_model("w.bin", 0, 12)));
  expect_error([&] { load_model_from_file(path, defaults()); }, EPHOST_INVALID_GRAPH, {"'W'", "length 12"});
}

TEST(ExternalData, MissingDataFile) {
  TempDir dir;
  std::string path = dir.write("model.onnx", serialize(external_model("absent.bin")));
  expect_error([&] { load_model_from_file(path, defaults()); }, EPHOST_NO_SUCHFILE, {"'W'", "absent.bin"});
}

TEST(ExternalData, BufferNeedsFolder) {
  auto m = external_model("w.bin");
  expect_error([&] { load_buffer(m); }, EPHOST_INVALID_ARGUMENT,
               {"'W'", "session.model_external_initializers_file_folder_path"});
  TempDir dir;
  dir.write("w.bin", float_bytes(kWeights));
  LoadOptions options;
  options.external_data_folder = dir.path().string();
  auto model = load_buffer(m, options);
  expect_weights_resolved(*model);
  EXPECT_EQ(model->path, "");
}

TEST(ExternalData, ResolvedInsideSubgraphConstant) {
  TempDir dir;
  dir.write("c.bin", float_bytes({7.f}));
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "cond", kBool, {});
  onnx::GraphProto branch;
  branch.set_name("branch");
  onnx::TensorProto t;
  t.set_data_type(kFloat);
  t.add_dims(1);
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = t.add_external_data();
  e->set_key("location");
  e->set_value("c.bin");
  attr_tensor(add_node(&branch, "Constant", {}, {"k"}, "const"), "value", t);
  add_output(&branch, "k", kFloat, {1});
  auto* n = add_node(g, "If", {"cond"}, {"out"}, "if");
  attr_graph(n, "then_branch", branch);
  attr_graph(n, "else_branch", branch);
  add_output(g, "out", kFloat, {1});
  std::string path = dir.write("model.onnx", serialize(m));
  auto model = load_model_from_file(path, defaults());
  const auto& attr_t = model->proto->graph().node(0).attribute(0).g().node(0).attribute(0).t();
  EXPECT_EQ(attr_t.data_location(), onnx::TensorProto::DEFAULT);
  EXPECT_EQ(attr_t.raw_data(), float_bytes({7.f}));
}

// ---------------------------------------------------------------------------------------------
// Sparse initializers

TEST(ModelLoader, DensifiesSparseInitializers) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {2, 3});
  auto* sp = g->add_sparse_initializer();
  sp->add_dims(2);
  sp->add_dims(3);
  *sp->mutable_values() = float_tensor("S", {2}, {5.f, 9.f});
  *sp->mutable_indices() = int64_tensor("", {2}, {1, 5});
  add_node(g, "Add", {"X", "S"}, {"Z"});
  add_output(g, "Z");
  auto model = load_buffer(m);
  std::unique_ptr<Graph> main = build_graph_ir(*model);
  const Value* s = main->find("S");
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->is_constant_initializer());
  const float* d = s->initializer->data_as<float>();
  EXPECT_EQ(std::vector<float>(d, d + 6), (std::vector<float>{0, 5, 0, 0, 0, 9}));
}

// ---------------------------------------------------------------------------------------------
// TensorProto <-> Tensor

TEST(TensorProto, TypedFieldsForEveryType) {
  struct Case {
    int32_t type;
    std::function<void(onnx::TensorProto&)> fill;
    std::function<void(const Tensor&)> check;
  };
  std::vector<Case> cases = {
      {EPHOST_ELEMENT_FLOAT, [](auto& t) { t.add_float_data(1.5f); t.add_float_data(-2.f); },
       [](const Tensor& x) { EXPECT_EQ(x.data_as<float>()[1], -2.f); }},
      {EPHOST_ELEMENT_DOUBLE, [](auto& t) { t.add_double_data(0.25); t.add_double_data(8); },
       [](const Tensor& x) { EXPECT_EQ(x.data_as<double>()[0], 0.25); }},
      {EPHOST_ELEMENT_INT32, [](auto& t) { t.add_int32_data(-7); t.add_int32_data(9); },
       [](const Tensor& x) { EXPECT_EQ(x.data_as<int32_t>()[0], -7); }},
      {EPHOST_ELEMENT_INT16, [](auto& t) { t.add_int32_data(-300); t.add_int32_data(300); },
       [](const Tensor& x) { EXPECT_EQ(x.data_as<int16_t>()[0], -300); }},
      {EPHOST_ELEMENT_INT8, [](auto& t) { t.add_int32_data(-5); t.add_int32_data(5); },
       [](const Tensor& x) { EXPECT_EQ(x.data_as<int8_t>()[0], -5); }},
      {EPHOST_ELEMENT_UINT8, [](auto& t) { t.add_int32_data(250); t.add_int32_data(1); },
       [](const Tensor& x) { EXPECT_EQ(x.data_as<uint8_t>()[0], 250); }},
      {EPHOST_ELEMENT_UINT16, [](auto& t) { t.add_int32_data(60000); t.add_int32_data(1); },
       [](const Tensor& x) { EXPECT_EQ(x.data_as<uint16_t>()[0], 60000); }},
      {EPHOST_ELEMENT_BOOL, [](auto& t) { t.add_int32_data(1); t.add_int32_data(0); },
       [](const Tensor& x) { EXPECT_EQ(x.data_as<uint8_t>()[0], 1); EXPECT_EQ(x.data_as<uint8_t>()[1], 0); }},
      {EPHOST_ELEMENT_FLOAT16, [](auto& t) { t.add_int32_data(0x3C00); t.add_int32_data(0xC000); },
       [](const Tensor& x) { EXPECT_EQ(x.data_as<uint16_t>()[0], 0x3C00); EXPECT_EQ(x.data_as<uint16_t>()[1], 0xC000); }},
      {EPHOST_ELEMENT_BFLOAT16, [](auto& t) { t.add_int32_data(0x3F80); t.add_int32_data(0); },
       [](const Tensor& x) { EXPECT_EQ(x.data_as<uint16_t>()[0], 0x3F80); }},
      {EPHOST_ELEMENT_INT64, [](auto& t) { t.add_int64_data(-(int64_t(1) << 40)); t.add_int64_data(3); },
       [](const Tensor& x) { EXPECT_EQ(x.data_as<int64_t>()[0], -(int64_t(1) << 40)); }},
      {EPHOST_ELEMENT_UINT32, [](auto& t) { t.add_uint64_data(4000000000u); t.add_uint64_data(2); },
       [](const Tensor& x) { EXPECT_EQ(x.data_as<uint32_t>()[0], 4000000000u); }},
      {EPHOST_ELEMENT_UINT64, [](auto& t) { t.add_uint64_data(uint64_t(1) << 63); t.add_uint64_data(2); },
       [](const Tensor& x) { EXPECT_EQ(x.data_as<uint64_t>()[0], uint64_t(1) << 63); }},
      {EPHOST_ELEMENT_STRING, [](auto& t) { t.add_string_data("hello"); t.add_string_data(""); },
       [](const Tensor& x) { EXPECT_STREQ(x.data_as<const char*>()[0], "hello"); EXPECT_STREQ(x.data_as<const char*>()[1], ""); }},
      {EPHOST_ELEMENT_COMPLEX64, [](auto& t) { for (int i = 0; i < 4; ++i) t.add_float_data(float(i)); },
       [](const Tensor& x) { EXPECT_EQ(x.data_as<float>()[3], 3.f); }},
      {EPHOST_ELEMENT_COMPLEX128, [](auto& t) { for (int i = 0; i < 4; ++i) t.add_double_data(i); },
       [](const Tensor& x) { EXPECT_EQ(x.data_as<double>()[3], 3.0); }},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(element_type_name(c.type));
    onnx::TensorProto p;
    p.set_name("t");
    p.set_data_type(c.type);
    p.add_dims(2);
    c.fill(p);
    Tensor t = tensor_from_proto(p);
    EXPECT_EQ(t.elem_type(), c.type);
    EXPECT_EQ(t.shape(), (std::vector<int64_t>{2}));
    c.check(t);

    // Round trip through raw_data (string_data for strings).
    onnx::TensorProto back;
    tensor_to_proto(t, "again", &back);
    EXPECT_EQ(back.name(), "again");
    EXPECT_EQ(back.data_type(), c.type);
    Tensor t2 = tensor_from_proto(back);
    ASSERT_EQ(t2.shape(), t.shape());
    if (c.type == EPHOST_ELEMENT_STRING) {
      EXPECT_TRUE(back.raw_data().empty());
      c.check(t2);
    } else {
      EXPECT_EQ(back.raw_data().size(), t.byte_size());
      EXPECT_EQ(std::memcmp(t.data(), t2.data(), t.byte_size()), 0);
    }

    // One value short: a size mismatch naming the tensor.
    onnx::TensorProto wrong = p;
    wrong.clear_dims();
    wrong.add_dims(3);
    expect_error([&] { tensor_from_proto(wrong); }, EPHOST_INVALID_GRAPH, {"'t'", "needs"});
  }
}

TEST(TensorProto, RawDataAndScalars) {
  Tensor t = tensor_from_proto(float_tensor("s", {}, {4.5f}));
  EXPECT_TRUE(t.shape().empty());
  EXPECT_EQ(t.element_count(), 1);
  EXPECT_EQ(t.data_as<float>()[0], 4.5f);

  Tensor empty = tensor_from_proto(float_tensor("e", {0, 3}, {}));
  EXPECT_EQ(empty.element_count(), 0);
}

TEST(TensorProto, Rejections) {
  onnx::TensorProto raw = float_tensor("bad_raw", {2, 2}, {1, 2, 3});
  expect_error([&] { tensor_from_proto(raw); }, EPHOST_INVALID_GRAPH, {"'bad_raw'", "12 bytes", "16"});

  onnx::TensorProto seg = float_tensor("seg", {1}, {1});
  seg.mutable_segment()->set_begin(0);
  seg.mutable_segment()->set_end(1);
  expect_error([&] { tensor_from_proto(seg); }, EPHOST_INVALID_GRAPH, {"'seg'", "segment"});

  onnx::TensorProto ext = float_tensor("ext", {1}, {1});
  ext.set_data_location(onnx::TensorProto::EXTERNAL);
  expect_error([&] { tensor_from_proto(ext); }, EPHOST_INVALID_GRAPH, {"'ext'", "external"});

  onnx::TensorProto neg = float_tensor("neg", {-1}, {});
  expect_error([&] { tensor_from_proto(neg); }, EPHOST_INVALID_GRAPH, {"'neg'"});

  onnx::TensorProto huge;
  huge.set_name("huge");
  huge.set_data_type(kFloat);
  for (int i = 0; i < 8; ++i) huge.add_dims(int64_t(1) << 20);
  expect_error([&] { tensor_from_proto(huge); }, EPHOST_INVALID_GRAPH, {"'huge'"});

  onnx::TensorProto big;  // fits in int64 but no data: a mismatch, not an allocation
  big.set_name("big");
  big.set_data_type(kFloat);
  big.add_dims(int64_t(1) << 40);
  expect_error([&] { tensor_from_proto(big); }, EPHOST_INVALID_GRAPH, {"'big'"});

  onnx::TensorProto untyped;
  untyped.set_name("untyped");
  expect_error([&] { tensor_from_proto(untyped); }, EPHOST_INVALID_GRAPH, {"'untyped'", "element type"});
}

// ---------------------------------------------------------------------------------------------
// Arbitrary bytes never crash the loader: every failure is an ephost::Error.

namespace {

onnx::ModelProto rich_model() {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {2, 3});
  add_input(g, "cond", kBool, {});
  add_initializer(g, float_tensor("W", {2, 3}, {1, 2, 3, 4, 5, 6}));
  add_initializer(g, int64_tensor("shape", {2}, {3, 2}));
  add_node(g, "Add", {"X", "W"}, {"a"}, "add");
  add_node(g, "Reshape", {"a", "shape"}, {"r"}, "reshape");
  onnx::GraphProto then_g;
  then_g.set_name("then");
  add_node(&then_g, "Relu", {"r"}, {"t"});
  add_output(&then_g, "t", kFloat, {3, 2});
  onnx::GraphProto else_g;
  else_g.set_name("else");
  add_node(&else_g, "Neg", {"r"}, {"e"});
  add_output(&else_g, "e", kFloat, {3, 2});
  auto* n = add_node(g, "If", {"cond"}, {"out"}, "if");
  attr_graph(n, "then_branch", then_g);
  attr_graph(n, "else_branch", else_g);
  add_output(g, "out", kFloat, {3, 2});
  return m;
}

void load_anything(const std::string& bytes, const LoadOptions& options) {
  try {
    auto model = load_model_from_buffer(bytes.data(), bytes.size(), options);
    build_graph_ir(*model);
  } catch (const Error&) {
  }
}

}  // namespace

TEST(ModelLoaderFuzz, ArbitraryBytesOnlyEverThrowEphostErrors) {
  const std::string valid = serialize(rich_model());
  {
    auto model = load_model_from_buffer(valid.data(), valid.size(), defaults());
    build_graph_ir(*model);  // the seed itself is valid
  }
  std::mt19937 rng(1234);
  LoadOptions unchecked;
  unchecked.run_checker = false;
  unchecked.infer_shapes = false;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string bytes = valid;
    switch (iter % 4) {
      case 0: {  // flip a few bytes
        int flips = 1 + static_cast<int>(rng() % 4);
        for (int f = 0; f < flips; ++f) bytes[rng() % bytes.size()] = static_cast<char>(rng());
        break;
      }
      case 1:  // truncate
        bytes.resize(1 + rng() % (bytes.size() - 1));
        break;
      case 2: {  // random bytes
        bytes.resize(1 + rng() % 512);
        for (char& c : bytes) c = static_cast<char>(rng());
        break;
      }
      case 3: {  // splice a chunk of itself somewhere else
        size_t a = rng() % bytes.size(), len = 1 + rng() % 32;
        bytes.insert(rng() % bytes.size(), bytes.substr(a, len));
        break;
      }
    }
    SCOPED_TRACE(iter);
    EXPECT_NO_THROW(load_anything(bytes, defaults()));
    EXPECT_NO_THROW(load_anything(bytes, unchecked));
  }
}

namespace {

void collect_graphs(onnx::GraphProto* g, std::vector<onnx::GraphProto*>* out) {
  out->push_back(g);
  for (auto& n : *g->mutable_node())
    for (auto& a : *n.mutable_attribute())
      if (a.has_g()) collect_graphs(a.mutable_g(), out);
}

// One random structural edit of the model: names, types, shapes, data, ops, attributes, opsets.
void mutate(onnx::ModelProto& m, std::mt19937& rng) {
  std::vector<onnx::GraphProto*> graphs;
  collect_graphs(m.mutable_graph(), &graphs);
  onnx::GraphProto* g = graphs[rng() % graphs.size()];
  static const char* kNames[] = {"X", "W", "a", "r", "t", "e", "cond", "shape", "out", "", "zz"};
  static const char* kOps[] = {"Add", "Reshape", "If", "Loop", "Scan", "Identity", "Constant", "NoSuchOp",
                               "Dropout", "Cast", "Shape", "Relu", "Concat", "Split", "Gemm"};
  auto name = [&] { return std::string(kNames[rng() % (sizeof(kNames) / sizeof(kNames[0]))]); };
  auto pick_node = [&]() -> onnx::NodeProto* {
    return g->node_size() ? g->mutable_node(static_cast<int>(rng() % g->node_size())) : nullptr;
  };
  auto pick_init = [&]() -> onnx::TensorProto* {
    return g->initializer_size() ? g->mutable_initializer(static_cast<int>(rng() % g->initializer_size())) : nullptr;
  };
  switch (rng() % 14) {
    case 0:
      if (auto* n = pick_node(); n && n->input_size()) n->set_input(static_cast<int>(rng() % n->input_size()), name());
      break;
    case 1:
      if (auto* n = pick_node(); n && n->output_size())
        n->set_output(static_cast<int>(rng() % n->output_size()), name());
      break;
    case 2:
      if (auto* t = pick_init()) t->set_data_type(static_cast<int>(rng() % 22) - 1);
      break;
    case 3:
      if (auto* t = pick_init()) {
        static const int64_t kDims[] = {0, 1, 2, 3, -1, -7, int64_t(1) << 40, INT64_MAX};
        if (rng() % 2 && t->dims_size())
          t->set_dims(static_cast<int>(rng() % t->dims_size()), kDims[rng() % 8]);
        else
          t->add_dims(kDims[rng() % 8]);
      }
      break;
    case 4:
      if (auto* t = pick_init()) t->mutable_raw_data()->resize(rng() % 64);
      break;
    case 5:
      if (auto* n = pick_node()) n->set_op_type(kOps[rng() % (sizeof(kOps) / sizeof(kOps[0]))]);
      break;
    case 6:
      if (auto* n = pick_node(); n && n->attribute_size()) {
        auto* a = n->mutable_attribute(static_cast<int>(rng() % n->attribute_size()));
        if (rng() % 2)
          a->set_type(static_cast<onnx::AttributeProto::AttributeType>(rng() % 15));
        else
          a->clear_g();
      } else if (n) {
        onnx::GraphProto sub;
        add_node(&sub, "Relu", {name()}, {name()});
        add_untyped_output(&sub, name());
        attr_graph(n, rng() % 2 ? "body" : "then_branch", sub);
      }
      break;
    case 7:
      if (g->node_size()) g->mutable_node()->DeleteSubrange(static_cast<int>(rng() % g->node_size()), 1);
      break;
    case 8:
      if (auto* n = pick_node()) *g->add_node() = *n;
      break;
    case 9:
      m.mutable_opset_import(0)->set_version(static_cast<int64_t>(rng() % 21));
      break;
    case 10:
      if (g->output_size()) {
        auto* tt = g->mutable_output(static_cast<int>(rng() % g->output_size()))->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(static_cast<int>(rng() % 20));
        if (rng() % 2) tt->mutable_shape()->add_dim()->set_dim_value(static_cast<int64_t>(rng() % 5) - 1);
      }
      break;
    case 11:
      if (auto* t = pick_init()) {
        t->set_data_location(onnx::TensorProto::EXTERNAL);
        auto* kv = t->add_external_data();
        kv->set_key(rng() % 4 ? "location" : "offset");
        static const char* kLocs[] = {"../x.bin", "/etc/passwd", "w.bin", "", "a/../../b"};
        kv->set_value(kLocs[rng() % 5]);
      }
      break;
    case 12:
      if (g->input_size()) *g->add_input() = g->input(static_cast<int>(rng() % g->input_size()));
      break;
    case 13:
      if (auto* n = pick_node()) n->set_domain(rng() % 2 ? "ai.onnx" : "com.example");
      break;
  }
}

}  // namespace

TEST(ModelLoaderFuzz, StructuralMutationsOnlyEverThrowEphostErrors) {
  const onnx::ModelProto seed = rich_model();
  std::mt19937 rng(99);
  LoadOptions no_checker;
  no_checker.run_checker = false;
  LoadOptions nothing;
  nothing.run_checker = false;
  nothing.infer_shapes = false;
  TransformContext ctx;
  ctx.evaluate = [](const onnx::NodeProto&, const std::vector<const Tensor*>&, const onnx::ModelProto&)
      -> std::vector<Tensor> { throw Error(EPHOST_NOT_IMPLEMENTED, "no evaluator in this test"); };
  int loaded = 0;
  // EPHOST_FUZZ_ITERATIONS / EPHOST_FUZZ_SEED run it longer or differently by hand.
  const int iterations = std::getenv("EPHOST_FUZZ_ITERATIONS") ? std::atoi(std::getenv("EPHOST_FUZZ_ITERATIONS")) : 1500;
  if (std::getenv("EPHOST_FUZZ_SEED")) rng.seed(static_cast<unsigned>(std::atoi(std::getenv("EPHOST_FUZZ_SEED"))));
  for (int iter = 0; iter < iterations; ++iter) {
    onnx::ModelProto m = seed;
    int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) mutate(m, rng);
    const std::string bytes = serialize(m);
    for (const LoadOptions* options : std::vector<const LoadOptions*>{&kDefaultLoadOptions, &no_checker, &nothing}) {
      SCOPED_TRACE(iter);
      EXPECT_NO_THROW({
        try {
          auto model = load_model_from_buffer(bytes.data(), bytes.size(), *options);
          default_pipeline().run(*build_graph_ir(*model), ctx);
          ++loaded;
        } catch (const Error&) {
        }
      });
    }
  }
  std::printf("structural fuzz: %d of %d loads went through\n", loaded, iterations * 3);
  EXPECT_GT(loaded, iterations / 15);  // the mutations leave enough models intact to reach the IR and the passes
}

TEST(ModelLoaderFuzz, DeeplyNestedBytesAreRejected) {
  // GraphProto.node(1) -> NodeProto.attribute(5) -> AttributeProto.g(6) -> GraphProto ..., 2000 levels
  // deep: protobuf's recursion limit must stop the parse before anything recurses on it.
  auto wrap = [](int field, const std::string& inner) {
    std::string out(1, static_cast<char>((field << 3) | 2));
    size_t n = inner.size();
    while (n >= 0x80) {
      out += static_cast<char>(0x80 | (n & 0x7f));
      n >>= 7;
    }
    out += static_cast<char>(n);
    return out + inner;
  };
  std::string graph;
  for (int i = 0; i < 2000; ++i) graph = wrap(1, wrap(5, wrap(6, graph)));
  std::string model = std::string("\x08\x08") + wrap(7, graph);  // ir_version 8, graph
  expect_error([&] { load_model_from_buffer(model.data(), model.size(), defaults()); }, EPHOST_INVALID_PROTOBUF,
               {"failed to parse"});
  TempDir dir;
  std::string path = dir.write("deep.onnx", model);
  expect_error([&] { load_model_from_file(path, defaults()); }, EPHOST_INVALID_PROTOBUF, {"failed to parse"});
}
