// Sequence and optional values inside the host: declared kinds read from TypeProtos, RuntimeValue,
// the capability sink refusing ABI-1 plugins nodes with such values (and the partitioner reporting
// it), and an SDK plugin falling back to ABI 1 against a host that only speaks 1.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <memory>

#include "plugin_abi/handles.h"
#include "plugin_abi/host_api.h"
#include "core/runtime_value.h"
#include "graph/graph.h"
#include "model/loader.h"
#include "model_builders.h"
#include "partition/partition.h"
#include "session/session.h"
#include "test_paths.h"

using namespace ephost;
using namespace ephost_test;

namespace {

void set_sequence(onnx::ValueInfoProto* vi, int32_t elem) {
  vi->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(elem);
}

// x (float [2]) -> SequenceConstruct -> s (sequence) -> SequenceLength -> n; y = Relu(x)
onnx::ModelProto sequence_model() {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "x", kFloat, {2});
  add_node(g, "SequenceConstruct", {"x"}, {"s"}, "construct");
  add_node(g, "SequenceLength", {"s"}, {"n"}, "length");
  add_node(g, "Relu", {"x"}, {"y"}, "relu");
  add_output(g, "n", kInt64, {});
  add_output(g, "y", kFloat, {2});
  return m;
}

ModelAndIr load(const onnx::ModelProto& m) {
  const std::string bytes = serialize(m);
  ModelAndIr loaded;
  loaded.model = load_model_from_buffer(bytes.data(), bytes.size(), LoadOptions{});
  loaded.main = build_graph_ir(*loaded.model);
  return loaded;
}

const Node* node_named(const Graph& g, const std::string& name) {
  for (const auto& n : g.nodes)
    if (n->name == name) return n.get();
  return nullptr;
}

}  // namespace

TEST(ValueKinds, TypeProtosGiveKindsAndTensorElementTypes) {
  onnx::TypeProto seq;
  seq.mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(kInt64);
  TypeInfo s = type_info_from_proto(seq);
  EXPECT_EQ(s.kind, EPHOST_VALUE_SEQUENCE);
  EXPECT_EQ(s.tensor_elem_type, kInt64);
  EXPECT_EQ(s.elem_type, 0) << "elem_type describes tensors only";
  EXPECT_FALSE(s.has_shape);

  onnx::TypeProto opt;
  *opt.mutable_optional_type()->mutable_elem_type() = seq;
  TypeInfo o = type_info_from_proto(opt);
  EXPECT_EQ(o.kind, EPHOST_VALUE_OPTIONAL);
  EXPECT_EQ(o.optional_kind, EPHOST_VALUE_SEQUENCE);
  EXPECT_EQ(o.tensor_elem_type, kInt64);
  EXPECT_TRUE(o.is_non_tensor());

  onnx::TypeProto nested;  // a sequence of sequences is not something ephost runs
  *nested.mutable_sequence_type()->mutable_elem_type() = seq;
  EXPECT_EQ(type_info_from_proto(nested).kind, 0);

  onnx::TypeProto tensor;
  tensor.mutable_tensor_type()->set_elem_type(kFloat);
  EXPECT_EQ(type_info_from_proto(tensor).kind, EPHOST_VALUE_TENSOR);
  EXPECT_EQ(type_info_from_proto(tensor).tensor_elem_type, kFloat);
}

TEST(ValueKinds, GraphValuesKnowTheirKinds) {
  auto model = load(sequence_model());
  const Graph& g = *model.main;
  EXPECT_EQ(g.find("s")->type.kind, EPHOST_VALUE_SEQUENCE) << "from shape inference";
  EXPECT_EQ(g.find("s")->type.tensor_elem_type, kFloat);
  EXPECT_EQ(g.find("x")->type.kind, EPHOST_VALUE_TENSOR);
}

TEST(ValueKinds, RuntimeValueHoldsOneKind) {
  RuntimeValue unset;
  EXPECT_FALSE(unset.is_set());
  RuntimeValue t = Tensor::allocate(EPHOST_ELEMENT_FLOAT, {2});
  EXPECT_TRUE(t.is_tensor());
  EXPECT_EQ(RuntimeValue(Tensor()).kind(), ValueKind::kUnset) << "an empty tensor releases a slot";
  RuntimeValue s = make_sequence(EPHOST_ELEMENT_FLOAT, {t.tensor(), t.tensor()});
  EXPECT_EQ(s.sequence().elements.size(), 2u);
  EXPECT_EQ(s.describe(), "sequence of 2 float tensor(s)");
  EXPECT_EQ(RuntimeValue::none().describe(), "none (empty optional)");
  expect_error([&] { (void)s.tensor("input 'q'"); }, EPHOST_INVALID_ARGUMENT, {"input 'q' is a sequence", "not a tensor"});
  expect_error([&] { make_sequence(EPHOST_ELEMENT_INT64, {t.tensor()}); }, EPHOST_INVALID_ARGUMENT,
               {"element 0 is a float tensor"});
}

TEST(ValueKinds, Abi1PluginsCannotClaimNodesWithSequences) {
  auto model = load(sequence_model());
  const Graph& g = *model.main;
  const EphostHostApi api = make_host_api(1);
  EphostCapability old_plugin;
  old_plugin.graph = g.view.get();
  old_plugin.non_tensor_values = false;
  for (const char* name : {"construct", "length", "relu"})
    ASSERT_EQ(api.capability_add_node(&old_plugin, to_handle(node_named(g, name))), nullptr);
  ASSERT_EQ(old_plugin.claims.size(), 3u);
  EXPECT_NE(old_plugin.claims[0].refused.find("reads or writes 's', a sequence value"), std::string::npos)
      << old_plugin.claims[0].refused;
  EXPECT_FALSE(old_plugin.claims[1].refused.empty());
  EXPECT_TRUE(old_plugin.claims[2].refused.empty()) << "Relu only touches tensors";

  // The partitioner reports the refusals and leaves the nodes to the next provider.
  std::vector<EphostCapability::Claim> first = old_plugin.claims;
  CapabilityQuery query = [&](size_t provider, const GraphView& view) {
    if (provider == 0) return first;
    EphostCapability cap;  // a provider speaking ABI 2 takes everything
    cap.graph = &view;
    for (const Node* n : view.nodes) EXPECT_EQ(api.capability_add_node(&cap, to_handle(n)), nullptr);
    return cap.claims;
  };
  GraphPartition p = partition_graph(g, {"old", "new"}, query, "");
  EXPECT_EQ(p.node_provider[node_named(g, "relu")->index], 0);
  EXPECT_EQ(p.node_provider[node_named(g, "construct")->index], 1);
  EXPECT_EQ(p.node_provider[node_named(g, "length")->index], 1);
  size_t refusals = 0;
  for (const auto& note : p.notes) refusals += note.refused && note.provider == 0 ? 1 : 0;
  EXPECT_EQ(refusals, 2u);
}

TEST(ValueKinds, RunsFedASequenceRecordNoMemoryPattern) {
  // s (sequence) -> SequenceAt(s, 0) -> a -> Relu -> y: how big `a` is depends on what s holds, which
  // the input-shape signature of a memory pattern cannot see.
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  auto* s = g->add_input();
  s->set_name("s");
  set_sequence(s, kFloat);
  add_initializer(g, int64_tensor("zero", {}, {0}));
  add_node(g, "SequenceAt", {"s", "zero"}, {"a"});
  add_node(g, "Relu", {"a"}, {"y"});
  add_output(g, "y", kFloat, {-1});
  const std::string bytes = serialize(m);
  static std::vector<std::string> no_plugin_dirs;
  static Env env(EPHOST_LOG_ERROR, &no_plugin_dirs);
  auto session = Session::create_from_buffer(env, bytes.data(), bytes.size(), SessionOptions{});
  for (int64_t n : {2, 5}) {
    Tensor x = Tensor::allocate(EPHOST_ELEMENT_FLOAT, {n});
    for (int64_t i = 0; i < n; ++i) x.data_as<float>()[i] = static_cast<float>(i) - 1.0f;
    auto out = session->run({"s"}, {make_sequence(EPHOST_ELEMENT_FLOAT, {x})}, {"y"});
    ASSERT_EQ(out[0].tensor().element_count(), n);
    EXPECT_EQ(out[0].tensor().data_as<float>()[0], 0.0f);
    EXPECT_EQ(out[0].tensor().data_as<float>()[n - 1], static_cast<float>(n - 2));
  }
  EXPECT_EQ(session->main_executor().memory_patterns_recorded(), 0u);
}

TEST(ValueKinds, SdkPluginSpeaksAbi1ToAnOlderHost) {
  void* lib = dlopen((std::string(EPHOST_TEST_PLUGIN_DIR) + "/libephost_test_alpha.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto negotiate = reinterpret_cast<EphostPluginNegotiateFn>(dlsym(lib, EPHOST_PLUGIN_ENTRY_POINT));
  ASSERT_NE(negotiate, nullptr);
  for (uint32_t host_max : {1u, 2u}) {
    EphostHostApi api = make_host_api(host_max);
    if (host_max == 1) api.struct_size = offsetof(EphostHostApi, value_kind);  // an ABI 1 host's table
    EphostPluginNegotiation n{};
    n.struct_size = sizeof(n);
    n.host_min_abi_version = 1;
    n.host_max_abi_version = host_max;
    n.host_api = &api;
    ASSERT_EQ(negotiate(&n), nullptr);
    EXPECT_EQ(n.plugin_abi_version, host_max);
    ASSERT_NE(n.plugin, nullptr);
    EXPECT_EQ(n.plugin->abi_version, host_max) << "the table says the version negotiated";
  }
  dlclose(lib);
}
