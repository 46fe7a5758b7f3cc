// Concurrent runs of one session of a real model: PP-OCR's mobile text-direction classifier (fetched by
// tests/models/fetch_models.sh), run by several threads at once on one session, every output compared
// bit for bit with a run made alone. In the ordinary suite a short run (8 threads x 20 runs);
// scripts/sanitize.sh runs it under ThreadSanitizer with EPHOST_STRESS_RUNS=1000 (8 x 1000).
//
//   EPHOST_STRESS_THREADS  threads (default 8)
//   EPHOST_STRESS_RUNS     runs per thread (default 20)
//   EPHOST_STRESS_SESSION_THREADS  the session's intra-op threads (default: the session's default)
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "ephost/ephost_cxx_api.h"
#include "test_support.h"

namespace {

int env_count(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < 1 || n > 1000000) {
    ADD_FAILURE() << name << "='" << v << "' is not a count from 1 to 1000000";
    return fallback;
  }
  return static_cast<int>(n);
}

TEST(ClassifierStress, ConcurrentRunsOfOneSessionGiveIdenticalOutputs) {
  std::string why;
  const std::string folder = ephost_test::ocr_model_folder(&why);
  if (folder.empty()) GTEST_SKIP() << why;
  const int threads = env_count("EPHOST_STRESS_THREADS", 8);
  const int runs = env_count("EPHOST_STRESS_RUNS", 20);

  Ephost::Env env(EPHOST_LOG_ERROR, std::vector<std::string>{});
  Ephost::SessionOptions options;
  if (std::getenv("EPHOST_STRESS_SESSION_THREADS")) options.set_threads(env_count("EPHOST_STRESS_SESSION_THREADS", 1));
  Ephost::Session session(env, folder + "/ch_ppocr_mobile_v2.0_cls_infer.onnx", options);
  const std::vector<int64_t> shape{1, 3, 48, 192};
  std::vector<float> x(static_cast<size_t>(3 * 48 * 192));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f - 0.5f;

  auto run_once = [&] {
    auto t = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, shape, x.data(), x.size());
    return session.run({"x"}, {t}, {"softmax_0.tmp_0"})[0].to_vector<float>();
  };
  const std::vector<float> expected = run_once();
  ASSERT_EQ(expected.size(), 2u);  // two directions: 0 and 180 degrees

  std::atomic<int> mismatches{0}, failures{0}, done{0};
  std::vector<std::string> first_error(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int i = 0; i < runs; ++i) {
        try {
          const std::vector<float> got = run_once();
          if (got.size() != expected.size() ||
              std::memcmp(got.data(), expected.data(), expected.size() * sizeof(float)) != 0)
            ++mismatches;
        } catch (const std::exception& e) {
          if (failures++ == 0) first_error[static_cast<size_t>(t)] = e.what();
        }
        ++done;
      }
    });
  for (auto& t : pool) t.join();
  EXPECT_EQ(done.load(), threads * runs);
  EXPECT_EQ(mismatches.load(), 0) << "of " << threads * runs << " runs on " << threads << " threads";
  EXPECT_EQ(failures.load(), 0) << [&] {
    std::string all;
    for (const auto& e : first_error) all += e.empty() ? "" : e + "\n";
    return all;
  }();
}

}  // namespace
