// Application API 4: run options (terminate refuses a run before it starts, stops a run in progress
// between steps, subgraph steps included, and is cleared again; the tag names the run), model
// metadata (SessionGetModelMetadataJson), initializers the application supplies (AddInitializer) and
// the default log level.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "ephost/ephost_cxx_api.h"
#include "test_support.h"

namespace {

Ephost::Env& cpu_env() {
  static Ephost::Env env(EPHOST_LOG_ERROR, std::vector<std::string>{});
  return env;
}

// y = x after M iterations of x + one (Loop, body in a subgraph the host runs step by step).
std::string counting_loop_model() {
  ephost_test::ModelBuilder m;
  m.input("M", onnx::TensorProto::INT64, {}).input("x", onnx::TensorProto::FLOAT, {1});
  m.output("y", onnx::TensorProto::FLOAT, {1});
  m.initializer("one", {1}, {1.0f});
  m.initializer("keep_going", {}, {1.0f});
  ephost_test::attr_int(m.node("Cast", {"keep_going"}, {"cond"}, "to_bool"), "to", onnx::TensorProto::BOOL);
  onnx::GraphProto body;
  body.set_name("body");
  ephost_test::ModelBuilder::set_type(body.add_input(), "i", onnx::TensorProto::INT64, {});
  ephost_test::ModelBuilder::set_type(body.add_input(), "cond_in", onnx::TensorProto::BOOL, {});
  ephost_test::ModelBuilder::set_type(body.add_input(), "x_in", onnx::TensorProto::FLOAT, {1});
  ephost_test::ModelBuilder::set_type(body.add_output(), "cond_out", onnx::TensorProto::BOOL, {});
  ephost_test::ModelBuilder::set_type(body.add_output(), "x_out", onnx::TensorProto::FLOAT, {1});
  auto* pass = body.add_node();
  pass->set_op_type("Identity");
  pass->set_name("pass_cond");
  pass->add_input("cond_in");
  pass->add_output("cond_out");
  auto* add = body.add_node();
  add->set_op_type("Add");
  add->set_name("count");
  add->add_input("x_in");
  add->add_input("one");  // outer scope
  add->add_output("x_out");
  auto& loop = m.node("Loop", {"M", "cond", "x"}, {"y"}, "loop");
  ephost_test::set_graph_attribute(loop, "body", body);
  return m.bytes();
}

TEST(RunOptions, TerminateRefusesTheRunUntilCleared) {
  const std::string bytes = ephost_test::chain_model(2, 3).bytes();
  Ephost::Session session(cpu_env(), bytes.data(), bytes.size());
  std::vector<float> x(6, 0.5f);
  auto in = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {2, 3}, x.data(), x.size());
  Ephost::RunOptions options;
  options.set_tag("batch-7").set_terminate(true);
  try {
    session.run({"x"}, {in}, {"y"}, &options);
    FAIL() << "a run with terminate set ran";
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_CANCELLED);
    EXPECT_NE(e.message().find("run 'batch-7' terminated by RunOptions.terminate"), std::string::npos) << e.message();
  }
  options.set_terminate(false);
  EXPECT_EQ(session.run({"x"}, {in}, {"y"}, &options)[0].shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(session.run({"x"}, {in}, {"y"}, nullptr)[0].size(), 6u) << "no run options: an ordinary run";
}

TEST(RunOptions, TerminateAppliesToBoundRuns) {
  const std::string bytes = ephost_test::chain_model(2, 3).bytes();
  Ephost::Session session(cpu_env(), bytes.data(), bytes.size());
  std::vector<float> x(6, 0.5f);
  Ephost::Session::IoBinding binding(session);
  binding.bind_input("x", Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {2, 3}, x.data(), x.size()));
  binding.bind_output_to_device("y", "", 0);
  Ephost::RunOptions options;
  options.set_terminate(true);
  EXPECT_THROW(binding.run(&options), Ephost::Exception);
  options.set_terminate(false);
  binding.run(&options);
  EXPECT_EQ(binding.output("y").size(), 6u);
}

TEST(RunOptions, TerminateStopsARunInProgressBetweenSubgraphSteps) {
  const std::string bytes = counting_loop_model();
  Ephost::Session session(cpu_env(), bytes.data(), bytes.size());
  int64_t iterations = 5;
  float x = 0.0f;
  auto m = Ephost::Tensor::wrap(EPHOST_ELEMENT_INT64, {}, &iterations, 1);
  auto in = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {1}, &x, 1);
  ASSERT_EQ(session.run({"M", "x"}, {m, in}, {"y"})[0].to_vector<float>()[0], 5.0f);

  iterations = int64_t{1} << 40;  // hours of iterations: only terminate ends it
  Ephost::RunOptions options;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    options.set_terminate(true);
  });
  const auto start = std::chrono::steady_clock::now();
  try {
    session.run({"M", "x"}, {m, in}, {"y"}, &options);
    ADD_FAILURE() << "the run was not terminated";
  } catch (const Ephost::Exception& e) {
    EXPECT_NE(e.message().find("terminated by RunOptions.terminate"), std::string::npos) << e.message();
  }
  stopper.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

TEST(ModelMetadata, ReportsWhatTheModelDeclares) {
  ephost_test::ModelBuilder m(13, "main_graph");
  m.input("x", onnx::TensorProto::FLOAT, {2}).output("y", onnx::TensorProto::FLOAT, {2});
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.proto().set_producer_name("exporter");
  m.proto().set_producer_version("2.1");
  m.proto().set_domain("ai.example");
  m.proto().set_doc_string("a model");
  m.proto().set_model_version(7);
  m.proto().mutable_graph()->set_doc_string("its graph");
  auto* prop = m.proto().add_metadata_props();
  prop->set_key("labels");
  prop->set_value("cat,dog");
  const std::string bytes = m.bytes();
  Ephost::Session session(cpu_env(), bytes.data(), bytes.size());
  const nlohmann::json meta = nlohmann::json::parse(session.model_metadata_json());
  EXPECT_EQ(meta["producer_name"], "exporter");
  EXPECT_EQ(meta["producer_version"], "2.1");
  EXPECT_EQ(meta["domain"], "ai.example");
  EXPECT_EQ(meta["description"], "a model");
  EXPECT_EQ(meta["graph_name"], "main_graph");
  EXPECT_EQ(meta["graph_description"], "its graph");
  EXPECT_EQ(meta["version"], 7);
  EXPECT_EQ(meta["custom_metadata_map"], (nlohmann::json{{"labels", "cat,dog"}}));
}

TEST(AddInitializer, ReplacesAnInitializerOrMakesAnInputConstant) {
  ephost_test::ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {2}).input("b", onnx::TensorProto::FLOAT, {2});
  m.output("y", onnx::TensorProto::FLOAT, {2});
  m.initializer("w", {2}, {1.0f, 1.0f});
  m.node("Mul", {"x", "w"}, {"xw"}, "mul");
  m.node("Add", {"xw", "b"}, {"y"}, "add");
  const std::string bytes = m.bytes();
  std::vector<float> w = {2.0f, 3.0f}, b = {10.0f, 20.0f}, x = {1.0f, 1.0f};
  Ephost::SessionOptions options;
  options.add_initializer("w", Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {2}, w.data(), 2));
  options.add_initializer("b", Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {2}, b.data(), 2));
  w = {0.0f, 0.0f};  // copied when added
  Ephost::Session session(cpu_env(), bytes.data(), bytes.size(), options);
  EXPECT_EQ(session.input_names(), std::vector<std::string>{"x"}) << "b is a constant now";
  auto y = session.run({"x"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {2}, x.data(), 2)}, {"y"});
  EXPECT_EQ(y[0].to_vector<float>(), (std::vector<float>{12.0f, 23.0f}));

  Ephost::SessionOptions wrong_shape;
  std::vector<float> three(3, 1.0f);
  wrong_shape.add_initializer("w", Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {3}, three.data(), 3));
  try {
    Ephost::Session s(cpu_env(), bytes.data(), bytes.size(), wrong_shape);
    FAIL() << "a value of another shape replaced an initializer";
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_INVALID_ARGUMENT);
    EXPECT_NE(e.message().find("the model's initializer is float [2]"), std::string::npos) << e.message();
  }
  Ephost::SessionOptions unknown;
  unknown.add_initializer("bias", Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {2}, b.data(), 2));
  try {
    Ephost::Session s(cpu_env(), bytes.data(), bytes.size(), unknown);
    FAIL() << "an initializer nobody reads was accepted";
  } catch (const Ephost::Exception& e) {
    EXPECT_NE(e.message().find("no initializer or input of that name (it has: w, x, b)"), std::string::npos)
        << e.message();
  }
}

TEST(DefaultLogLevel, RefusesAValueThatIsNoLevel) {
  EXPECT_THROW(Ephost::set_default_log_level(static_cast<EphostLogLevel>(9)), Ephost::Exception);
  Ephost::set_default_log_level(EPHOST_LOG_ERROR);
}

TEST(ApiVersion, Version3TableEndsBeforeRunOptions) {
  const EphostApi* v3 = EphostGetApi(3);
  ASSERT_NE(v3, nullptr);
  EXPECT_EQ(v3->struct_size, EphostApiSize(3));
  EXPECT_FALSE(EPHOST_STRUCT_HAS(v3, EphostApi, CreateRunOptions));
  EXPECT_EQ(v3->CreateRunOptions, nullptr);
  EXPECT_EQ(v3->SessionGetModelMetadataJson, nullptr);
  EXPECT_EQ(v3->AddInitializer, nullptr);
  const EphostApi* v4 = EphostGetApi(4);
  ASSERT_NE(v4, nullptr);
  EXPECT_NE(v4->RunWithBindingAndOptions, nullptr);
  EXPECT_NE(v4->SessionGetModelMetadataJson, nullptr);
}

}  // namespace
