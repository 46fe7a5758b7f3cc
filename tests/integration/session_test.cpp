// Sessions through the C API: model-loading errors, input validation, concurrent runs, API versioning.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <cmath>
#include <thread>

#include "ephost/ephost_cxx_api.h"
#include "test_support.h"

using ephost_test::TempDir;

namespace {

Ephost::Env& cpu_env() {
  static Ephost::Env env(EPHOST_LOG_ERROR, std::vector<std::string>{});
  return env;
}

template <typename Fn>
void expect_error(EphostStatusCode code, const std::string& fragment, Fn&& fn) {
  try {
    fn();
    FAIL() << "expected " << Ephost::api().GetErrorCodeName(code);
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(e.message().find(fragment), std::string::npos) << "message: " << e.message();
  }
}

TEST(ApiVersion, OlderIsServedNewerIsNull) {
  EXPECT_NE(EphostGetApi(1), nullptr);
  EXPECT_EQ(EphostGetApi(EPHOST_API_VERSION + 1), nullptr);
  EXPECT_EQ(EphostGetApi(0), nullptr);
  // Each version is served a table of its own size; the newest covers the whole table of the header.
  EXPECT_EQ(EphostGetApi(1)->struct_size, EphostApiSize(1));
  EXPECT_EQ(EphostGetApi(EPHOST_API_VERSION)->struct_size, sizeof(EphostApi));
}

TEST(ApiVersion, Version1TableEndsWithVersion1) {
  const EphostApi* v1 = EphostGetApi(1);
  ASSERT_NE(v1, nullptr);
  EXPECT_EQ(v1->version, 1u);
  EXPECT_LT(v1->struct_size, EphostApiSize(2));
  EXPECT_FALSE(EPHOST_STRUCT_HAS(v1, EphostApi, ValueGetKind));
  EXPECT_TRUE(EPHOST_STRUCT_HAS(v1, EphostApi, GetElementSize));
  EXPECT_EQ(v1->ValueGetKind, nullptr) << "version 2's members are past a version 1 table's end";
  EXPECT_EQ(v1->InspectEpContextModelJson, nullptr);
  EXPECT_STREQ(v1->GetErrorCodeName(EPHOST_INVALID_GRAPH), "INVALID_GRAPH");
  EXPECT_EQ(v1->GetElementSize(EPHOST_ELEMENT_FLOAT), 4u);

  const EphostApi* v2 = EphostGetApi(2);
  ASSERT_NE(v2, nullptr);
  EXPECT_EQ(v2->version, 2u);
  EXPECT_NE(v2->ValueGetKind, nullptr);
  EXPECT_NE(v2->InspectEpContextModelJson, nullptr);
}

TEST(ModelLoading, MissingFileIsNoSuchFile) {
  expect_error(EPHOST_NO_SUCHFILE, "/nonexistent/model.onnx",
               [] { Ephost::Session s(cpu_env(), std::string("/nonexistent/model.onnx")); });
}

TEST(ModelLoading, GarbageBytesAreInvalidProtobuf) {
  std::string junk = "this is not an onnx model at all \x01\x02\x03\xff\xfe";
  expect_error(EPHOST_INVALID_PROTOBUF, "", [&] { Ephost::Session s(cpu_env(), junk.data(), junk.size()); });
}

TEST(ModelLoading, DanglingInputIsInvalidGraph) {
  ephost_test::ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {2}).output("y", onnx::TensorProto::FLOAT, {2});
  m.node("Add", {"x", "nowhere"}, {"y"}, "add");
  std::string b = m.bytes();
  expect_error(EPHOST_INVALID_GRAPH, "nowhere", [&] { Ephost::Session s(cpu_env(), b.data(), b.size()); });
}

TEST(ModelLoading, UnsupportedOpsetIsInvalidGraph) {
  ephost_test::ModelBuilder m(99);
  m.input("x", onnx::TensorProto::FLOAT, {2}).output("y", onnx::TensorProto::FLOAT, {2});
  m.node("Relu", {"x"}, {"y"}, "relu");
  std::string b = m.bytes();
  expect_error(EPHOST_INVALID_GRAPH, "99", [&] { Ephost::Session s(cpu_env(), b.data(), b.size()); });
}

class RunValidation : public ::testing::Test {
 protected:
  void SetUp() override {
    bytes_ = ephost_test::chain_model(2, 3).bytes();
    session_ = std::make_unique<Ephost::Session>(cpu_env(), bytes_.data(), bytes_.size());
  }
  std::string bytes_;
  std::unique_ptr<Ephost::Session> session_;
  std::vector<float> x_ = std::vector<float>(6, 0.5f);
};

TEST_F(RunValidation, UnknownInputNameListsTheInputs) {
  auto t = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {2, 3}, x_.data(), 6);
  expect_error(EPHOST_INVALID_ARGUMENT, "'x'", [&] { session_->run({"X"}, {t}, {"y"}); });
}

TEST_F(RunValidation, WrongTypeIsReported) {
  std::vector<int64_t> xi(6, 1);
  auto t = Ephost::Tensor::wrap(EPHOST_ELEMENT_INT64, {2, 3}, xi.data(), 6);
  expect_error(EPHOST_INVALID_ARGUMENT, "expected element type float, got int64",
               [&] { session_->run({"x"}, {t}, {"y"}); });
}

TEST_F(RunValidation, WrongShapeIsReported) {
  auto t = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {3, 2}, x_.data(), 6);
  expect_error(EPHOST_INVALID_ARGUMENT, "dimension 0 must be 2", [&] { session_->run({"x"}, {t}, {"y"}); });
}

TEST_F(RunValidation, MissingInputIsReported) {
  expect_error(EPHOST_INVALID_ARGUMENT, "missing input", [&] { session_->run({}, {}, {"y"}); });
}

TEST_F(RunValidation, UnknownOutputIsReported) {
  auto t = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {2, 3}, x_.data(), 6);
  expect_error(EPHOST_INVALID_ARGUMENT, "unknown output 'z'", [&] { session_->run({"x"}, {t}, {"z"}); });
}

TEST_F(RunValidation, BufferSizeMismatchIsReported) {
  expect_error(EPHOST_INVALID_ARGUMENT, "needs 24", [&] {
    EphostTensor* t = nullptr;
    Ephost::check(Ephost::api().CreateTensorWithData(EPHOST_ELEMENT_FLOAT, std::vector<int64_t>{2, 3}.data(), 2,
                                                     x_.data(), 20, &t));
  });
}

TEST(ConcurrentRuns, ManyThreadsOneSessionSameAnswers) {
  const int64_t rows = 32, cols = 48;
  std::string bytes = ephost_test::chain_model(rows, cols).bytes();
  Ephost::SessionOptions o;
  o.set_threads(1);
  Ephost::Session session(cpu_env(), bytes.data(), bytes.size(), o);
  std::vector<std::thread> threads;
  std::vector<int> failures(6, 0);
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (int iter = 0; iter < 40; ++iter) {
        std::vector<float> x = ephost_test::ramp(static_cast<size_t>(rows * cols), 0.01f * (t + 1), -0.3f * iter);
        auto in = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {rows, cols}, x.data(), x.size());
        auto out = session.run({"x"}, {in}, {"y"});
        std::vector<float> y = out[0].to_vector<float>(), e = ephost_test::chain_expected(x, cols);
        for (size_t i = 0; i < y.size(); ++i)
          if (std::fabs(y[i] - e[i]) > 1e-5f) {
            failures[t]++;
            break;
          }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 6; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

TEST(SessionFromFile, ExternalDataOutsideTheModelFolderIsRejected) {
  TempDir dir;
  ephost_test::ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {2}).output("y", onnx::TensorProto::FLOAT, {2});
  auto* w = m.proto().mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(2);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = w->add_external_data();
  kv->set_key("location");
  kv->set_value("../escape.bin");
  m.node("Add", {"x", "w"}, {"y"}, "add");
  std::string path = m.save(dir);
  expect_error(EPHOST_INVALID_GRAPH, "escape.bin", [&] { Ephost::Session s(cpu_env(), path); });
}

}  // namespace

namespace {

// The built-in CPU plugin (and any plugin library) is shared by every env that loads it, and keeps
// one pointer to the host table it was given: ending one env must not pull that table from under the
// sessions of another (a crash in the CPU plugin's fused chains before the tables lived as long as
// the process).
TEST(Envs, EndingOneEnvLeavesTheOthersSessionsWorking) {
  const int64_t rows = 4, cols = 5;
  std::string bytes = ephost_test::chain_model(rows, cols).bytes();
  auto first = std::make_unique<Ephost::Env>(EPHOST_LOG_ERROR, std::vector<std::string>{});
  Ephost::Session session(*first, bytes.data(), bytes.size());
  for (int round = 0; round < 3; ++round) {
    { Ephost::Env other(EPHOST_LOG_ERROR, std::vector<std::string>{}); }  // discovers, negotiates, ends
    std::vector<float> x = ephost_test::ramp(static_cast<size_t>(rows * cols));
    auto out = session.run({"x"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {rows, cols}, x.data(), x.size())},
                           {"y"});
    std::vector<float> y = out[0].to_vector<float>(), e = ephost_test::chain_expected(x, cols);
    for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], e[i], 1e-5) << i;
  }
}

}  // namespace

namespace {

// Integer Pow is defined for every input (fuzz_model found a signed overflow under UBSan): an integral
// exponent wraps like unsigned arithmetic, a negative one gives the integer part of 1/x^|e|, and a
// floating exponent saturates at the type's range.
TEST(CpuKernels, IntegerPowWrapsAndSaturatesInsteadOfOverflowing) {
  auto run = [](onnx::TensorProto::DataType exponent_type, auto exponents) {
    ephost_test::ModelBuilder m;
    m.input("x", onnx::TensorProto::INT32, {6}).input("e", exponent_type, {6}).output("y", onnx::TensorProto::INT32, {6});
    m.node("Pow", {"x", "e"}, {"y"}, "pow");
    const std::string bytes = m.bytes();
    Ephost::Session s(cpu_env(), bytes.data(), bytes.size(), Ephost::SessionOptions());
    std::vector<int32_t> x{2, 3, -2, 46341, 2, 5};
    using E = typename decltype(exponents)::value_type;
    auto tx = Ephost::Tensor::wrap(EPHOST_ELEMENT_INT32, {6}, x.data(), x.size());
    auto te = Ephost::Tensor::wrap(std::is_same_v<E, float> ? EPHOST_ELEMENT_FLOAT : EPHOST_ELEMENT_INT32, {6},
                                   exponents.data(), exponents.size());
    return s.run({"x", "e"}, {tx, te}, {"y"})[0].template to_vector<int32_t>();
  };
  EXPECT_EQ(run(onnx::TensorProto::INT32, std::vector<int32_t>{31, 21, 3, 2, -1, 0}),
            (std::vector<int32_t>{INT32_MIN, 1870418611, -8, -2147479015, 0, 1}));
  EXPECT_EQ(run(onnx::TensorProto::FLOAT, std::vector<float>{40.f, 0.5f, 3.f, -1.f, 100.f, 2.f}),
            (std::vector<int32_t>{INT32_MAX, 1, -8, 0, INT32_MAX, 25}));
}

// Range counts its elements exactly and refuses counts that no tensor holds (fuzz_model found a float
// count of 6.5e32 cast to int64 under UBSan): integer counts are exact at the ends of int64's range,
// where a double count is off by one, and NaN or huge float counts are an INVALID_ARGUMENT naming the
// operands.
TEST(CpuKernels, RangeCountsExactlyAndRefusesCountsNoTensorHolds) {
  auto session = [](onnx::TensorProto::DataType type) {
    ephost_test::ModelBuilder m;
    m.input("start", type, {}).input("limit", type, {}).input("delta", type, {}).output("y", type, {-1});
    m.node("Range", {"start", "limit", "delta"}, {"y"}, "range");
    const std::string bytes = m.bytes();
    return std::make_unique<Ephost::Session>(cpu_env(), bytes.data(), bytes.size(), Ephost::SessionOptions());
  };
  auto range = [](const Ephost::Session& s, EphostElementType type, auto start, auto limit, auto delta) {
    std::vector<decltype(start)> v{start, limit, delta};
    std::vector<Ephost::Tensor> in;
    for (auto& x : v) in.push_back(Ephost::Tensor::wrap(type, {}, &x, 1));
    return s.run({"start", "limit", "delta"}, in, {"y"})[0].template to_vector<decltype(start)>();
  };
  auto refusal = [&](const Ephost::Session& s, EphostElementType type, auto start, auto limit, auto delta) {
    try {
      range(s, type, start, limit, delta);
    } catch (const Ephost::Exception& e) {
      EXPECT_EQ(e.code(), EPHOST_INVALID_ARGUMENT) << e.what();
      return std::string(e.what());
    }
    ADD_FAILURE() << "Range(" << start << ", " << limit << ", " << delta << ") ran";
    return std::string();
  };

  auto i64 = session(onnx::TensorProto::INT64);
  const int64_t lo = INT64_MIN, hi = INT64_MAX;
  EXPECT_EQ(range(*i64, EPHOST_ELEMENT_INT64, lo, hi, hi), (std::vector<int64_t>{lo, -1, hi - 1}));
  EXPECT_EQ(range(*i64, EPHOST_ELEMENT_INT64, hi, lo, lo), (std::vector<int64_t>{hi, -1}));
  EXPECT_EQ(range(*i64, EPHOST_ELEMENT_INT64, int64_t{5}, int64_t{5}, int64_t{1}), (std::vector<int64_t>{}));
  EXPECT_NE(refusal(*i64, EPHOST_ELEMENT_INT64, lo, hi, int64_t{1}).find("18446744073709551615 elements"), std::string::npos);
  auto i32 = session(onnx::TensorProto::INT32);
  EXPECT_EQ(range(*i32, EPHOST_ELEMENT_INT32, int32_t{10}, int32_t{-10}, int32_t{-7}), (std::vector<int32_t>{10, 3, -4}));
  EXPECT_EQ(range(*i32, EPHOST_ELEMENT_INT32, INT32_MAX - 2, INT32_MAX, int32_t{1}), (std::vector<int32_t>{INT32_MAX - 2, INT32_MAX - 1}));

  auto f32 = session(onnx::TensorProto::FLOAT);
  EXPECT_EQ(range(*f32, EPHOST_ELEMENT_FLOAT, 1.0f, 2.0f, 0.25f), (std::vector<float>{1.0f, 1.25f, 1.5f, 1.75f}));
  EXPECT_EQ(range(*f32, EPHOST_ELEMENT_FLOAT, 1.0f, -2.0f, 0.5f), (std::vector<float>{}));
  EXPECT_NE(refusal(*f32, EPHOST_ELEMENT_FLOAT, 0.0f, 6.49e32f, 1.0f).find("finite element count"), std::string::npos);
  EXPECT_NE(refusal(*f32, EPHOST_ELEMENT_FLOAT, 0.0f, std::nanf(""), 1.0f).find("finite element count"), std::string::npos);
  EXPECT_NE(refusal(*f32, EPHOST_ELEMENT_FLOAT, 0.0f, 1.0f, std::numeric_limits<float>::denorm_min()).find("finite"),
            std::string::npos);
}

// Coordinates and counts that kernels compute in floating point from what a model supplies (Resize
// scales and rois, GridSample grids, RoiAlign rois, MelWeightMatrix edges) may be NaN, infinite or far
// beyond int64: each is clamped or refused before it becomes an index (an out-of-range float-to-int
// cast is undefined behaviour, found by fuzz_model in Range; these are the same pattern, found by
// reading). Expected values follow the ops' definitions: samples outside the input give the
// extrapolation value, or 0.
namespace coordinates {

void attr(onnx::NodeProto& n, const std::string& name, const std::string& v) { ephost_test::attr_string(n, name, v); }
void attr(onnx::NodeProto& n, const std::string& name, int64_t v) { ephost_test::attr_int(n, name, v); }

std::unique_ptr<Ephost::Session> session_of(const ephost_test::ModelBuilder& m) {
  const std::string bytes = m.bytes();
  return std::make_unique<Ephost::Session>(cpu_env(), bytes.data(), bytes.size(), Ephost::SessionOptions());
}

// The message of the INVALID_ARGUMENT that `run` ends in (a failure when it ends otherwise).
template <typename F>
std::string refusal(F run) {
  try {
    run();
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_INVALID_ARGUMENT) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "ran";
  return {};
}

std::vector<float> x22 = {1, 2, 3, 4};

}  // namespace coordinates

TEST(CpuKernels, ResizeRefusesScalesNoTensorHoldsAndSamplesHugeRoisAsOutside) {
  using namespace coordinates;
  {
    ephost_test::ModelBuilder m(13);
    m.input("x", onnx::TensorProto::FLOAT, {1, 1, 2, 2}).input("scales", onnx::TensorProto::FLOAT, {4});
    m.output("y", onnx::TensorProto::FLOAT, {-1, -1, -1, -1});
    m.node("Resize", {"x", "", "scales"}, {"y"}, "resize");
    auto s = session_of(m);
    for (float big : {1e30f, std::numeric_limits<float>::infinity()}) {
      std::vector<float> scales{1, 1, big, 1};
      const std::string why = refusal([&] {
        s->run({"x", "scales"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {1, 1, 2, 2}, x22.data(), 4),
                                 Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {4}, scales.data(), 4)}, {"y"});
      });
      EXPECT_NE(why.find("gives an output size no tensor holds"), std::string::npos) << why;
    }
  }
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    SCOPED_TRACE(mode);
    ephost_test::ModelBuilder m(13);
    m.input("x", onnx::TensorProto::FLOAT, {1, 1, 2, 2}).input("roi", onnx::TensorProto::FLOAT, {8});
    m.input("sizes", onnx::TensorProto::INT64, {4}).output("y", onnx::TensorProto::FLOAT, {-1, -1, -1, -1});
    auto& n = m.node("Resize", {"x", "roi", "", "sizes"}, {"y"}, "resize");
    attr(n, "mode", mode);
    attr(n, "coordinate_transformation_mode", "tf_crop_and_resize");
    auto s = session_of(m);
    std::vector<int64_t> sizes{1, 1, 3, 3};
    auto run = [&](std::vector<float> roi) {
      return s->run({"x", "roi", "sizes"},
                    {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {1, 1, 2, 2}, x22.data(), 4),
                     Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {8}, roi.data(), 8),
                     Ephost::Tensor::wrap(EPHOST_ELEMENT_INT64, {4}, sizes.data(), 4)},
                    {"y"})[0]
          .to_vector<float>();
    };
    EXPECT_EQ(run({0, 0, 1e30f, 1e30f, 1, 1, 1e30f, 1e30f}), std::vector<float>(9, 0.f)) << "all outside: extrapolation_value";
    EXPECT_EQ(run({0, 0, -1e30f, -1e30f, 1, 1, -1e30f, -1e30f}), std::vector<float>(9, 0.f));
    const float nan = std::nanf("");
    EXPECT_EQ(run({0, 0, nan, nan, 1, 1, nan, nan}).size(), 9u);  // defined behaviour, whatever the values
  }
}

TEST(CpuKernels, GridSampleTakesNothingFromNonFiniteOrFarCoordinates) {
  using namespace coordinates;
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  for (const char* mode : {"bilinear", "nearest", "bicubic"})
    for (const char* padding : {"zeros", "border", "reflection"}) {
      SCOPED_TRACE(std::string(mode) + " " + padding);
      ephost_test::ModelBuilder m(16);
      m.input("x", onnx::TensorProto::FLOAT, {1, 1, 2, 2}).input("grid", onnx::TensorProto::FLOAT, {1, 1, 5, 2});
      m.output("y", onnx::TensorProto::FLOAT, {1, 1, 1, 5});
      auto& n = m.node("GridSample", {"x", "grid"}, {"y"}, "sample");
      attr(n, "mode", mode);
      attr(n, "padding_mode", padding);
      auto s = session_of(m);
      std::vector<float> grid{nan, 0, inf, 0, 1e30f, -1e30f, -inf, 1e38f, 0, 0};
      const std::vector<float> y =
          s->run({"x", "grid"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {1, 1, 2, 2}, x22.data(), 4),
                                 Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {1, 1, 5, 2}, grid.data(), 10)},
                 {"y"})[0]
              .to_vector<float>();
      ASSERT_EQ(y.size(), 5u);
      EXPECT_EQ(y[0], 0.f) << "NaN samples nothing";
      EXPECT_EQ(y[1], 0.f) << "an infinity samples nothing";
      EXPECT_EQ(y[3], 0.f);
      if (std::string(padding) == "zeros") {
        EXPECT_EQ(y[2], 0.f) << "far outside";
      } else {
        EXPECT_TRUE(std::isfinite(y[2])) << y[2];  // moved into the image
      }
      if (std::string(mode) == "bilinear") {
        EXPECT_FLOAT_EQ(y[4], 2.5f) << "the centre averages the four pixels";
      }
    }
}

TEST(CpuKernels, RoiAlignRefusesSamplingGridsNoMemoryHolds) {
  using namespace coordinates;
  auto build = [](int64_t sampling_ratio) {
    ephost_test::ModelBuilder m(16);
    m.input("x", onnx::TensorProto::FLOAT, {1, 1, 2, 2}).input("rois", onnx::TensorProto::FLOAT, {1, 4});
    m.input("batch", onnx::TensorProto::INT64, {1}).output("y", onnx::TensorProto::FLOAT, {1, 1, 2, 2});
    auto& n = m.node("RoiAlign", {"x", "rois", "batch"}, {"y"}, "align");
    attr(n, "output_height", int64_t{2});
    attr(n, "output_width", int64_t{2});
    attr(n, "sampling_ratio", sampling_ratio);
    return session_of(m);
  };
  std::vector<int64_t> batch{0};
  auto run = [&](const Ephost::Session& s, std::vector<float> roi) {
    return s.run({"x", "rois", "batch"},
                 {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {1, 1, 2, 2}, x22.data(), 4),
                  Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {1, 4}, roi.data(), 4),
                  Ephost::Tensor::wrap(EPHOST_ELEMENT_INT64, {1}, batch.data(), 1)},
                 {"y"})[0]
        .to_vector<float>();
  };
  auto adaptive = build(0);
  EXPECT_EQ(run(*adaptive, {0, 0, 1, 1}).size(), 4u);
  std::string why = refusal([&] { run(*adaptive, {0, 0, 1e12f, 1e12f}); });
  EXPECT_NE(why.find("set sampling_ratio"), std::string::npos) << why;
  why = refusal([&] { run(*adaptive, {0, 0, std::numeric_limits<float>::infinity(), 1}); });
  EXPECT_NE(why.find("set sampling_ratio"), std::string::npos) << why;
  EXPECT_EQ(run(*adaptive, {0, 0, std::nanf(""), std::nanf("")}).size(), 4u);  // NaN: no samples, defined
  auto fixed = build(int64_t{1} << 30);
  why = refusal([&] { run(*fixed, {0, 0, 1, 1}); });
  EXPECT_NE(why.find("lower sampling_ratio"), std::string::npos) << why;
}

// Cast from float to an integer type is defined for every value (a C++ cast of NaN or of a value out
// of range is not): within int64 it truncates and wraps like numpy's astype, the ONNX reference; NaN
// gives 0; beyond int64 it saturates at the target's bounds.
TEST(CpuKernels, CastFromFloatToIntegersIsDefinedForEveryValue) {
  using namespace coordinates;
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x{std::nanf(""), inf, -inf, 1e30f, -1e30f, -1.f, 3e9f, 2.9f, -2.9f, 1e19f};
  // Run as a kernel on an input, and folded as a constant when x is an initializer: the same values.
  auto cast = [&](onnx::TensorProto::DataType to) {
    ephost_test::ModelBuilder m(13), folded(13);
    m.input("x", onnx::TensorProto::FLOAT, {10}).output("y", to, {10});
    attr(m.node("Cast", {"x"}, {"y"}, "cast"), "to", int64_t{to});
    folded.input("z", to, {10}).initializer("x", {10}, x).output("y", to, {10});
    attr(folded.node("Cast", {"x"}, {"c"}, "cast"), "to", int64_t{to});
    folded.node("Add", {"c", "z"}, {"y"}, "add");
    Ephost::Tensor y = session_of(m)->run({"x"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {10}, x.data(), x.size())}, {"y"})[0];
    const size_t bytes = y.size() * EphostElementSize(static_cast<EphostElementType>(to));
    std::vector<uint8_t> zeros(bytes, 0);
    Ephost::Tensor y_folded = session_of(folded)->run(
        {"z"}, {Ephost::Tensor::wrap(static_cast<EphostElementType>(to), {10}, zeros.data(), zeros.size())},
        {"y"})[0];
    EXPECT_EQ(std::memcmp(y.data<uint8_t>(), y_folded.data<uint8_t>(), bytes), 0) << "folded differs";
    return y;
  };
  EXPECT_EQ(cast(onnx::TensorProto::INT32).to_vector<int32_t>(),
            (std::vector<int32_t>{0, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, -1, -1294967296, 2, -2, INT32_MAX}));
  EXPECT_EQ(cast(onnx::TensorProto::UINT8).to_vector<uint8_t>(),
            (std::vector<uint8_t>{0, 255, 0, 255, 0, 255, 0, 2, 254, 255}));
  EXPECT_EQ(cast(onnx::TensorProto::INT64).to_vector<int64_t>(),
            (std::vector<int64_t>{0, INT64_MAX, INT64_MIN, INT64_MAX, INT64_MIN, -1, 3000000000, 2, -2, INT64_MAX}));
  EXPECT_EQ(cast(onnx::TensorProto::UINT64).to_vector<uint64_t>(),
            (std::vector<uint64_t>{0, UINT64_MAX, 0, UINT64_MAX, 0, UINT64_MAX, 3000000000u, 2, UINT64_MAX - 1,
                                   9999999980506447872u}));
}

// Scalar counts (OneHot depth, TopK k, DFT dft_length) are read as int64 exactly, not through double: a
// float beyond int64 is refused by name, INT64_MAX stays INT64_MAX (a double round trip made it an
// undefined cast), and huge sizes meet the output allocation's refusal before any table is built.
TEST(CpuKernels, ScalarCountsAreReadExactlyAndRefusedBeyondInt64) {
  using namespace coordinates;
  {
    ephost_test::ModelBuilder m(11);
    m.input("indices", onnx::TensorProto::FLOAT, {3}).input("depth", onnx::TensorProto::FLOAT, {});
    m.initializer("values", {2}, {0.f, 1.f}).output("y", onnx::TensorProto::FLOAT, {3, -1});
    m.node("OneHot", {"indices", "depth", "values"}, {"y"}, "onehot");
    auto s = session_of(m);
    auto run = [&](std::vector<float> indices, float depth) {
      return s->run({"indices", "depth"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {3}, indices.data(), 3),
                                           Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {}, &depth, 1)},
                    {"y"})[0]
          .to_vector<float>();
    };
    EXPECT_EQ(run({0.f, 2.9f, -1.f}, 3.5f), (std::vector<float>{1, 0, 0, 0, 0, 1, 0, 0, 1}));
    EXPECT_EQ(run({std::nanf(""), 1e30f, -1e30f}, 2.f), (std::vector<float>{1, 0, 0, 0, 0, 0})) << "NaN is index 0";
    for (float depth : {1e30f, std::numeric_limits<float>::infinity(), std::nanf("")}) {
      const std::string why = refusal([&] { run({0.f, 1.f, 2.f}, depth); });
      EXPECT_NE(why.find("beyond int64's range"), std::string::npos) << why;
    }
  }
  {
    ephost_test::ModelBuilder m(11);
    m.input("x", onnx::TensorProto::FLOAT, {4}).input("k", onnx::TensorProto::INT64, {1});
    m.output("values", onnx::TensorProto::FLOAT, {-1}).output("indices", onnx::TensorProto::INT64, {-1});
    m.node("TopK", {"x", "k"}, {"values", "indices"}, "topk");
    auto s = session_of(m);
    std::vector<float> x{3, 1, 4, 2};
    auto run = [&](int64_t k) {
      return s->run({"x", "k"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {4}, x.data(), 4),
                                 Ephost::Tensor::wrap(EPHOST_ELEMENT_INT64, {1}, &k, 1)},
                    {"values"})[0]
          .to_vector<float>();
    };
    EXPECT_EQ(run(2), (std::vector<float>{4, 3}));
    const std::string why = refusal([&] { run(std::numeric_limits<int64_t>::max()); });
    EXPECT_NE(why.find("9223372036854775807"), std::string::npos) << "k exactly as given: " << why;
  }
  {
    ephost_test::ModelBuilder m(17);
    m.input("x", onnx::TensorProto::FLOAT, {1, 4, 1}).input("n", onnx::TensorProto::INT64, {});
    m.output("y", onnx::TensorProto::FLOAT, {1, -1, 2});
    m.node("DFT", {"x", "n"}, {"y"}, "dft");
    auto s = session_of(m);
    std::vector<float> x{1, 2, 3, 4};
    for (int64_t n : {int64_t{1} << 40, std::numeric_limits<int64_t>::max()}) {
      EXPECT_THROW(s->run({"x", "n"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {1, 4, 1}, x.data(), 4),
                                       Ephost::Tensor::wrap(EPHOST_ELEMENT_INT64, {}, &n, 1)},
                          {"y"}),
                   Ephost::Exception)
          << n;
    }
  }
}

// Integer arithmetic wraps modulo 2^bits, as numpy and ONNX Runtime do on two's-complement machines
// (C++'s signed overflow is undefined; the edge sweep found int64 Mul, ReduceProd and ReduceSumSquare
// overflowing under UBSan), and an integer reduction through double that ends infinite saturates.
TEST(CpuKernels, IntegerArithmeticWrapsLikeNumpy) {
  using namespace coordinates;
  const int64_t max = INT64_MAX, min = INT64_MIN;
  auto binary = [](const char* op, onnx::TensorProto::DataType type, auto a, auto b) {
    using T = typename decltype(a)::value_type;
    ephost_test::ModelBuilder m(13);
    const int64_t n = static_cast<int64_t>(a.size());
    m.input("a", type, {n}).input("b", type, {n}).output("y", type, {n});
    m.node(op, {"a", "b"}, {"y"}, "op");
    const auto elem = static_cast<EphostElementType>(type);
    return session_of(m)
        ->run({"a", "b"}, {Ephost::Tensor::wrap(elem, {n}, a.data(), a.size()), Ephost::Tensor::wrap(elem, {n}, b.data(), b.size())},
              {"y"})[0]
        .template to_vector<T>();
  };
  using I64 = std::vector<int64_t>;
  EXPECT_EQ(binary("Add", onnx::TensorProto::INT64, I64{max, min, 5}, I64{1, -1, 6}), (I64{min, max, 11}));
  EXPECT_EQ(binary("Sub", onnx::TensorProto::INT64, I64{min, max, 5}, I64{1, -1, 6}), (I64{max, min, -1}));
  EXPECT_EQ(binary("Mul", onnx::TensorProto::INT64, I64{max, min, 72057594071613442}, I64{2, -1, 72057594071613442}),
            (I64{-2, min, static_cast<int64_t>(72057594071613442ull * 72057594071613442ull)}));
  EXPECT_EQ(binary("Mul", onnx::TensorProto::UINT16, std::vector<uint16_t>{65535, 300}, std::vector<uint16_t>{65535, 300}),
            (std::vector<uint16_t>{1, static_cast<uint16_t>(90000 % 65536)}));
  EXPECT_EQ(binary("Sum", onnx::TensorProto::INT64, I64{max}, I64{max}), (I64{-2}));

  auto unary = [](const char* op, I64 x, std::vector<std::pair<std::string, int64_t>> attrs = {}) {
    ephost_test::ModelBuilder m(13);
    const int64_t n = static_cast<int64_t>(x.size());
    m.input("x", onnx::TensorProto::INT64, {n}).output("y", onnx::TensorProto::INT64, {-1});
    auto& node = m.node(op, {"x"}, {"y"}, "op");
    for (const auto& [name, value] : attrs) attr(node, name, value);
    return session_of(m)->run({"x"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_INT64, {n}, x.data(), x.size())}, {"y"})[0].to_vector<int64_t>();
  };
  EXPECT_EQ(unary("Neg", {min, 3}), (I64{min, -3}));
  EXPECT_EQ(unary("Abs", {min, -3}), (I64{min, 3}));
  EXPECT_EQ(unary("ReduceProd", {max, 2, 3}, {{"keepdims", 0}}), (I64{static_cast<int64_t>(static_cast<uint64_t>(max) * 6u)}));
  EXPECT_EQ(unary("ReduceSumSquare", {72057594071613442, 1}, {{"keepdims", 0}}),
            (I64{static_cast<int64_t>(72057594071613442ull * 72057594071613442ull + 1u)}));
  EXPECT_EQ(unary("ReduceSum", {max, max}, {{"keepdims", 0}}), (I64{-2}));
  EXPECT_EQ(unary("ReduceL1", {min, 1}, {{"keepdims", 0}}), (I64{min + 1}));
  EXPECT_EQ(unary("ReduceLogSumExp", {1000, 0}, {{"keepdims", 0}}), (I64{max})) << "log(inf) saturates";
}

TEST(CpuKernels, MelWeightMatrixRefusesAnInfiniteUpperEdge) {
  using namespace coordinates;
  ephost_test::ModelBuilder m(17);
  for (const char* name : {"bins", "dft", "rate"}) m.input(name, onnx::TensorProto::INT64, {});
  m.input("lower", onnx::TensorProto::FLOAT, {}).input("upper", onnx::TensorProto::FLOAT, {});
  m.output("y", onnx::TensorProto::FLOAT, {-1, -1});
  m.node("MelWeightMatrix", {"bins", "dft", "rate", "lower", "upper"}, {"y"}, "mel");
  auto s = session_of(m);
  std::vector<int64_t> ints{4, 16, 8000};
  auto run = [&](float upper) {
    float lower = 0.f;
    return s->run({"bins", "dft", "rate", "lower", "upper"},
                  {Ephost::Tensor::wrap(EPHOST_ELEMENT_INT64, {}, &ints[0], 1),
                   Ephost::Tensor::wrap(EPHOST_ELEMENT_INT64, {}, &ints[1], 1),
                   Ephost::Tensor::wrap(EPHOST_ELEMENT_INT64, {}, &ints[2], 1),
                   Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {}, &lower, 1),
                   Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {}, &upper, 1)},
                  {"y"})[0]
        .shape();
  };
  EXPECT_EQ(run(4000.f), (std::vector<int64_t>{9, 4}));
  for (float upper : {std::numeric_limits<float>::infinity(), 1e30f}) {
    const std::string why = refusal([&] { run(upper); });
    EXPECT_NE(why.find("lies beyond the spectrum"), std::string::npos) << why;
  }
}

}  // namespace

// A convolution whose output is empty does no work, however large its spatial extent: ConvInteger
// with 0 output channels and pads of 2^40 has an output of shape [1, 0, 2^40 + 2] and no elements,
// but sized a 33 TB im2col buffer for it (fuzz_model; ASan's out-of-memory report, std::bad_alloc in
// an ordinary build). Working buffers whose size a model controls now go through the SDK's
// scratch_vector, under the host's EPHOST_TENSOR_BYTES_LIMIT (tests/unit/sdk_scratch_test.cpp).
TEST(CpuKernels, IntegerConvolutionsWithAnEmptyOutputAllocateNoWorkingBuffers) {
  for (const bool quantized : {false, true}) {
    SCOPED_TRACE(quantized ? "QLinearConv" : "ConvInteger");
    ephost_test::ModelBuilder m;
    const int32_t u8 = onnx::TensorProto::UINT8;
    m.input("x", u8, {1, 3, 5}).input("w", u8, {0, 3, 5});
    std::vector<std::string> inputs{"x", "w"};
    if (quantized) {
      m.input("x_scale", onnx::TensorProto::FLOAT, {}).input("x_zero", u8, {});
      m.input("w_scale", onnx::TensorProto::FLOAT, {0}).input("w_zero", u8, {0});
      m.input("y_scale", onnx::TensorProto::FLOAT, {}).input("y_zero", u8, {});
      inputs = {"x", "x_scale", "x_zero", "w", "w_scale", "w_zero", "y_scale", "y_zero"};
    }
    m.output("y", quantized ? u8 : onnx::TensorProto::INT32, {1, 0, -1});
    ephost_test::attr_ints(m.node(quantized ? "QLinearConv" : "ConvInteger", inputs, {"y"}, "conv"), "pads",
                           {int64_t{1} << 40, 1});
    const std::string bytes = m.bytes();
    Ephost::Session s(cpu_env(), bytes.data(), bytes.size(), Ephost::SessionOptions());

    std::vector<uint8_t> x(15, 7), zero{0};
    float scale = 1.0f;
    std::vector<Ephost::Tensor> in{Ephost::Tensor::wrap(EPHOST_ELEMENT_UINT8, {1, 3, 5}, x.data(), x.size()),
                                   Ephost::Tensor::wrap(EPHOST_ELEMENT_UINT8, {0, 3, 5}, x.data(), 0)};
    if (quantized) {
      in.insert(in.begin() + 1, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {}, &scale, 1),
                                 Ephost::Tensor::wrap(EPHOST_ELEMENT_UINT8, {}, zero.data(), 1)});
      in.push_back(Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {0}, &scale, 0));
      in.push_back(Ephost::Tensor::wrap(EPHOST_ELEMENT_UINT8, {0}, zero.data(), 0));
      in.push_back(Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {}, &scale, 1));
      in.push_back(Ephost::Tensor::wrap(EPHOST_ELEMENT_UINT8, {}, zero.data(), 1));
    }
    const std::vector<Ephost::Tensor> y = s.run(inputs, in, {"y"});
    EXPECT_EQ(y[0].shape(), (std::vector<int64_t>{1, 0, (int64_t{1} << 40) + 2}));
    EXPECT_EQ(y[0].size(), 0u);
  }
}

// An RNN over an empty X (0 input features) may have any sequence length and batch, so neither bounds
// its working buffers: with T = 2^62 the input projection, T x B x 4H floats, is refused by name before
// any allocation (tests/unit/sdk_scratch_test.cpp tests the limit itself), where it wrapped in size_t
// arithmetic before.
TEST(CpuKernels, RnnWorkingBuffersThatNoMemoryHoldsAreRefusedByName) {
  const int64_t T = int64_t{1} << 62, H = 2;
  ephost_test::ModelBuilder m;
  const int32_t f32 = onnx::TensorProto::FLOAT;
  m.input("x", f32, {T, 1, 0}).input("w", f32, {1, 4 * H, 0}).input("r", f32, {1, 4 * H, H});
  m.output("y_h", f32, {1, 1, H});
  ephost_test::attr_int(m.node("LSTM", {"x", "w", "r"}, {"", "y_h"}, "lstm"), "hidden_size", H);
  const std::string bytes = m.bytes();
  Ephost::Session s(cpu_env(), bytes.data(), bytes.size(), Ephost::SessionOptions());
  std::vector<float> r(4 * H * H, 0.5f);
  const std::vector<Ephost::Tensor> in{Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {T, 1, 0}, r.data(), 0),
                                       Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {1, 4 * H, 0}, r.data(), 0),
                                       Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {1, 4 * H, H}, r.data(), r.size())};
  try {
    s.run({"x", "w", "r"}, in, {"y_h"});
    ADD_FAILURE() << "the LSTM ran";
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_FAIL) << e.what();
    EXPECT_NE(std::string(e.what()).find("out of memory: the RNN's input projection (4611686018427387904 x 1 x 8 "
                                         "values of 4 bytes) is larger than any memory"),
              std::string::npos)
        << e.what();
  }
}

// Multinomial writes its samples straight into its output, allocated first: a sample_size of 2^59 is
// refused by the host's allocation, naming the size, before any work (it sized a vector of 2^59
// samples first). The host's allocation failures name the size instead of a bare "out of memory".
TEST(CpuKernels, MultinomialAllocatesItsOutputBeforeSampling) {
  ephost_test::ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {1, 3}).output("y", onnx::TensorProto::INT32, {1, -1});
  ephost_test::attr_int(m.node("Multinomial", {"x"}, {"y"}, "sample"), "sample_size", int64_t{1} << 59);
  const std::string bytes = m.bytes();
  Ephost::Session s(cpu_env(), bytes.data(), bytes.size(), Ephost::SessionOptions());
  std::vector<float> x{0.f, 1.f, 2.f};
  try {
    s.run({"x"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {1, 3}, x.data(), x.size())}, {"y"});
    ADD_FAILURE() << "Multinomial ran";
  } catch (const Ephost::Exception& e) {
    EXPECT_EQ(e.code(), EPHOST_FAIL) << e.what();
    EXPECT_NE(std::string(e.what()).find("out of memory: could not allocate a buffer of 2305843009213693952 bytes"),
              std::string::npos)
        << e.what();
  }
}
