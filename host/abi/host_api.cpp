// The host table every plugin receives. Each function is a thin, exception-proof accessor over the
// IR (graph/graph.h) or the executor's kernel context: nothing here may throw across the ABI.
#include "abi/host_api.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "abi/handles.h"
#include "core/error.h"
#include "core/log.h"
#include "core/status.h"

namespace ephost {
namespace {

// ---- status & log ----
EphostStatus* status_create(EphostStatusCode code, const char* message) {
  return make_status(code, message ? message : "");
}
void status_release(EphostStatus* s) { delete s; }
EphostStatusCode status_code(const EphostStatus* s) { return s ? s->code : EPHOST_OK; }
const char* status_message(const EphostStatus* s) { return s ? s->message.c_str() : ""; }
void log(const EphostProvider*, EphostLogLevel level, const char* message) {
  log_message(level, std::string("[plugin] ") + (message ? message : ""));
}

// ---- graph ----
const char* graph_name(const EphostGraph* g) { return from_handle(g)->name.c_str(); }
const char* graph_model_path(const EphostGraph* g) {
  const GraphView* v = from_handle(g);
  return v->graph && v->graph->model ? v->graph->model->path.c_str() : "";
}
size_t graph_num_nodes(const EphostGraph* g) { return from_handle(g)->nodes.size(); }
const EphostNode* graph_node(const EphostGraph* g, size_t i) {
  const GraphView* v = from_handle(g);
  return i < v->nodes.size() ? to_handle(v->nodes[i]) : nullptr;
}
size_t graph_num_inputs(const EphostGraph* g) { return from_handle(g)->inputs.size(); }
const EphostValueInfo* graph_input(const EphostGraph* g, size_t i) {
  const GraphView* v = from_handle(g);
  return i < v->inputs.size() ? to_handle(v->inputs[i]) : nullptr;
}
size_t graph_num_outputs(const EphostGraph* g) { return from_handle(g)->outputs.size(); }
const EphostValueInfo* graph_output(const EphostGraph* g, size_t i) {
  const GraphView* v = from_handle(g);
  return i < v->outputs.size() ? to_handle(v->outputs[i]) : nullptr;
}
size_t graph_num_initializers(const EphostGraph* g) { return from_handle(g)->initializers.size(); }
const EphostValueInfo* graph_initializer(const EphostGraph* g, size_t i) {
  const GraphView* v = from_handle(g);
  return i < v->initializers.size() ? to_handle(v->initializers[i]) : nullptr;
}
int64_t graph_opset(const EphostGraph* g, const char* domain) {
  const GraphView* v = from_handle(g);
  if (!v->graph || !v->graph->model) return -1;
  std::string d = domain ? domain : "";
  if (d == "ai.onnx") d.clear();
  return v->graph->model->opset(d);
}
const EphostNode* graph_parent_node(const EphostGraph* g) {
  const GraphView* v = from_handle(g);
  return v->parent_node ? to_handle(v->parent_node) : nullptr;
}

// ---- node ----
size_t node_id(const EphostNode* n) { return from_handle(n)->index; }
const char* node_name(const EphostNode* n) { return from_handle(n)->name.c_str(); }
const char* node_op_type(const EphostNode* n) { return from_handle(n)->op_type.c_str(); }
const char* node_domain(const EphostNode* n) { return from_handle(n)->domain.c_str(); }
size_t node_num_inputs(const EphostNode* n) { return from_handle(n)->inputs.size(); }
const EphostValueInfo* node_input(const EphostNode* n, size_t i) {
  const Node* node = from_handle(n);
  return i < node->inputs.size() && node->inputs[i] ? to_handle(node->inputs[i]) : nullptr;
}
size_t node_num_outputs(const EphostNode* n) { return from_handle(n)->outputs.size(); }
const EphostValueInfo* node_output(const EphostNode* n, size_t i) {
  const Node* node = from_handle(n);
  return i < node->outputs.size() && node->outputs[i] ? to_handle(node->outputs[i]) : nullptr;
}
size_t node_num_implicit_inputs(const EphostNode* n) { return from_handle(n)->implicit_inputs.size(); }
const EphostValueInfo* node_implicit_input(const EphostNode* n, size_t i) {
  const Node* node = from_handle(n);
  return i < node->implicit_inputs.size() ? to_handle(node->implicit_inputs[i]) : nullptr;
}
size_t node_num_attributes(const EphostNode* n) { return from_handle(n)->attributes.size(); }
const EphostAttribute* node_attribute_at(const EphostNode* n, size_t i) {
  const Node* node = from_handle(n);
  return i < node->attributes.size() ? to_handle(&node->attributes[i]) : nullptr;
}
const EphostAttribute* node_attribute(const EphostNode* n, const char* name) {
  if (!name) return nullptr;
  for (const auto& a : from_handle(n)->attributes)
    if (a.proto->name() == name) return to_handle(&a);
  return nullptr;
}
const EphostGraph* node_subgraph(const EphostNode* n, const char* attribute_name) {
  if (!attribute_name) return nullptr;
  Graph* g = from_handle(n)->subgraph(attribute_name);
  return g && g->view ? to_handle(g->view.get()) : nullptr;
}
const EphostGraph* node_graph(const EphostNode* n) {
  const Graph* g = from_handle(n)->owner;
  return g && g->view ? to_handle(g->view.get()) : nullptr;
}

// ---- attribute ----
EphostStatus* type_mismatch(const onnx::AttributeProto& a, const char* wanted) {
  return make_status(EPHOST_INVALID_ARGUMENT, "attribute '" + a.name() + "' is not of type " + wanted +
                                                  " (its type is " + std::to_string(static_cast<int>(a.type())) + ")");
}
const char* attribute_name(const EphostAttribute* a) { return from_handle(a)->proto->name().c_str(); }
EphostAttributeType attribute_type(const EphostAttribute* a) {
  return static_cast<EphostAttributeType>(from_handle(a)->proto->type());
}
EphostStatus* attribute_int(const EphostAttribute* a, int64_t* out) {
  const auto& p = *from_handle(a)->proto;
  if (p.type() != onnx::AttributeProto::INT) return type_mismatch(p, "INT");
  *out = p.i();
  return nullptr;
}
EphostStatus* attribute_float(const EphostAttribute* a, float* out) {
  const auto& p = *from_handle(a)->proto;
  if (p.type() != onnx::AttributeProto::FLOAT) return type_mismatch(p, "FLOAT");
  *out = p.f();
  return nullptr;
}
EphostStatus* attribute_string(const EphostAttribute* a, const char** out, size_t* size) {
  const auto& p = *from_handle(a)->proto;
  if (p.type() != onnx::AttributeProto::STRING) return type_mismatch(p, "STRING");
  *out = p.s().data();
  *size = p.s().size();
  return nullptr;
}
EphostStatus* attribute_ints(const EphostAttribute* a, const int64_t** out, size_t* count) {
  const auto& p = *from_handle(a)->proto;
  if (p.type() != onnx::AttributeProto::INTS) return type_mismatch(p, "INTS");
  static_assert(sizeof(p.ints(0)) == sizeof(int64_t), "protobuf int64 must be int64_t");
  *out = reinterpret_cast<const int64_t*>(p.ints().data());
  *count = static_cast<size_t>(p.ints_size());
  return nullptr;
}
EphostStatus* attribute_floats(const EphostAttribute* a, const float** out, size_t* count) {
  const auto& p = *from_handle(a)->proto;
  if (p.type() != onnx::AttributeProto::FLOATS) return type_mismatch(p, "FLOATS");
  *out = p.floats().data();
  *count = static_cast<size_t>(p.floats_size());
  return nullptr;
}
size_t attribute_num_strings(const EphostAttribute* a) {
  const auto& p = *from_handle(a)->proto;
  return p.type() == onnx::AttributeProto::STRINGS ? static_cast<size_t>(p.strings_size()) : 0;
}
EphostStatus* attribute_string_at(const EphostAttribute* a, size_t i, const char** out, size_t* size) {
  const auto& p = *from_handle(a)->proto;
  if (p.type() != onnx::AttributeProto::STRINGS) return type_mismatch(p, "STRINGS");
  if (i >= static_cast<size_t>(p.strings_size()))
    return make_status(EPHOST_INVALID_ARGUMENT, "attribute '" + p.name() + "' has no string " + std::to_string(i));
  *out = p.strings(static_cast<int>(i)).data();
  *size = p.strings(static_cast<int>(i)).size();
  return nullptr;
}
EphostStatus* attribute_tensor(const EphostAttribute* a, EphostTensorView* out) {
  const auto* ref = from_handle(a);
  if (ref->proto->type() != onnx::AttributeProto::TENSOR || !ref->tensor) return type_mismatch(*ref->proto, "TENSOR");
  *out = ref->tensor->view();
  return nullptr;
}

// ---- value info ----
const char* value_name(const EphostValueInfo* v) { return from_handle(v)->name.c_str(); }
int32_t value_elem_type(const EphostValueInfo* v) { return from_handle(v)->type.elem_type; }
int64_t value_rank(const EphostValueInfo* v) {
  const Value* value = from_handle(v);
  if (value->initializer) return static_cast<int64_t>(value->initializer->shape().size());
  return value->type.has_shape ? static_cast<int64_t>(value->type.dims.size()) : -1;
}
int64_t value_dim(const EphostValueInfo* v, size_t i) {
  const Value* value = from_handle(v);
  if (value->initializer) return i < value->initializer->shape().size() ? value->initializer->shape()[i] : -1;
  return i < value->type.dims.size() ? value->type.dims[i] : -1;
}
const char* value_dim_param(const EphostValueInfo* v, size_t i) {
  const Value* value = from_handle(v);
  return i < value->type.dim_params.size() ? value->type.dim_params[i].c_str() : "";
}
const EphostNode* value_producer(const EphostValueInfo* v) {
  const Value* value = from_handle(v);
  return value->producer ? to_handle(value->producer) : nullptr;
}
size_t value_num_consumers(const EphostValueInfo* v) { return from_handle(v)->consumers.size(); }
const EphostNode* value_consumer(const EphostValueInfo* v, size_t i) {
  const Value* value = from_handle(v);
  return i < value->consumers.size() ? to_handle(value->consumers[i]) : nullptr;
}
int value_is_graph_input(const EphostValueInfo* v) { return from_handle(v)->is_graph_input ? 1 : 0; }
int value_is_graph_output(const EphostValueInfo* v) { return from_handle(v)->is_graph_output ? 1 : 0; }
int value_is_constant_initializer(const EphostValueInfo* v) {
  return from_handle(v)->is_constant_initializer() ? 1 : 0;
}
int value_is_outer_scope(const EphostValueInfo* v) { return from_handle(v)->is_outer_scope() ? 1 : 0; }
EphostStatus* value_initializer_data(const EphostValueInfo* v, EphostTensorView* out) {
  const Value* value = from_handle(v);
  if (!value->is_constant_initializer())
    return make_status(EPHOST_INVALID_ARGUMENT, "value '" + value->name + "' is not a constant initializer");
  *out = value->initializer->view();
  return nullptr;
}

// ---- capability ----
EphostStatus* check_node_in_graph(const EphostCapability* c, const Node* node) {
  if (!node) return make_status(EPHOST_INVALID_ARGUMENT, "claimed a NULL node");
  if (node->owner != c->graph->graph)
    return make_status(EPHOST_INVALID_ARGUMENT, "claimed node '" + node->name + "' which is not in graph '" +
                                                    c->graph->name + "'");
  return nullptr;
}
EphostStatus* capability_add_node(EphostCapability* c, const EphostNode* n) {
  return guard([&] {
    const Node* node = from_handle(n);
    if (EphostStatus* s = check_node_in_graph(c, node)) {
      Error e(s->code, s->message);
      delete s;
      throw e;
    }
    c->claims.push_back({false, {node}});
  });
}
EphostStatus* capability_add_fused_group(EphostCapability* c, const EphostNode* const* nodes, size_t count) {
  return guard([&] {
    if (count == 0) fail(EPHOST_INVALID_ARGUMENT, "claimed an empty fused group");
    EphostCapability::Claim claim;
    claim.fused = true;
    for (size_t i = 0; i < count; ++i) {
      const Node* node = from_handle(nodes[i]);
      if (EphostStatus* s = check_node_in_graph(c, node)) {
        Error e(s->code, s->message);
        delete s;
        throw e;
      }
      claim.nodes.push_back(node);
    }
    c->claims.push_back(std::move(claim));
  });
}

// ---- kernel context ----
size_t kernel_num_inputs(const EphostKernelContext* c) { return c->num_inputs(); }
EphostStatus* kernel_input(const EphostKernelContext* c, size_t i, EphostTensorView* out) {
  return guard([&] {
    if (i >= c->num_inputs()) fail(EPHOST_INVALID_ARGUMENT, "input {} requested, the node has {}", i, c->num_inputs());
    const Tensor* t = c->input(i);
    *out = t ? t->view() : EphostTensorView{EPHOST_ELEMENT_UNDEFINED, 0, nullptr, nullptr};
  });
}
size_t kernel_num_outputs(const EphostKernelContext* c) { return c->num_outputs(); }
EphostStatus* kernel_output(EphostKernelContext* c, size_t i, int32_t elem_type, const int64_t* shape, size_t rank,
                            void** out) {
  return guard([&] {
    if (rank > 0 && !shape) fail(EPHOST_INVALID_ARGUMENT, "output {}: NULL shape with rank {}", i, rank);
    std::vector<int64_t> dims(shape, shape + rank);
    *out = c->allocate_output(i, elem_type, std::move(dims)).data();
  });
}
EphostStatus* kernel_output_string(EphostKernelContext* c, size_t i, const char* data, size_t size, const char** out) {
  return guard([&] {
    Tensor* t = c->allocated_output(i);
    if (!t) fail(EPHOST_INVALID_ARGUMENT, "output {} must be allocated with kernel_output first", i);
    if (t->elem_type() != EPHOST_ELEMENT_STRING) fail(EPHOST_INVALID_ARGUMENT, "output {} is not a string tensor", i);
    *out = t->intern_string(data ? data : "", data ? size : 0);
  });
}
int32_t kernel_num_threads(const EphostKernelContext* c) { return c->num_threads(); }
EphostStatus* kernel_run_subgraph(EphostKernelContext* c, const char* attribute, const EphostTensorView* inputs,
                                  size_t num_inputs, EphostValue** outputs, size_t num_outputs) {
  return guard([&] {
    if (!attribute) fail(EPHOST_INVALID_ARGUMENT, "kernel_run_subgraph: NULL attribute name");
    std::vector<Tensor> bound;
    bound.reserve(num_inputs);
    for (size_t i = 0; i < num_inputs; ++i) {
      const EphostTensorView& v = inputs[i];
      // The plugin's buffers are only valid during the call; the subgraph run finishes inside it.
      bound.push_back(Tensor::borrow(v.elem_type, std::vector<int64_t>(v.shape, v.shape + v.rank),
                                     const_cast<void*>(v.data)));
    }
    std::vector<Tensor> results = c->run_subgraph(attribute, std::move(bound));
    if (results.size() != num_outputs)
      fail(EPHOST_INVALID_ARGUMENT, "subgraph '{}' has {} outputs, {} requested", attribute, results.size(),
           num_outputs);
    for (size_t i = 0; i < num_outputs; ++i) outputs[i] = new EphostValue{std::move(results[i])};
  });
}
EphostStatus* value_tensor(const EphostValue* v, EphostTensorView* out) {
  if (!v) return make_status(EPHOST_INVALID_ARGUMENT, "value_tensor: NULL value");
  *out = v->tensor.view();
  return nullptr;
}
void value_release(EphostValue* v) { delete v; }

// ---- EPContext sink ----
EphostStatus* context_set_blob(EphostContextSink* sink, const void* data, size_t size) {
  if (!sink) return make_status(EPHOST_INVALID_ARGUMENT, "context_set_blob: NULL sink");
  if (!data && size) return make_status(EPHOST_INVALID_ARGUMENT, "context_set_blob: NULL data with a non-zero size");
  return guard([&] {
    const uint8_t* p = static_cast<const uint8_t*>(data);
    sink->pieces.emplace_back(p, p + size);
  });
}
EphostStatus* context_set_attribute(EphostContextSink* sink, const char* name, const char* value) {
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

}  // namespace

EphostHostApi make_host_api(uint32_t abi_version) {
  EphostHostApi t{};
  t.struct_size = sizeof(EphostHostApi);
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
  return t;
}

void index_node_attributes(Graph& graph) {
  for (auto& node : graph.nodes) {
    node->attributes.clear();
    if (node->proto) {
      for (const auto& a : node->proto->attribute()) {
        Node::AttributeRef ref;
        ref.proto = &a;
        auto it = node->tensor_attributes.find(a.name());
        if (it != node->tensor_attributes.end()) ref.tensor = it->second.get();
        node->attributes.push_back(ref);
      }
    }
    for (auto& sub : node->subgraphs) index_node_attributes(*sub.second);
  }
}

}  // namespace ephost
