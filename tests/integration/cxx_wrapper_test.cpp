// The C++ wrapper (ephost_cxx_api.h): each call gives what its C function gives.
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "ephost/ephost_cxx_api.h"
#include "test_support.h"

namespace {

Ephost::Env& cpu_env() {
  static Ephost::Env env(EPHOST_LOG_ERROR, std::vector<std::string>{});
  return env;
}

TEST(CxxWrapper, VersionStringAndCodeNames) {
  EXPECT_EQ(Ephost::version_string(), EphostGetVersionString());
  EXPECT_FALSE(Ephost::version_string().empty());
  EXPECT_EQ(Ephost::error_code_name(EPHOST_INVALID_GRAPH), "INVALID_GRAPH");
  EXPECT_EQ(Ephost::error_code_name(EPHOST_OK), "OK");
}

TEST(CxxWrapper, DeclaredTensorTypesOfInputsAndOutputs) {
  ephost_test::ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {-1, 3}).output("y", onnx::TensorProto::FLOAT, {-1, 3});
  m.node("Relu", {"x"}, {"y"}, "relu");
  const std::string bytes = m.bytes();
  Ephost::Session session(cpu_env(), bytes.data(), bytes.size());

  const Ephost::Session::TensorType in = session.input_tensor_type(0);
  EXPECT_EQ(in.elem_type, EPHOST_ELEMENT_FLOAT);
  EXPECT_EQ(in.rank, 2);
  EXPECT_EQ(in.dims, (std::vector<int64_t>{-1, 3})) << "a symbolic dim is -1";
  const Ephost::Session::TensorType out = session.output_tensor_type(0);
  EXPECT_EQ(out.elem_type, EPHOST_ELEMENT_FLOAT);
  EXPECT_EQ(out.rank, 2);
  try {
    session.input_tensor_type(1);
    FAIL() << "input 1 does not exist";
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_INVALID_ARGUMENT) << e.what();
  }
}

TEST(CxxWrapper, SymbolicDimNames) {
  ephost_test::ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {-1, 3}).output("y", onnx::TensorProto::FLOAT, {-1, 3});
  m.node("Relu", {"x"}, {"y"}, "relu");
  // An input of unknown rank has no dims to name.
  auto* unranked = m.proto().mutable_graph()->add_input();
  unranked->set_name("z");
  unranked->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  const std::string bytes = m.bytes();
  Ephost::Session session(cpu_env(), bytes.data(), bytes.size());

  EXPECT_EQ(session.input_dim_names(0), (std::vector<std::string>{"N", ""})) << "ModelBuilder names -1 dims N";
  EXPECT_EQ(session.output_dim_names(0), (std::vector<std::string>{"N", ""}));
  EXPECT_TRUE(session.input_dim_names(1).empty());
  const char* name = nullptr;
  EphostStatus* past_rank = Ephost::api().SessionGetInputDimName(session.get(), 0, 2, &name);
  ASSERT_NE(past_rank, nullptr) << "dimension 2 of a rank-2 input";
  EXPECT_EQ(Ephost::api().GetErrorCode(past_rank), EPHOST_INVALID_ARGUMENT);
  EXPECT_NE(std::string(Ephost::api().GetErrorMessage(past_rank)).find("rank 2"), std::string::npos)
      << Ephost::api().GetErrorMessage(past_rank);
  Ephost::api().ReleaseStatus(past_rank);
  EphostStatus* unknown_rank = Ephost::api().SessionGetInputDimName(session.get(), 1, 0, &name);
  ASSERT_NE(unknown_rank, nullptr);
  EXPECT_EQ(Ephost::api().GetErrorCode(unknown_rank), EPHOST_INVALID_ARGUMENT);
  Ephost::api().ReleaseStatus(unknown_rank);
  EXPECT_EQ(EphostGetApi(2)->SessionGetInputDimName, nullptr) << "an API 2 table ends before version 3";
}

TEST(CxxWrapper, InspectWithSessionOptions) {
  ephost_test::TempDir dir;
  ephost_test::ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {2}).output("y", onnx::TensorProto::FLOAT, {2});
  m.node("Relu", {"x"}, {"y"}, "relu");
  const std::string path = m.save(dir);
  Ephost::SessionOptions options;
  options.add_config("session.model_external_initializers_file_folder_path", dir.path());
  const nlohmann::json with_options = nlohmann::json::parse(cpu_env().inspect_ep_context_model_json(path, options));
  const nlohmann::json without = nlohmann::json::parse(cpu_env().inspect_ep_context_model_json(path));
  EXPECT_EQ(with_options, without) << "an ordinary model reads the same with or without options";
  EXPECT_TRUE(with_options.value("nodes", nlohmann::json::array()).empty()) << with_options.dump();
}

}  // namespace
