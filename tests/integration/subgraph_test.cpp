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

onnx::GraphProto branch(const std::string& name, const std::string& op, const std::string& out) {
  onnx::GraphProto g;
  g.set_name(name);
  auto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(name + "_" + op);
  n->add_input("x");  // outer scope: the main graph's input
  n->add_input("c");  // outer scope: the main graph's initializer
  n->add_output(out);
  ModelBuilder::set_type(g.add_output(), out, onnx::TensorProto::FLOAT, {2});
  return g;
}

void set_graph(onnx::NodeProto& node, const std::string& attr, const onnx::GraphProto& g) {
  auto* a = node.add_attribute();
  a->set_name(attr);
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = g;
}

// cond ? x + c : (cond ? x - c : x * c)  — the inner If sits in the outer else-branch.
std::string nested_if_model() {
  ModelBuilder m;
  m.input("cond", onnx::TensorProto::BOOL, {}).input("x", onnx::TensorProto::FLOAT, {2});
  m.output("y", onnx::TensorProto::FLOAT, {2});
  m.initializer("c", {2}, {10, 20});
  onnx::GraphProto inner_else;
  inner_else.set_name("outer_else");
  auto& inner = *inner_else.add_node();
  inner.set_op_type("If");
  inner.set_name("inner_if");
  inner.add_input("cond");
  inner.add_output("inner_out");
  set_graph(inner, "then_branch", branch("inner_then", "Sub", "sub_out"));
  set_graph(inner, "else_branch", branch("inner_else", "Mul", "mul_out"));
  ModelBuilder::set_type(inner_else.add_output(), "inner_out", onnx::TensorProto::FLOAT, {2});
  auto& outer = m.node("If", {"cond"}, {"y"}, "outer_if");
  set_graph(outer, "then_branch", branch("outer_then", "Add", "add_out"));
  set_graph(outer, "else_branch", inner_else);
  return m.bytes();
}

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
