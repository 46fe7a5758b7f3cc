// Nested subgraphs end to end: If inside If, branches reading outer-scope values two levels up, and the
// partitioner assigning subgraph nodes to a plugin (alpha takes Add/Mul inside the branches).
#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <thread>

#include "ephost/ephost_cxx_api.h"
#include "test_support.h"

namespace {

using ephost_test::ModelBuilder;
using ephost_test::nested_if_model;

std::vector<float> run(const Ephost::Session& s, bool cond) {
  std::vector<float> x{1, 2};
  bool c = cond;
  auto tc = Ephost::Tensor::wrap(EPHOST_ELEMENT_BOOL, {}, &c, 1);
  auto tx = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {2}, x.data(), 2);
  return s.run({"cond", "x"}, {tc, tx}, {"y"})[0].to_vector<float>();
}

TEST(Subgraphs, NestedIfReadsOuterScopeValuesOnCpu) {
  Ephost::Env env(EPHOST_LOG_ERROR, std::vector<std::string>{});
  std::string bytes = nested_if_model();
  Ephost::Session s(env, bytes.data(), bytes.size());
  EXPECT_EQ(run(s, true), (std::vector<float>{11, 22}));
  EXPECT_EQ(run(s, false), (std::vector<float>{10, 40}));  // inner If takes its else: x * c
}

TEST(Subgraphs, SubgraphNodesArePartitionedToo) {
  ephost_test::TempDir dir;
  ephost_test::install_plugins(dir, {"ephost_test_alpha"});
  Ephost::Env env(EPHOST_LOG_ERROR, std::vector<std::string>{dir.path()});
  std::string bytes = nested_if_model();
  Ephost::Session s(env, bytes.data(), bytes.size());
  auto report = nlohmann::json::parse(s.partition_report_json());
  std::map<std::string, std::string> where;
  for (const auto& g : report["graphs"])
    for (const auto& n : g["nodes"]) where[n["node"]] = n["provider"];
  EXPECT_EQ(where["outer_if"], "cpu");
  EXPECT_EQ(where["inner_if"], "cpu");
  EXPECT_EQ(where["outer_then_Add"], "alpha");
  EXPECT_EQ(where["inner_else_Mul"], "alpha");
  EXPECT_EQ(where["inner_then_Sub"], "cpu");
  EXPECT_EQ(run(s, true), (std::vector<float>{11, 22}));
  EXPECT_EQ(run(s, false), (std::vector<float>{10, 40}));
}

TEST(Subgraphs, ConcurrentRunsThroughSubgraphs) {
  Ephost::Env env(EPHOST_LOG_ERROR, std::vector<std::string>{});
  std::string bytes = nested_if_model();
  Ephost::Session s(env, bytes.data(), bytes.size());
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        bool cond = (i + t) % 2 == 0;
        if (run(s, cond) != (cond ? std::vector<float>{11, 22} : std::vector<float>{10, 40})) wrong++;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
