// The host table every plugin receives. Each function is a thin, exception-proof accessor over the
// IR (graph/graph.h) or the executor's kernel context: nothing here may throw across the ABI.
// Plugins of ABI 1 get the same table; they never call the ABI 2 members (sequence and optional
// values), and the capability sink refuses them nodes that would need those.
#include "plugin_abi/host_api.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <type_traits>

#include "plugin_abi/handles.h"
#include "plugin_abi/versioned_table.h"
#include "core/error.h"
#include "core/log.h"
#include "core/plugin_fault.h"
#include "core/status.h"
#include "model/initializer_release.h"

namespace ephost {
namespace {

// ---- handles a plugin passes in ----
// A handle that is NULL, obviously not a pointer, or an object of another kind (core/handle_tag.h) is
// a plugin's mistake. It is logged (once per plugin, function and mistake, naming them) and answered
// like an empty object by accessors, or with INVALID_ARGUMENT by functions that return a status; it is
// never dereferenced beyond its tag.

void report_misuse(const char* function, const std::string& problem) {
  static std::mutex mutex;
  static std::set<std::string> reported;
  const char* plugin = plugin_in_call();
  std::string message = fmt::format("plugin '{}' misused {}: {}", plugin ? plugin : "?", function, problem);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (reported.size() > 1000 || !reported.insert(message).second) return;
  }
  log_error(message + " (answered with an empty result or INVALID_ARGUMENT; not logged again)");
}

template <typename Object, typename Handle>
Object* checked(Handle* handle, const char* function, const char* kind) {
  const auto address = reinterpret_cast<uintptr_t>(handle);
  const char* problem = nullptr;
  if (!handle)
    problem = "NULL";
  else if (address < 4096 || address % alignof(Object) != 0)
    problem = "an invalid pointer";
  else if (!reinterpret_cast<const Object*>(handle)->handle_tag.valid())
    problem = "a handle of another kind";
  if (!problem) return reinterpret_cast<Object*>(const_cast<std::remove_const_t<Handle>*>(handle));
  report_misuse(function, fmt::format("given {} where {} belongs", problem, kind));
  return nullptr;
}

EphostStatus* refuse(const char* function, const std::string& why) {
  return make_status(EPHOST_INVALID_ARGUMENT, fmt::format("{}: {}", function, why));
}

// Empty objects that stand for an invalid handle in accessors.
const GraphView& no_graph() {
  static const GraphView g;
  return g;
}
const Node& no_node() {
  static const Node n;
  return n;
}
const Value& no_value() {
  static const Value v;
  return v;
}
const Node::AttributeRef& no_attribute() {
  static const onnx::AttributeProto proto;
  static const Node::AttributeRef a = [] {
    Node::AttributeRef r;
    r.proto = &proto;
    return r;
  }();
  return a;
}

const GraphView& graph_of(const EphostGraph* g, const char* function) {
  const GraphView* v = checked<const GraphView>(g, function, "a graph");
  return v ? *v : no_graph();
}
const Node& node_of(const EphostNode* n, const char* function) {
  const Node* node = checked<const Node>(n, function, "a node");
  return node ? *node : no_node();
}
const Value& value_of(const EphostValueInfo* v, const char* function) {
  const Value* value = checked<const Value>(v, function, "a value info");
  return value ? *value : no_value();
}
const Node::AttributeRef& attribute_of(const EphostAttribute* a, const char* function) {
  const Node::AttributeRef* ref = checked<const Node::AttributeRef>(a, function, "an attribute");
  return ref ? *ref : no_attribute();
}

// ---- status & log ----
// Statuses a plugin hands back are checked against the live set (core/status.h) before being read.
EphostStatus* status_create(EphostStatusCode code, const char* message) {
  return make_status(code, message ? message : "");
}
void status_release(EphostStatus* s) {
  if (s && !release_status(s)) report_misuse("status_release", "given a pointer that is not a live status");
}
EphostStatusCode status_code(const EphostStatus* s) {
  if (!s) return EPHOST_OK;
  if (is_live_status(s)) return s->code;
  report_misuse("status_code", "given a pointer that is not a live status");
  return EPHOST_INVALID_ARGUMENT;
}
const char* status_message(const EphostStatus* s) {
  if (!s) return "";
  if (is_live_status(s)) return s->message.c_str();
  report_misuse("status_message", "given a pointer that is not a live status");
  return "not a status: never created by status_create, or released";
}
void log(const EphostProvider*, EphostLogLevel level, const char* message) {
  log_message(level, std::string("[plugin] ") + (message ? message : ""));
}

// ---- graph ----
const char* graph_name(const EphostGraph* g) { return graph_of(g, __func__).name.c_str(); }
const char* graph_model_path(const EphostGraph* g) {
  const GraphView& v = graph_of(g, __func__);
  return v.graph && v.graph->model ? v.graph->model->path.c_str() : "";
}
size_t graph_num_nodes(const EphostGraph* g) { return graph_of(g, __func__).nodes.size(); }
const EphostNode* graph_node(const EphostGraph* g, size_t i) {
  const GraphView& v = graph_of(g, __func__);
  return i < v.nodes.size() ? to_handle(v.nodes[i]) : nullptr;
}
size_t graph_num_inputs(const EphostGraph* g) { return graph_of(g, __func__).inputs.size(); }
const EphostValueInfo* graph_input(const EphostGraph* g, size_t i) {
  const GraphView& v = graph_of(g, __func__);
  return i < v.inputs.size() ? to_handle(v.inputs[i]) : nullptr;
}
size_t graph_num_outputs(const EphostGraph* g) { return graph_of(g, __func__).outputs.size(); }
const EphostValueInfo* graph_output(const EphostGraph* g, size_t i) {
  const GraphView& v = graph_of(g, __func__);
  return i < v.outputs.size() ? to_handle(v.outputs[i]) : nullptr;
}
size_t graph_num_initializers(const EphostGraph* g) { return graph_of(g, __func__).initializers.size(); }
const EphostValueInfo* graph_initializer(const EphostGraph* g, size_t i) {
  const GraphView& v = graph_of(g, __func__);
  return i < v.initializers.size() ? to_handle(v.initializers[i]) : nullptr;
}
int64_t graph_opset(const EphostGraph* g, const char* domain) {
  const GraphView& v = graph_of(g, __func__);
  if (!v.graph || !v.graph->model) return -1;
  std::string d = domain ? domain : "";
  if (d == "ai.onnx") d.clear();
  return v.graph->model->opset(d);
}
const EphostNode* graph_parent_node(const EphostGraph* g) {
  const GraphView& v = graph_of(g, __func__);
  return v.parent_node ? to_handle(v.parent_node) : nullptr;
}

// ---- node ----
size_t node_id(const EphostNode* n) { return node_of(n, __func__).index; }
const char* node_name(const EphostNode* n) { return node_of(n, __func__).name.c_str(); }
const char* node_op_type(const EphostNode* n) { return node_of(n, __func__).op_type.c_str(); }
const char* node_domain(const EphostNode* n) { return node_of(n, __func__).domain.c_str(); }
size_t node_num_inputs(const EphostNode* n) { return node_of(n, __func__).inputs.size(); }
const EphostValueInfo* node_input(const EphostNode* n, size_t i) {
  const Node& node = node_of(n, __func__);
  return i < node.inputs.size() && node.inputs[i] ? to_handle(node.inputs[i]) : nullptr;
}
size_t node_num_outputs(const EphostNode* n) { return node_of(n, __func__).outputs.size(); }
const EphostValueInfo* node_output(const EphostNode* n, size_t i) {
  const Node& node = node_of(n, __func__);
  return i < node.outputs.size() && node.outputs[i] ? to_handle(node.outputs[i]) : nullptr;
}
size_t node_num_implicit_inputs(const EphostNode* n) { return node_of(n, __func__).implicit_inputs.size(); }
const EphostValueInfo* node_implicit_input(const EphostNode* n, size_t i) {
  const Node& node = node_of(n, __func__);
  return i < node.implicit_inputs.size() ? to_handle(node.implicit_inputs[i]) : nullptr;
}
size_t node_num_attributes(const EphostNode* n) { return node_of(n, __func__).attributes.size(); }
const EphostAttribute* node_attribute_at(const EphostNode* n, size_t i) {
  const Node& node = node_of(n, __func__);
  return i < node.attributes.size() ? to_handle(&node.attributes[i]) : nullptr;
}
const EphostAttribute* node_attribute(const EphostNode* n, const char* name) {
  const Node& node = node_of(n, __func__);
  if (!name) {
    report_misuse(__func__, "given a NULL attribute name");
    return nullptr;
  }
  for (const auto& a : node.attributes)
    if (a.proto->name() == name) return to_handle(&a);
  return nullptr;
}
const EphostGraph* node_subgraph(const EphostNode* n, const char* attribute_name) {
  const Node& node = node_of(n, __func__);
  if (!attribute_name) {
    report_misuse(__func__, "given a NULL attribute name");
    return nullptr;
  }
  Graph* g = node.subgraph(attribute_name);
  return g && g->view ? to_handle(g->view.get()) : nullptr;
}
const EphostGraph* node_graph(const EphostNode* n) {
  const Graph* g = node_of(n, __func__).owner;
  return g && g->view ? to_handle(g->view.get()) : nullptr;
}

// ---- attribute ----
EphostStatus* type_mismatch(const onnx::AttributeProto& a, const char* wanted) {
  return make_status(EPHOST_INVALID_ARGUMENT, "attribute '" + a.name() + "' is not of type " + wanted +
                                                  " (its type is " + std::to_string(static_cast<int>(a.type())) + ")");
}
// The attribute behind `a` for a function that returns a status, or nullptr with *refused set.
const onnx::AttributeProto* attribute_for(const EphostAttribute* a, const void* out, const char* function,
                                          EphostStatus** refused) {
  const Node::AttributeRef* ref = checked<const Node::AttributeRef>(a, function, "an attribute");
  if (!ref) *refused = refuse(function, "not an attribute handle");
  else if (!out) *refused = refuse(function, "NULL output pointer");
  return *refused ? nullptr : ref->proto;
}
const char* attribute_name(const EphostAttribute* a) { return attribute_of(a, __func__).proto->name().c_str(); }
EphostAttributeType attribute_type(const EphostAttribute* a) {
  return static_cast<EphostAttributeType>(attribute_of(a, __func__).proto->type());
}
EphostStatus* attribute_int(const EphostAttribute* a, int64_t* out) {
  EphostStatus* refused = nullptr;
  const onnx::AttributeProto* p = attribute_for(a, out, __func__, &refused);
  if (!p) return refused;
  if (p->type() != onnx::AttributeProto::INT) return type_mismatch(*p, "INT");
  *out = p->i();
  return nullptr;
}
EphostStatus* attribute_float(const EphostAttribute* a, float* out) {
  EphostStatus* refused = nullptr;
  const onnx::AttributeProto* p = attribute_for(a, out, __func__, &refused);
  if (!p) return refused;
  if (p->type() != onnx::AttributeProto::FLOAT) return type_mismatch(*p, "FLOAT");
  *out = p->f();
  return nullptr;
}
EphostStatus* attribute_string(const EphostAttribute* a, const char** out, size_t* size) {
  EphostStatus* refused = nullptr;
  const onnx::AttributeProto* p = attribute_for(a, out && size ? out : nullptr, __func__, &refused);
  if (!p) return refused;
  if (p->type() != onnx::AttributeProto::STRING) return type_mismatch(*p, "STRING");
  *out = p->s().data();
  *size = p->s().size();
  return nullptr;
}
EphostStatus* attribute_ints(const EphostAttribute* a, const int64_t** out, size_t* count) {
  EphostStatus* refused = nullptr;
  const onnx::AttributeProto* p = attribute_for(a, out && count ? out : nullptr, __func__, &refused);
  if (!p) return refused;
  if (p->type() != onnx::AttributeProto::INTS) return type_mismatch(*p, "INTS");
  static_assert(sizeof(p->ints(0)) == sizeof(int64_t), "protobuf int64 must be int64_t");
  *out = reinterpret_cast<const int64_t*>(p->ints().data());
  *count = static_cast<size_t>(p->ints_size());
  return nullptr;
}
EphostStatus* attribute_floats(const EphostAttribute* a, const float** out, size_t* count) {
  EphostStatus* refused = nullptr;
  const onnx::AttributeProto* p = attribute_for(a, out && count ? out : nullptr, __func__, &refused);
  if (!p) return refused;
  if (p->type() != onnx::AttributeProto::FLOATS) return type_mismatch(*p, "FLOATS");
  *out = p->floats().data();
  *count = static_cast<size_t>(p->floats_size());
  return nullptr;
}
size_t attribute_num_strings(const EphostAttribute* a) {
  const onnx::AttributeProto& p = *attribute_of(a, __func__).proto;
  return p.type() == onnx::AttributeProto::STRINGS ? static_cast<size_t>(p.strings_size()) : 0;
}
EphostStatus* attribute_string_at(const EphostAttribute* a, size_t i, const char** out, size_t* size) {
  EphostStatus* refused = nullptr;
  const onnx::AttributeProto* p = attribute_for(a, out && size ? out : nullptr, __func__, &refused);
  if (!p) return refused;
  if (p->type() != onnx::AttributeProto::STRINGS) return type_mismatch(*p, "STRINGS");
  if (i >= static_cast<size_t>(p->strings_size()))
    return make_status(EPHOST_INVALID_ARGUMENT, "attribute '" + p->name() + "' has no string " + std::to_string(i));
  *out = p->strings(static_cast<int>(i)).data();
  *size = p->strings(static_cast<int>(i)).size();
  return nullptr;
}
EphostStatus* attribute_tensor(const EphostAttribute* a, EphostTensorView* out) {
  EphostStatus* refused = nullptr;
  if (!attribute_for(a, out, __func__, &refused)) return refused;
  const auto* ref = from_handle(a);
  if (ref->proto->type() != onnx::AttributeProto::TENSOR || !ref->tensor) return type_mismatch(*ref->proto, "TENSOR");
  *out = ref->tensor->view();
  return nullptr;
}

// ---- value info ----
const char* value_name(const EphostValueInfo* v) { return value_of(v, __func__).name.c_str(); }
int32_t value_elem_type(const EphostValueInfo* v) { return value_of(v, __func__).type.elem_type; }
int64_t value_rank(const EphostValueInfo* v) {
  const Value& value = value_of(v, __func__);
  if (value.initializer) return static_cast<int64_t>(value.initializer->shape().size());
  return value.type.has_shape ? static_cast<int64_t>(value.type.dims.size()) : -1;
}
int64_t value_dim(const EphostValueInfo* v, size_t i) {
  const Value& value = value_of(v, __func__);
  if (value.initializer) return i < value.initializer->shape().size() ? value.initializer->shape()[i] : -1;
  return i < value.type.dims.size() ? value.type.dims[i] : -1;
}
const char* value_dim_param(const EphostValueInfo* v, size_t i) {
  const Value& value = value_of(v, __func__);
  return i < value.type.dim_params.size() ? value.type.dim_params[i].c_str() : "";
}
const EphostNode* value_producer(const EphostValueInfo* v) {
  const Value& value = value_of(v, __func__);
  return value.producer ? to_handle(value.producer) : nullptr;
}
size_t value_num_consumers(const EphostValueInfo* v) { return value_of(v, __func__).consumers.size(); }
const EphostNode* value_consumer(const EphostValueInfo* v, size_t i) {
  const Value& value = value_of(v, __func__);
  return i < value.consumers.size() ? to_handle(value.consumers[i]) : nullptr;
}
int value_is_graph_input(const EphostValueInfo* v) { return value_of(v, __func__).is_graph_input ? 1 : 0; }
int value_is_graph_output(const EphostValueInfo* v) { return value_of(v, __func__).is_graph_output ? 1 : 0; }
// A precomputed value (graph.h) answers as a constant initializer: the host computes it from constants
// (on the first value_initializer_data), its producer stays for fusion.
int value_is_constant_initializer(const EphostValueInfo* v) {
  return value_of(v, __func__).is_constant() ? 1 : 0;
}
int value_is_outer_scope(const EphostValueInfo* v) { return value_of(v, __func__).is_outer_scope() ? 1 : 0; }
EphostStatus* value_initializer_data(const EphostValueInfo* v, EphostTensorView* out) {
  const Value* value = checked<const Value>(v, __func__, "a value info");
  if (!value) return refuse(__func__, "not a value info handle");
  if (!out) return refuse(__func__, "NULL output pointer");
  if (!value->is_constant())
    return make_status(EPHOST_INVALID_ARGUMENT, "value '" + value->name + "' is not a constant initializer");
  // Noted before the bytes are read back: from here on, what this provider said it was done with no
  // longer counts, so that no later freeing (a plan made again on another thread) takes them again.
  if (InitializerRelease* release = value->is_constant_initializer() ? initializer_release_of(*value) : nullptr)
    release->note_handout(value->initializer.get(), {current_initializer_reader(), current_initializer_step()});
  const Tensor* data = nullptr;
  try {
    // A precomputed value is computed by the first request; a freed initializer is read back.
    data = value->constant_data();
  } catch (const Error& e) {
    if (value->is_constant_initializer()) return make_status(e.code(), "value '" + value->name + "': " + e.what());
    return make_status(EPHOST_FAIL, "value '" + value->name + "': computing it from constants failed: " + e.what());
  } catch (const std::exception& e) {
    return make_status(EPHOST_FAIL, "value '" + value->name + "': computing it from constants failed: " + e.what());
  }
  *out = data->view();
  return nullptr;
}
EphostStatus* value_initializer_done(EphostProvider* provider, const EphostValueInfo* v) {
  // The provider first: after its release (a plugin calling once its session ended) the value handle
  // may point at freed memory, and nothing may be read through it.
  if (!provider) return refuse(__func__, "NULL provider");
  if (!is_live_initializer_reader(provider)) {
    report_misuse(__func__, "given a provider the host did not create, or one already released");
    return refuse(__func__, "not a live provider of this host (one the host created and has not released yet)");
  }
  const void* in_call = current_initializer_reader();
  if (in_call && in_call != provider) {
    report_misuse(__func__, "given another provider than the one whose call is running");
    return refuse(__func__, "called inside one provider's call naming another provider");
  }
  const Value* value = checked<const Value>(v, __func__, "a value info");
  if (!value) return refuse(__func__, "not a value info handle");
  if (!value->is_constant_initializer()) return nullptr;  // a hint: nothing of the host's to free
  InitializerRelease* release = initializer_release_of(*value);
  if (!release) return nullptr;
  // Inside the provider's own compile or kernel_create: done for that step; elsewhere: for all of them.
  const void* step = in_call == provider ? current_initializer_step() : nullptr;
  release->note_done(value->initializer.get(), {provider, step});
  return nullptr;
}

// ---- capability ----
// A claim is checked before anything in it is read: each pointer must be one of the graph's nodes
// (found by address, so a wild pointer is never dereferenced). A bad claim is refused: recorded with
// the reason for the partition report, and INVALID_ARGUMENT for the plugin.
std::string describe_pointer(const void* p) { return p ? fmt::format("{}", p) : std::string("NULL"); }

const Node* node_in_graph(EphostCapability& c, const EphostNode* n, std::string* why) {
  if (c.graph_nodes.empty() && c.graph && c.graph->graph)
    for (const auto& node : c.graph->graph->nodes) c.graph_nodes.insert(node.get());
  const auto* node = reinterpret_cast<const Node*>(n);
  if (n && c.graph_nodes.count(node)) return node;
  *why = fmt::format("claimed {}, which is not a node of graph '{}'", n ? "pointer " + describe_pointer(n) : "NULL",
                     c.graph ? c.graph->name : std::string("?"));
  return nullptr;
}

EphostStatus* refuse_claim(EphostCapability& c, const char* function, const std::string& why) {
  EphostCapability::Claim claim;
  claim.refused = why;
  c.claims.push_back(std::move(claim));
  report_misuse(function, why);
  return make_status(EPHOST_INVALID_ARGUMENT, why);
}

// Why a plugin of ABI 1 cannot have `node`: the first value it reads or writes that is a sequence or
// an optional; "" when every value is a tensor (or of unknown type).
std::string non_tensor_value_of(const Node& node) {
  auto check = [](const std::vector<Value*>& values) -> const Value* {
    for (const Value* v : values)
      if (v && v->type.is_non_tensor()) return v;
    return nullptr;
  };
  const Value* v = check(node.inputs);
  if (!v) v = check(node.implicit_inputs);
  if (!v) v = check(node.outputs);
  if (!v) return {};
  return fmt::format("node '{}' ({}) reads or writes '{}', a {} value, and the plugin speaks plugin ABI 1, which has "
                     "no sequence or optional values (ABI 2 does)",
                     node.name, node.op_type, v->name, EphostValueKindName(v->type.kind));
}

EphostStatus* capability_add_node(EphostCapability* cap, const EphostNode* n) {
  EphostCapability* c = checked<EphostCapability>(cap, __func__, "a capability sink");
  if (!c) return refuse(__func__, "not the capability handle get_capability was given");
  return guard([&] {
    std::string why;
    const Node* node = node_in_graph(*c, n, &why);
    if (!node) {
      EphostStatus* s = refuse_claim(*c, __func__, why);
      Error e(s->code, s->message);
      release_status(s);
      throw e;
    }
    EphostCapability::Claim claim{false, {node}, {}};
    if (!c->non_tensor_values) claim.refused = non_tensor_value_of(*node);
    c->claims.push_back(std::move(claim));
  });
}
EphostStatus* capability_add_fused_group(EphostCapability* cap, const EphostNode* const* nodes, size_t count) {
  EphostCapability* c = checked<EphostCapability>(cap, __func__, "a capability sink");
  if (!c) return refuse(__func__, "not the capability handle get_capability was given");
  return guard([&] {
    if (count == 0) fail(EPHOST_INVALID_ARGUMENT, "claimed an empty fused group");
    EphostCapability::Claim claim;
    claim.fused = true;
    std::string why;
    if (!nodes) why = fmt::format("claimed a fused group of {} nodes given as NULL", count);
    for (size_t i = 0; why.empty() && i < count; ++i) {
      const Node* node = node_in_graph(*c, nodes[i], &why);
      if (!node) {
        why = fmt::format("fused group refused: node {} of {}: {}", i, count, why);
        break;
      }
      claim.nodes.push_back(node);
      if (!c->non_tensor_values && claim.refused.empty()) claim.refused = non_tensor_value_of(*node);
    }
    if (!why.empty()) {
      EphostStatus* s = refuse_claim(*c, __func__, why);
      Error e(s->code, s->message);
      release_status(s);
      throw e;
    }
    if (!claim.refused.empty()) claim.refused = "fused group refused: " + claim.refused;
    c->claims.push_back(std::move(claim));
  });
}

// ---- kernel context ----
bool context_ok(const EphostKernelContext* c, const char* function) {
  return checked<const EphostKernelContext>(c, function, "a kernel context") != nullptr;
}
bool value_ok(const EphostValue* v, const char* function) {
  return checked<const EphostValue>(v, function, "a value") != nullptr;
}

[[noreturn]] void not_a_tensor(const char* what, size_t i, const RuntimeValue& v) {
  fail(EPHOST_INVALID_ARGUMENT, "{} {} is a {}, not a tensor{}", what, i, v.describe(),
       v.is_sequence() ? " (read sequences with kernel_input_sequence, plugin ABI 2)" : "");
}

const RuntimeValue& present_input(const EphostKernelContext* c, size_t i) {
  if (i >= c->num_inputs()) fail(EPHOST_INVALID_ARGUMENT, "input {} requested, the node has {}", i, c->num_inputs());
  const RuntimeValue* v = c->input(i);
  if (!v) fail(EPHOST_INVALID_ARGUMENT, "input {} is an absent optional input", i);
  return *v;
}

size_t kernel_num_inputs(const EphostKernelContext* c) { return context_ok(c, __func__) ? c->num_inputs() : 0; }
EphostStatus* kernel_input(const EphostKernelContext* c, size_t i, EphostTensorView* out) {
  if (!context_ok(c, __func__)) return refuse(__func__, "not the kernel context compute was given");
  return guard([&] {
    if (!out) fail(EPHOST_INVALID_ARGUMENT, "kernel_input: NULL out");
    if (i >= c->num_inputs()) fail(EPHOST_INVALID_ARGUMENT, "input {} requested, the node has {}", i, c->num_inputs());
    const RuntimeValue* v = c->input(i);
    if (v && !v->is_tensor()) not_a_tensor("input", i, *v);
    if (v && v->tensor().on_device())
      fail(EPHOST_INVALID_ARGUMENT, "input {} is in the memory of device {}: read it with kernel_input_memory", i,
           v->tensor().device()->label());
    *out = v ? v->tensor().view() : EphostTensorView{EPHOST_ELEMENT_UNDEFINED, 0, nullptr, nullptr};
  });
}
size_t kernel_num_outputs(const EphostKernelContext* c) { return context_ok(c, __func__) ? c->num_outputs() : 0; }
EphostStatus* kernel_output(EphostKernelContext* c, size_t i, int32_t elem_type, const int64_t* shape, size_t rank,
                            void** out) {
  if (!context_ok(c, __func__)) return refuse(__func__, "not the kernel context compute was given");
  return guard([&] {
    if (rank > 0 && !shape) fail(EPHOST_INVALID_ARGUMENT, "output {}: NULL shape with rank {}", i, rank);
    if (!out) fail(EPHOST_INVALID_ARGUMENT, "kernel_output: NULL out");
    if (const Device* d = c->memory_device())
      fail(EPHOST_INVALID_ARGUMENT, "output {}: the provider runs on device {}, whose outputs live in its memory: "
           "allocate them with kernel_output_device", i, d->label());
    std::vector<int64_t> dims(shape, shape + rank);
    *out = c->allocate_output(i, elem_type, std::move(dims)).data();
  });
}
EphostStatus* kernel_output_string(EphostKernelContext* c, size_t i, const char* data, size_t size, const char** out) {
  if (!context_ok(c, __func__)) return refuse(__func__, "not the kernel context compute was given");
  return guard([&] {
    if (!out) fail(EPHOST_INVALID_ARGUMENT, "kernel_output_string: NULL out");
    Tensor* t = c->allocated_output(i);
    if (!t) fail(EPHOST_INVALID_ARGUMENT, "output {} must be allocated with kernel_output first", i);
    if (t->elem_type() != EPHOST_ELEMENT_STRING) fail(EPHOST_INVALID_ARGUMENT, "output {} is not a string tensor", i);
    *out = t->intern_string(data ? data : "", data ? size : 0);
  });
}
int32_t kernel_num_threads(const EphostKernelContext* c) { return context_ok(c, __func__) ? c->num_threads() : 1; }

// New host values for subgraph results: they own their memory (the executor copies what it does not own).
void hand_out(std::vector<RuntimeValue> results, const char* attribute, EphostValue** outputs, size_t num_outputs) {
  if (results.size() != num_outputs)
    fail(EPHOST_INVALID_ARGUMENT, "subgraph '{}' has {} outputs, {} requested", attribute, results.size(),
         num_outputs);
  for (size_t i = 0; i < num_outputs; ++i) outputs[i] = new EphostValue{std::move(results[i]), false};
}

EphostStatus* kernel_run_subgraph(EphostKernelContext* c, const char* attribute, const EphostTensorView* inputs,
                                  size_t num_inputs, EphostValue** outputs, size_t num_outputs) {
  if (!context_ok(c, __func__)) return refuse(__func__, "not the kernel context compute was given");
  return guard([&] {
    if (!attribute) fail(EPHOST_INVALID_ARGUMENT, "kernel_run_subgraph: NULL attribute name");
    if (num_inputs && !inputs) fail(EPHOST_INVALID_ARGUMENT, "kernel_run_subgraph: NULL inputs");
    if (num_outputs && !outputs) fail(EPHOST_INVALID_ARGUMENT, "kernel_run_subgraph: NULL outputs");
    std::vector<RuntimeValue> bound;
    bound.reserve(num_inputs);
    for (size_t i = 0; i < num_inputs; ++i) {
      const EphostTensorView& v = inputs[i];
      // The plugin's buffers are only valid during the call; the subgraph run finishes inside it.
      bound.emplace_back(Tensor::borrow(v.elem_type, std::vector<int64_t>(v.shape, v.shape + v.rank),
                                        const_cast<void*>(v.data)));
    }
    hand_out(c->run_subgraph(attribute, std::move(bound)), attribute, outputs, num_outputs);
  });
}
EphostStatus* value_tensor(const EphostValue* v, EphostTensorView* out) {
  if (v && !value_ok(v, __func__)) return refuse(__func__, "not a value handle");
  return guard([&] {
    if (!v) fail(EPHOST_INVALID_ARGUMENT, "value_tensor: NULL value");
    if (!v->value.is_tensor())
      fail(EPHOST_INVALID_ARGUMENT, "value_tensor: the value is a {}, not a tensor", v->value.describe());
    if (v->value.tensor().on_device())
      fail(EPHOST_INVALID_ARGUMENT, "value_tensor: the tensor is in the memory of device {}",
           v->value.tensor().device()->label());
    *out = v->value.tensor().view();
  });
}
void value_release(EphostValue* v) {
  if (v && value_ok(v, __func__)) delete v;
}

// ---- sequence and optional values (ABI 2) ----
int32_t value_kind(const EphostValueInfo* v) { return value_of(v, __func__).type.kind; }
int32_t value_optional_kind(const EphostValueInfo* v) { return value_of(v, __func__).type.optional_kind; }
int32_t value_tensor_elem_type(const EphostValueInfo* v) { return value_of(v, __func__).type.tensor_elem_type; }

int32_t kernel_input_kind(const EphostKernelContext* c, size_t i) {
  if (!context_ok(c, __func__)) return EPHOST_VALUE_UNDEFINED;
  try {
    if (i >= c->num_inputs()) return EPHOST_VALUE_UNDEFINED;
    const RuntimeValue* v = c->input(i);
    return v ? to_abi_kind(v->kind()) : EPHOST_VALUE_UNDEFINED;
  } catch (...) {
    return EPHOST_VALUE_UNDEFINED;  // an input that was never produced: kernel_input reports why
  }
}
EphostStatus* kernel_input_sequence(const EphostKernelContext* c, size_t i, int32_t* elem_type, size_t* length) {
  if (!context_ok(c, __func__)) return refuse(__func__, "not the kernel context compute was given");
  return guard([&] {
    const TensorSequence& seq = present_input(c, i).sequence("input");
    if (elem_type) *elem_type = seq.elem_type;
    if (length) *length = seq.elements.size();
  });
}
const Tensor& element_at(const TensorSequence& seq, size_t position, const char* what, size_t index) {
  if (position >= seq.elements.size())
    fail(EPHOST_INVALID_ARGUMENT, "{} {}: element {} requested, the sequence has {}", what, index, position,
         seq.elements.size());
  return seq.elements[position];
}
EphostStatus* kernel_input_sequence_element(const EphostKernelContext* c, size_t i, size_t position,
                                            EphostTensorView* out) {
  if (!context_ok(c, __func__)) return refuse(__func__, "not the kernel context compute was given");
  return guard([&] {
    if (!out) fail(EPHOST_INVALID_ARGUMENT, "kernel_input_sequence_element: NULL out");
    *out = element_at(present_input(c, i).sequence("input"), position, "input", i).view();
  });
}
EphostStatus* kernel_input_value(const EphostKernelContext* c, size_t i, EphostValue** out) {
  if (!context_ok(c, __func__)) return refuse(__func__, "not the kernel context compute was given");
  return guard([&] {
    if (!out) fail(EPHOST_INVALID_ARGUMENT, "kernel_input_value: NULL out");
    const RuntimeValue& v = present_input(c, i);
    *out = new EphostValue{v, v.is_tensor()};
  });
}
EphostStatus* kernel_output_sequence(EphostKernelContext* c, size_t i, int32_t elem_type, size_t length) {
  if (!context_ok(c, __func__)) return refuse(__func__, "not the kernel context compute was given");
  return guard([&] { c->begin_sequence_output(i, elem_type, length); });
}
Tensor& unset_element(EphostKernelContext* c, size_t i, size_t position, TensorSequence** seq_out) {
  TensorSequence& seq = c->sequence_output(i);
  if (position >= seq.elements.size())
    fail(EPHOST_INVALID_ARGUMENT, "sequence output {}: element {} written, the sequence has {}", i, position,
         seq.elements.size());
  Tensor& e = seq.elements[position];
  if (!e.empty()) fail(EPHOST_INVALID_ARGUMENT, "sequence output {}: element {} written twice", i, position);
  *seq_out = &seq;
  return e;
}
EphostStatus* kernel_output_sequence_element(EphostKernelContext* c, size_t i, size_t position, const int64_t* shape,
                                             size_t rank, void** out_data) {
  if (!context_ok(c, __func__)) return refuse(__func__, "not the kernel context compute was given");
  return guard([&] {
    if (rank > 0 && !shape) fail(EPHOST_INVALID_ARGUMENT, "sequence output {}: NULL shape with rank {}", i, rank);
    if (!out_data) fail(EPHOST_INVALID_ARGUMENT, "kernel_output_sequence_element: NULL out_data");
    TensorSequence* seq = nullptr;
    Tensor& e = unset_element(c, i, position, &seq);
    e = Tensor::allocate(seq->elem_type, std::vector<int64_t>(shape, shape + rank));
    *out_data = e.data();
  });
}
EphostStatus* kernel_output_sequence_element_string(EphostKernelContext* c, size_t i, size_t position,
                                                    const char* data, size_t size, const char** out) {
  if (!context_ok(c, __func__)) return refuse(__func__, "not the kernel context compute was given");
  return guard([&] {
    if (!out) fail(EPHOST_INVALID_ARGUMENT, "kernel_output_sequence_element_string: NULL out");
    TensorSequence& seq = c->sequence_output(i);
    if (seq.elem_type != EPHOST_ELEMENT_STRING)
      fail(EPHOST_INVALID_ARGUMENT, "sequence output {} holds {} tensors, not strings", i,
           element_type_name(seq.elem_type));
    if (position >= seq.elements.size() || seq.elements[position].empty())
      fail(EPHOST_INVALID_ARGUMENT, "sequence output {}: element {} must be allocated with "
           "kernel_output_sequence_element first", i, position);
    *out = seq.elements[position].intern_string(data ? data : "", data ? size : 0);
  });
}
// The tensor `value` stands for at `position`: itself for a tensor (position 0), an element of a sequence.
Tensor tensor_in(const EphostValue& value, size_t position) {
  if (value.value.is_tensor()) {
    if (position != 0) fail(EPHOST_INVALID_ARGUMENT, "position {} given for a tensor value (use 0)", position);
    // A kernel input lives in memory the executor reuses: a sequence keeps its own copy.
    return value.borrowed ? value.value.tensor().clone() : value.value.tensor();
  }
  if (value.value.is_sequence()) return element_at(value.value.sequence(), position, "value", 0);
  fail(EPHOST_INVALID_ARGUMENT, "the value is {}: it holds no tensor", value.value.describe());
}
EphostStatus* kernel_output_sequence_element_value(EphostKernelContext* c, size_t i, size_t position,
                                                   const EphostValue* value, size_t value_position) {
  if (value && !value_ok(value, __func__)) return refuse(__func__, "not a value handle");
  if (!context_ok(c, __func__)) return refuse(__func__, "not the kernel context compute was given");
  return guard([&] {
    if (!value) fail(EPHOST_INVALID_ARGUMENT, "kernel_output_sequence_element_value: NULL value");
    TensorSequence* seq = nullptr;
    Tensor& e = unset_element(c, i, position, &seq);
    Tensor t = tensor_in(*value, value_position);
    if (t.elem_type() != seq->elem_type)
      fail(EPHOST_INVALID_ARGUMENT, "sequence output {} holds {} tensors; element {} would be {}", i,
           element_type_name(seq->elem_type), position, element_type_name(t.elem_type()));
    e = std::move(t);
  });
}
EphostStatus* kernel_output_none(EphostKernelContext* c, size_t i) {
  if (!context_ok(c, __func__)) return refuse(__func__, "not the kernel context compute was given");
  return guard([&] { c->set_output(i, RuntimeValue::none()); });
}
EphostStatus* kernel_output_value(EphostKernelContext* c, size_t i, const EphostValue* value) {
  if (value && !value_ok(value, __func__)) return refuse(__func__, "not a value handle");
  if (!context_ok(c, __func__)) return refuse(__func__, "not the kernel context compute was given");
  return guard([&] {
    if (!value) fail(EPHOST_INVALID_ARGUMENT, "kernel_output_value: NULL value");
    if (!value->value.is_set()) fail(EPHOST_INVALID_ARGUMENT, "kernel_output_value: the value holds nothing");
    if (value->value.is_tensor() && value->borrowed)
      c->set_output(i, value->value.tensor().clone());
    else
      c->set_output(i, value->value);
  });
}
EphostStatus* kernel_run_subgraph_values(EphostKernelContext* c, const char* attribute,
                                         const EphostValue* const* inputs, size_t num_inputs, EphostValue** outputs,
                                         size_t num_outputs) {
  if (!context_ok(c, __func__)) return refuse(__func__, "not the kernel context compute was given");
  return guard([&] {
    if (!attribute) fail(EPHOST_INVALID_ARGUMENT, "kernel_run_subgraph_values: NULL attribute name");
    if (num_inputs && !inputs) fail(EPHOST_INVALID_ARGUMENT, "kernel_run_subgraph_values: NULL inputs");
    if (num_outputs && !outputs) fail(EPHOST_INVALID_ARGUMENT, "kernel_run_subgraph_values: NULL outputs");
    std::vector<RuntimeValue> bound;
    bound.reserve(num_inputs);
    for (size_t i = 0; i < num_inputs; ++i) {
      if (!inputs[i]) fail(EPHOST_INVALID_ARGUMENT, "kernel_run_subgraph_values: input {} is NULL", i);
      if (!value_ok(inputs[i], __func__)) fail(EPHOST_INVALID_ARGUMENT, "kernel_run_subgraph_values: input {} is not a value handle", i);
      // Shared, not copied: a subgraph never writes its inputs, and the run ends inside this call.
      bound.push_back(inputs[i]->value);
    }
    hand_out(c->run_subgraph(attribute, std::move(bound)), attribute, outputs, num_outputs);
  });
}
int32_t value_held_kind(const EphostValue* v) {
  return v && value_ok(v, __func__) ? to_abi_kind(v->value.kind()) : EPHOST_VALUE_UNDEFINED;
}
EphostStatus* value_sequence(const EphostValue* v, int32_t* elem_type, size_t* length) {
  if (v && !value_ok(v, __func__)) return refuse(__func__, "not a value handle");
  return guard([&] {
    if (!v) fail(EPHOST_INVALID_ARGUMENT, "value_sequence: NULL value");
    const TensorSequence& seq = v->value.sequence();
    if (elem_type) *elem_type = seq.elem_type;
    if (length) *length = seq.elements.size();
  });
}
EphostStatus* value_sequence_element(const EphostValue* v, size_t position, EphostTensorView* out) {
  if (v && !value_ok(v, __func__)) return refuse(__func__, "not a value handle");
  return guard([&] {
    if (!v || !out) fail(EPHOST_INVALID_ARGUMENT, "value_sequence_element: NULL value or out");
    *out = element_at(v->value.sequence(), position, "value", 0).view();
  });
}
EphostStatus* value_sequence_element_value(const EphostValue* v, size_t position, EphostValue** out) {
  if (v && !value_ok(v, __func__)) return refuse(__func__, "not a value handle");
  return guard([&] {
    if (!v || !out) fail(EPHOST_INVALID_ARGUMENT, "value_sequence_element_value: NULL value or out");
    // Elements of sequences own their buffers and never change: shared, not copied.
    *out = new EphostValue{element_at(v->value.sequence(), position, "value", 0), false};
  });
}
EphostStatus* value_create_tensor(const EphostTensorView* source, EphostValue** out) {
  return guard([&] {
    if (!source || !out) fail(EPHOST_INVALID_ARGUMENT, "value_create_tensor: NULL source or out");
    if (!element_type_known(source->elem_type))
      fail(EPHOST_INVALID_ARGUMENT, "value_create_tensor: unknown element type {}", source->elem_type);
    if (source->rank > 0 && !source->shape) fail(EPHOST_INVALID_ARGUMENT, "value_create_tensor: NULL shape");
    std::vector<int64_t> shape(source->shape, source->shape + source->rank);
    if (element_count(shape) > 0 && !source->data) fail(EPHOST_INVALID_ARGUMENT, "value_create_tensor: NULL data");
    Tensor view = Tensor::borrow(source->elem_type, std::move(shape), const_cast<void*>(source->data));
    *out = new EphostValue{view.clone(), false};
  });
}

// ---- EPContext sink ----
EphostStatus* context_set_blob(EphostContextSink* sink, const void* data, size_t size) {
  if (sink && !checked<EphostContextSink>(sink, __func__, "a context sink")) return refuse(__func__, "not the sink context_emit was given");
  if (!sink) return make_status(EPHOST_INVALID_ARGUMENT, "context_set_blob: NULL sink");
  if (!data && size) return make_status(EPHOST_INVALID_ARGUMENT, "context_set_blob: NULL data with a non-zero size");
  return guard([&] {
    const uint8_t* p = static_cast<const uint8_t*>(data);
    sink->pieces.emplace_back(p, p + size);
  });
}
EphostStatus* context_set_attribute(EphostContextSink* sink, const char* name, const char* value) {
  if (sink && !checked<EphostContextSink>(sink, __func__, "a context sink")) return refuse(__func__, "not the sink context_emit was given");
  if (!sink || !name || !value) return make_status(EPHOST_INVALID_ARGUMENT, "context_set_attribute: NULL argument");
  static const char* const kPluginSettable[] = {"ep_sdk_version", "hardware_architecture", "notes", "max_size"};
  const std::string key = name;
  if (std::find(std::begin(kPluginSettable), std::end(kPluginSettable), key) == std::end(kPluginSettable))
    return make_status(EPHOST_INVALID_ARGUMENT,
                       ("context_set_attribute: '" + key +
                        "' is not an attribute a plugin sets; plugins set ep_sdk_version, hardware_architecture, "
                        "notes and max_size, the host sets the rest")
                           .c_str());
  if (key == "max_size") {
    char* end = nullptr;
    errno = 0;
    std::strtoll(value, &end, 10);
    if (!*value || *end || errno)
      return make_status(EPHOST_INVALID_ARGUMENT,
                         ("context_set_attribute: max_size must be a decimal integer, got '" + std::string(value) +
                          "'")
                             .c_str());
  }
  return guard([&] {
    for (auto& kv : sink->attributes)
      if (kv.first == key) {
        kv.second = value;
        return;
      }
    sink->attributes.emplace_back(key, value);
  });
}

// ---- ABI 3: device memory in kernels ------------------------------------------------------------

void describe_memory(const Tensor& t, EphostTensorMemory* out) {
  out->elem_type = t.elem_type();
  out->rank = t.shape().size();
  out->shape = t.shape().data();
  out->location = t.on_device() ? EPHOST_LOCATION_DEVICE : EPHOST_LOCATION_HOST;
  out->device = t.on_device() ? t.device()->index() : 0;
  out->host_data = t.on_device() ? nullptr : t.data();
  out->buffer = t.on_device() ? t.device_buffer() : EphostDeviceBuffer{};
}

EphostStatus* kernel_input_memory(const EphostKernelContext* c, size_t i, EphostTensorMemory* out) {
  if (!context_ok(c, __func__)) return refuse(__func__, "not the kernel context compute was given");
  return guard([&] {
    if (!out) fail(EPHOST_INVALID_ARGUMENT, "kernel_input_memory: out is NULL");
    if (i >= c->num_inputs()) fail(EPHOST_INVALID_ARGUMENT, "input {} requested, the node has {}", i, c->num_inputs());
    const RuntimeValue* v = c->input(i);
    *out = EphostTensorMemory{};
    if (!v) return;  // an absent optional input: elem_type UNDEFINED
    if (!v->is_tensor()) not_a_tensor("input", i, *v);
    describe_memory(v->tensor(), out);
  });
}

EphostStatus* kernel_output_device(EphostKernelContext* c, size_t i, int32_t elem_type, const int64_t* shape,
                                   size_t rank, EphostTensorMemory* out) {
  if (!context_ok(c, __func__)) return refuse(__func__, "not the kernel context compute was given");
  return guard([&] {
    if (!out) fail(EPHOST_INVALID_ARGUMENT, "kernel_output_device: out is NULL");
    if (rank > 0 && !shape) fail(EPHOST_INVALID_ARGUMENT, "output {}: NULL shape with rank {}", i, rank);
    if (!c->memory_device())
      fail(EPHOST_INVALID_ARGUMENT, "output {}: kernel_output_device is for providers running on a device whose "
           "memory is not host memory; this provider's outputs are in host memory (kernel_output)", i);
    std::vector<int64_t> dims(shape, shape + rank);
    describe_memory(c->allocate_output(i, elem_type, std::move(dims)), out);
  });
}

EphostStream* kernel_stream(const EphostKernelContext* c) {
  if (!context_ok(c, __func__)) return nullptr;
  try {
    return const_cast<EphostKernelContext*>(c)->stream();
  } catch (...) {
    return nullptr;  // the host could not make a stream: the kernel then works synchronously
  }
}

// ---- plugin ABI 4: profile spans inside a step ----
int kernel_profiling(const EphostKernelContext* c) { return context_ok(c, __func__) && c->profiling() ? 1 : 0; }

int64_t kernel_profile_clock_ns(const EphostKernelContext* c) {
  return context_ok(c, __func__) ? c->profile_clock_ns() : 0;
}

EphostStatus* kernel_profile_span(EphostKernelContext* c, const EphostProfileSpan* span) {
  if (!context_ok(c, __func__)) return refuse(__func__, "not the kernel context compute was given");
  return guard([&] {
    if (!span) fail(EPHOST_INVALID_ARGUMENT, "kernel_profile_span: NULL span");
    if (span->struct_size < EPHOST_STRUCT_SIZE_THROUGH(EphostProfileSpan, num_nodes))
      fail(EPHOST_INVALID_ARGUMENT,
           "kernel_profile_span: struct_size {} is smaller than an ABI 4 EphostProfileSpan ({})", span->struct_size,
           EPHOST_STRUCT_SIZE_THROUGH(EphostProfileSpan, num_nodes));
    if (!span->name) fail(EPHOST_INVALID_ARGUMENT, "kernel_profile_span: the span has no name");
    if (!span->nodes && span->num_nodes > 0)
      fail(EPHOST_INVALID_ARGUMENT, "kernel_profile_span: nodes is NULL but num_nodes is {}", span->num_nodes);
    c->record_span(*span);
  });
}

// Called from any thread of a compute, often: no lock, no allocation unless the run should stop.
EphostStatus* kernel_run_check(const EphostKernelContext* c) {
  if (!context_ok(c, __func__)) return refuse(__func__, "not the kernel context compute was given");
  return guard([&] {
    const RunLimits* limits = c->run_limits();
    if (!limits || !limits->limited()) return;
    if (std::optional<StopReason> reason = limits->stop_reason()) throw Error(reason->code, std::move(reason->message));
  });
}

}  // namespace

EphostHostApi make_host_api(uint32_t abi_version) {
  // Filled with every function of the newest version, then cut to the negotiated version's size.
  EphostHostApi t{};
  t.abi_version = abi_version;
  t.status_create = &status_create;
  t.status_release = &status_release;
  t.status_code = &status_code;
  t.status_message = &status_message;
  t.log = &log;
  t.graph_name = &graph_name;
  t.graph_model_path = &graph_model_path;
  t.graph_num_nodes = &graph_num_nodes;
  t.graph_node = &graph_node;
  t.graph_num_inputs = &graph_num_inputs;
  t.graph_input = &graph_input;
  t.graph_num_outputs = &graph_num_outputs;
  t.graph_output = &graph_output;
  t.graph_num_initializers = &graph_num_initializers;
  t.graph_initializer = &graph_initializer;
  t.graph_opset = &graph_opset;
  t.graph_parent_node = &graph_parent_node;
  t.node_id = &node_id;
  t.node_name = &node_name;
  t.node_op_type = &node_op_type;
  t.node_domain = &node_domain;
  t.node_num_inputs = &node_num_inputs;
  t.node_input = &node_input;
  t.node_num_outputs = &node_num_outputs;
  t.node_output = &node_output;
  t.node_num_implicit_inputs = &node_num_implicit_inputs;
  t.node_implicit_input = &node_implicit_input;
  t.node_num_attributes = &node_num_attributes;
  t.node_attribute_at = &node_attribute_at;
  t.node_attribute = &node_attribute;
  t.node_subgraph = &node_subgraph;
  t.node_graph = &node_graph;
  t.attribute_name = &attribute_name;
  t.attribute_type = &attribute_type;
  t.attribute_int = &attribute_int;
  t.attribute_float = &attribute_float;
  t.attribute_string = &attribute_string;
  t.attribute_ints = &attribute_ints;
  t.attribute_floats = &attribute_floats;
  t.attribute_num_strings = &attribute_num_strings;
  t.attribute_string_at = &attribute_string_at;
  t.attribute_tensor = &attribute_tensor;
  t.value_name = &value_name;
  t.value_elem_type = &value_elem_type;
  t.value_rank = &value_rank;
  t.value_dim = &value_dim;
  t.value_dim_param = &value_dim_param;
  t.value_producer = &value_producer;
  t.value_num_consumers = &value_num_consumers;
  t.value_consumer = &value_consumer;
  t.value_is_graph_input = &value_is_graph_input;
  t.value_is_graph_output = &value_is_graph_output;
  t.value_is_constant_initializer = &value_is_constant_initializer;
  t.value_is_outer_scope = &value_is_outer_scope;
  t.value_initializer_data = &value_initializer_data;
  t.capability_add_node = &capability_add_node;
  t.capability_add_fused_group = &capability_add_fused_group;
  t.kernel_num_inputs = &kernel_num_inputs;
  t.kernel_input = &kernel_input;
  t.kernel_num_outputs = &kernel_num_outputs;
  t.kernel_output = &kernel_output;
  t.kernel_output_string = &kernel_output_string;
  t.kernel_num_threads = &kernel_num_threads;
  t.kernel_run_subgraph = &kernel_run_subgraph;
  t.value_tensor = &value_tensor;
  t.value_release = &value_release;
  t.context_set_blob = &context_set_blob;
  t.context_set_attribute = &context_set_attribute;
  t.value_kind = &value_kind;
  t.value_optional_kind = &value_optional_kind;
  t.value_tensor_elem_type = &value_tensor_elem_type;
  t.kernel_input_kind = &kernel_input_kind;
  t.kernel_input_sequence = &kernel_input_sequence;
  t.kernel_input_sequence_element = &kernel_input_sequence_element;
  t.kernel_input_value = &kernel_input_value;
  t.kernel_output_sequence = &kernel_output_sequence;
  t.kernel_output_sequence_element = &kernel_output_sequence_element;
  t.kernel_output_sequence_element_string = &kernel_output_sequence_element_string;
  t.kernel_output_sequence_element_value = &kernel_output_sequence_element_value;
  t.kernel_output_none = &kernel_output_none;
  t.kernel_output_value = &kernel_output_value;
  t.kernel_run_subgraph_values = &kernel_run_subgraph_values;
  t.value_held_kind = &value_held_kind;
  t.value_sequence = &value_sequence;
  t.value_sequence_element = &value_sequence_element;
  t.value_sequence_element_value = &value_sequence_element_value;
  t.value_create_tensor = &value_create_tensor;
  t.kernel_input_memory = &kernel_input_memory;
  t.kernel_output_device = &kernel_output_device;
  t.kernel_stream = &kernel_stream;
  t.kernel_profiling = &kernel_profiling;
  t.kernel_profile_clock_ns = &kernel_profile_clock_ns;
  t.kernel_profile_span = &kernel_profile_span;
  t.kernel_run_check = &kernel_run_check;
  t.value_initializer_done = &value_initializer_done;
  return cut_to_version_size(t, EphostHostApiSize(abi_version), "host table for a plugin ABI version");
}

}  // namespace ephost
