// The executor through internal Session objects: plans show buffer reuse, a memory pattern is recorded
// once per input-shape signature and then used, and results are the same with and without patterns.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>

#include "core/error.h"
#include "session/session.h"

namespace ephost {
namespace {

// x[N,16] -> (Relu -> Neg -> Relu -> Neg)... : a chain whose intermediates all have the same shape key.
std::string chain_bytes(int length) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("chain");
  auto add_vi = [](onnx::ValueInfoProto* vi, const std::string& name) {
    vi->set_name(name);
    auto* t = vi->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_param("N");
    t->mutable_shape()->add_dim()->set_dim_value(16);
  };
  add_vi(g->add_input(), "x");
  std::string prev = "x";
  for (int i = 0; i < length; ++i) {
    auto* n = g->add_node();
    n->set_op_type(i % 2 ? "Sigmoid" : "Relu");
    n->set_name("n" + std::to_string(i));
    n->add_input(prev);
    prev = i + 1 == length ? "y" : "v" + std::to_string(i);
    n->add_output(prev);
  }
  add_vi(g->add_output(), "y");
  std::string s;
  m.SerializeToString(&s);
  return s;
}

Env& env() {
  static std::vector<std::string> none;
  static Env e(EPHOST_LOG_ERROR, &none);
  return e;
}

std::vector<float> run_chain(const Session& s, int64_t rows) {
  Tensor x = Tensor::allocate(EPHOST_ELEMENT_FLOAT, {rows, 16});
  for (int64_t i = 0; i < rows * 16; ++i) x.data_as<float>()[i] = static_cast<float>(i % 13) * 0.1f - 0.6f;
  auto out = s.run({"x"}, {x}, {"y"});
  const float* y = out[0].tensor().data_as<float>();
  return std::vector<float>(y, y + rows * 16);
}

TEST(Executor, AllocationPlanReusesBuffersOnAChain) {
  std::string bytes = chain_bytes(8);
  SessionOptions o;
  o.optimization_level = 0;
  // Node by node, so the planner sees the chain (the CPU plugin would otherwise fuse it into one step).
  o.set("ep.cpu.fuse_elementwise", "0");
  auto s = Session::create_from_buffer(env(), bytes.data(), bytes.size(), o);
  const auto& plan = s->main_executor().allocation_plan();
  size_t reuse = 0;
  for (const auto& v : plan.values) reuse += v.kind == plan::AllocKind::kReuse ? 1 : 0;
  // 7 intermediates of equal symbolic shape: after the first two, each can take a dead buffer.
  EXPECT_GE(reuse, 4u);
}

TEST(Executor, MemoryPatternRecordedPerInputShape) {
  std::string bytes = chain_bytes(8);
  SessionOptions o;
  o.optimization_level = 0;
  o.set("ep.cpu.fuse_elementwise", "0");
  auto s = Session::create_from_buffer(env(), bytes.data(), bytes.size(), o);
  EXPECT_EQ(s->main_executor().memory_patterns_recorded(), 0u);
  auto first = run_chain(*s, 3);
  EXPECT_EQ(s->main_executor().memory_patterns_recorded(), 1u);
  auto second = run_chain(*s, 3);  // same signature: uses the pattern
  EXPECT_EQ(s->main_executor().memory_patterns_recorded(), 1u);
  EXPECT_EQ(first, second);
  run_chain(*s, 5);  // a new signature records its own pattern
  EXPECT_EQ(s->main_executor().memory_patterns_recorded(), 2u);
}

TEST(Executor, SameResultsWithoutReuseOrPatterns) {
  std::string bytes = chain_bytes(9);
  SessionOptions plain;
  plain.optimization_level = 0;
  plain.set("session.enable_mem_pattern", "0");
  plain.set("session.enable_mem_reuse", "0");
  plain.set("ep.cpu.fuse_elementwise", "0");
  SessionOptions planned;
  planned.optimization_level = 0;
  planned.set("ep.cpu.fuse_elementwise", "0");
  auto a = Session::create_from_buffer(env(), bytes.data(), bytes.size(), plain);
  auto b = Session::create_from_buffer(env(), bytes.data(), bytes.size(), planned);
  for (const auto& v : a->main_executor().allocation_plan().values) EXPECT_NE(v.kind, plan::AllocKind::kReuse);
  auto ra = run_chain(*a, 4);
  run_chain(*b, 4);
  auto rb = run_chain(*b, 4);  // second run: placed by the memory pattern
  EXPECT_EQ(ra, rb);
  for (size_t i = 0; i < ra.size(); ++i) ASSERT_TRUE(std::isfinite(ra[i]));
}

TEST(Executor, BadConfigValueIsAnError) {
  std::string bytes = chain_bytes(2);
  SessionOptions o;
  o.set("session.enable_mem_pattern", "yes");
  try {
    Session::create_from_buffer(env(), bytes.data(), bytes.size(), o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), EPHOST_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("session.enable_mem_pattern"), std::string::npos);
  }
}

}  // namespace
}  // namespace ephost
