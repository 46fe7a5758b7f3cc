// session.free_dimension_override.<name> (and ..._denotation.<denotation>): symbolic input dimensions
// fixed when the model loads, so the session's shapes are static; other sizes refused naming the
// override; bad values refused; names that match nothing warned about.
#include <gtest/gtest.h>

#include "ephost/ephost_cxx_api.h"
#include "ephost/ephost_session_options_keys.h"
#include "test_support.h"

namespace {

using ephost_test::ModelBuilder;

// x[N, 4] -> Relu -> MatMul(w[4, 3]) -> y[N, 3]. x's second dim carries denotation "FEATURE".
std::string symbolic_model() {
  ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {-1, 4}).output("y", onnx::TensorProto::FLOAT, {-1, 3});
  m.proto().mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)
      ->set_denotation("DATA_BATCH");
  std::vector<float> w(12);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.5f * static_cast<float>(i) - 2.0f;
  m.initializer("w", {4, 3}, w);
  m.node("Relu", {"x"}, {"r"}, "relu");
  m.node("MatMul", {"r", "w"}, {"y"}, "matmul");
  return m.bytes();
}

Ephost::Env& env() {
  static Ephost::Env e(EPHOST_LOG_WARNING, std::vector<std::string>{});
  return e;
}

std::string override_key(const std::string& name) {
  return std::string(kEphostSessionOptionsFreeDimensionOverridePrefix) + name;
}

std::vector<float> run_model(Ephost::Session& session, int64_t rows) {
  std::vector<float> x(static_cast<size_t>(rows * 4));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) - 3.0f;
  Ephost::Tensor in = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {rows, 4}, x.data(), x.size());
  std::vector<Ephost::Tensor> out = session.run({"x"}, {in}, {"y"});
  const float* y = out[0].data<float>();
  return std::vector<float>(y, y + rows * 3);
}

std::vector<float> expected(int64_t rows) {
  std::vector<float> y(static_cast<size_t>(rows * 3), 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t k = 0; k < 4; ++k) {
        const float x = static_cast<float>((r * 4 + k) % 7) - 3.0f;
        y[r * 3 + c] += std::max(x, 0.0f) * (0.5f * static_cast<float>(k * 3 + c) - 2.0f);
      }
  return y;
}

std::string creation_error(const Ephost::SessionOptions& options) {
  const std::string model = symbolic_model();
  try {
    Ephost::Session session(env(), model.data(), model.size(), options);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(FreeDimensionOverride, ByNameMakesTheInputStaticAndRunsCorrectly) {
  const std::string model = symbolic_model();
  {
    Ephost::Session plain(env(), model.data(), model.size());
    EXPECT_EQ(plain.input_tensor_type(0).dims, (std::vector<int64_t>{-1, 4}));
  }
  Ephost::SessionOptions options;
  options.add_free_dimension_override_by_name("N", 2);
  Ephost::Session session(env(), model.data(), model.size(), options);
  EXPECT_EQ(session.input_tensor_type(0).dims, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(session.input_dim_names(0), (std::vector<std::string>{"", ""}));
  EXPECT_EQ(run_model(session, 2), expected(2));
}

TEST(FreeDimensionOverride, ByDenotation) {
  const std::string model = symbolic_model();
  Ephost::SessionOptions options;
  options.add_free_dimension_override("DATA_BATCH", 3);
  Ephost::Session session(env(), model.data(), model.size(), options);
  EXPECT_EQ(session.input_tensor_type(0).dims, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(run_model(session, 3), expected(3));
}

TEST(FreeDimensionOverride, AnotherSizeIsRefusedNamingInputDimAndOverride) {
  const std::string model = symbolic_model();
  Ephost::SessionOptions options;
  options.add_config(override_key("N"), "2");
  Ephost::Session session(env(), model.data(), model.size(), options);
  try {
    run_model(session, 5);
    FAIL() << "a 5-row input ran in a session fixed at 2 rows";
  } catch (const std::exception& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("'x'"), std::string::npos) << m;
    EXPECT_NE(m.find("dimension 0 must be 2"), std::string::npos) << m;
    EXPECT_NE(m.find("session.free_dimension_override.N=2"), std::string::npos) << m;
  }
}

TEST(FreeDimensionOverride, ValuesThatAreNoPositiveIntegerAreRefusedNamingTheKey) {
  for (const char* bad : {"0", "-1", "two", "", "3.5", "99999999999999999999999"}) {
    Ephost::SessionOptions options;
    options.add_config(override_key("N"), bad);
    const std::string m = creation_error(options);
    EXPECT_NE(m.find("session.free_dimension_override.N"), std::string::npos) << bad << ": " << m;
    EXPECT_NE(m.find("positive integer"), std::string::npos) << bad << ": " << m;
  }
  Ephost::SessionOptions empty_name;
  EXPECT_THROW(empty_name.add_config(kEphostSessionOptionsFreeDimensionOverridePrefix, "1"), std::exception);
}

TEST(FreeDimensionOverride, ANameNoInputCarriesIsWarnedAbout) {
  const std::string model = symbolic_model();
  Ephost::SessionOptions options;
  options.add_config(override_key("batch_size"), "4");
  testing::internal::CaptureStderr();
  {
    Ephost::Session session(env(), model.data(), model.size(), options);
    EXPECT_EQ(session.input_tensor_type(0).dims, (std::vector<int64_t>{-1, 4}));
    EXPECT_EQ(run_model(session, 5), expected(5));
  }
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("session.free_dimension_override.batch_size=4"), std::string::npos) << log;
  EXPECT_NE(log.find("'batch_size'"), std::string::npos) << log;
}

}  // namespace
