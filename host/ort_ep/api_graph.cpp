// OrtApi entries that read a graph: OrtGraph over a GraphView (a whole graph or a subgraph, or the
// nodes of one fused group during Compile), OrtNode over a Node, OrtValueInfo over a Value, OrtOpAttr
// over a node's attribute. What these return is valid while the graph is (during the plugin call, as
// ONNX Runtime says); type infos and initializer values made for the plugin live in the call's arena.
#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <cstring>

#include "model/initializer_release.h"
#include "ort_ep/api_impl.h"
#include "ort_ep/call_arena.h"
#include "ort_ep/graph_handles.h"
#include "ort_ep/ort_objects.h"

namespace ephost::ort_ep::api {
namespace {

OrtStatus* invalid(const char* function, const std::string& what) {
  return make_status(ORT_INVALID_ARGUMENT, fmt::format("OrtApi::{}: {}", function, what));
}

// Copies `items` into the plugin's array of `capacity`, which must hold them all (ONNX Runtime's
// count-then-fill protocol).
template <typename Out, typename In, typename Convert>
OrtStatus* fill(const char* function, const std::vector<In>& items, Out* out, size_t capacity, Convert convert) {
  if (!out && capacity) return invalid(function, "the array is NULL");
  if (capacity < items.size())
    return invalid(function, fmt::format("the array holds {} entries, {} are needed", capacity, items.size()));
  for (size_t i = 0; i < items.size(); ++i) out[i] = convert(items[i]);
  return nullptr;
}

OrtOpAttrType attr_type(const onnx::AttributeProto& a) {
  switch (a.type()) {
    case onnx::AttributeProto::INT: return ORT_OP_ATTR_INT;
    case onnx::AttributeProto::INTS: return ORT_OP_ATTR_INTS;
    case onnx::AttributeProto::FLOAT: return ORT_OP_ATTR_FLOAT;
    case onnx::AttributeProto::FLOATS: return ORT_OP_ATTR_FLOATS;
    case onnx::AttributeProto::STRING: return ORT_OP_ATTR_STRING;
    case onnx::AttributeProto::STRINGS: return ORT_OP_ATTR_STRINGS;
    case onnx::AttributeProto::GRAPH: return ORT_OP_ATTR_GRAPH;
    case onnx::AttributeProto::TENSOR: return ORT_OP_ATTR_TENSOR;
    default: return ORT_OP_ATTR_UNDEFINED;
  }
}

// ReadOpAttr's protocol: `bytes` are needed; with no buffer the size comes back alone, with a short
// one an error and the size.
OrtStatus* copy_out(const void* src, size_t bytes, void* data, size_t len, size_t* out) {
  *out = bytes;
  if (!data) return nullptr;
  if (len < bytes)
    return invalid("ReadOpAttr", fmt::format("the buffer holds {} bytes, the attribute needs {}", len, bytes));
  if (bytes) std::memcpy(data, src, bytes);
  return nullptr;
}

}  // namespace

// ---- OrtGraph ----

OrtStatus* Graph_GetName(const OrtGraph* graph, const char** graph_name) noexcept {
  const GraphView* g = graph_of(graph);
  if (!g || !graph_name) return invalid("Graph_GetName", "bad graph or out");
  *graph_name = g->name.c_str();
  return nullptr;
}

OrtStatus* Graph_GetModelPath(const OrtGraph* graph, const ORTCHAR_T** model_path) noexcept {
  const GraphView* g = graph_of(graph);
  if (!g || !model_path) return invalid("Graph_GetModelPath", "bad graph or out");
  // "" when the model came from a buffer, as ONNX Runtime answers.
  *model_path = g->graph && g->graph->model ? g->graph->model->path.c_str() : "";
  return nullptr;
}

OrtStatus* Graph_GetOnnxIRVersion(const OrtGraph* graph, int64_t* onnx_ir_version) noexcept {
  const GraphView* g = graph_of(graph);
  if (!g || !onnx_ir_version) return invalid("Graph_GetOnnxIRVersion", "bad graph or out");
  *onnx_ir_version = g->graph && g->graph->model ? g->graph->model->ir_version : 0;
  return nullptr;
}

OrtStatus* Graph_GetNumOperatorSets(const OrtGraph* graph, size_t* num_operator_sets) noexcept {
  const GraphView* g = graph_of(graph);
  if (!g || !num_operator_sets) return invalid("Graph_GetNumOperatorSets", "bad graph or out");
  *num_operator_sets = g->graph && g->graph->model ? g->graph->model->opsets.size() : 0;
  return nullptr;
}

OrtStatus* Graph_GetOperatorSets(const OrtGraph* graph, const char** domains, int64_t* opset_versions,
                                 size_t num_operator_sets) noexcept {
  const GraphView* g = graph_of(graph);
  if (!g || !g->graph || !g->graph->model) return invalid("Graph_GetOperatorSets", "bad graph");
  const auto& opsets = g->graph->model->opsets;
  if ((!domains || !opset_versions) && num_operator_sets) return invalid("Graph_GetOperatorSets", "NULL array");
  if (num_operator_sets < opsets.size())
    return invalid("Graph_GetOperatorSets", fmt::format("the arrays hold {}, {} are needed", num_operator_sets,
                                                        opsets.size()));
  size_t i = 0;
  for (const auto& [domain, version] : opsets) {
    domains[i] = domain.c_str();
    opset_versions[i] = version;
    ++i;
  }
  return nullptr;
}

OrtStatus* Graph_GetNumInputs(const OrtGraph* graph, size_t* num_inputs) noexcept {
  const GraphView* g = graph_of(graph);
  if (!g || !num_inputs) return invalid("Graph_GetNumInputs", "bad graph or out");
  *num_inputs = g->inputs.size();
  return nullptr;
}
OrtStatus* Graph_GetInputs(const OrtGraph* graph, const OrtValueInfo** inputs, size_t num_inputs) noexcept {
  const GraphView* g = graph_of(graph);
  if (!g) return invalid("Graph_GetInputs", "bad graph");
  return fill("Graph_GetInputs", g->inputs, inputs, num_inputs, [](const Value* v) { return to_ort(v); });
}
OrtStatus* Graph_GetNumOutputs(const OrtGraph* graph, size_t* num_outputs) noexcept {
  const GraphView* g = graph_of(graph);
  if (!g || !num_outputs) return invalid("Graph_GetNumOutputs", "bad graph or out");
  *num_outputs = g->outputs.size();
  return nullptr;
}
OrtStatus* Graph_GetOutputs(const OrtGraph* graph, const OrtValueInfo** outputs, size_t num_outputs) noexcept {
  const GraphView* g = graph_of(graph);
  if (!g) return invalid("Graph_GetOutputs", "bad graph");
  return fill("Graph_GetOutputs", g->outputs, outputs, num_outputs, [](const Value* v) { return to_ort(v); });
}
OrtStatus* Graph_GetNumInitializers(const OrtGraph* graph, size_t* num_initializers) noexcept {
  const GraphView* g = graph_of(graph);
  if (!g || !num_initializers) return invalid("Graph_GetNumInitializers", "bad graph or out");
  *num_initializers = g->initializers.size();
  return nullptr;
}
OrtStatus* Graph_GetInitializers(const OrtGraph* graph, const OrtValueInfo** initializers,
                                 size_t num_initializers) noexcept {
  const GraphView* g = graph_of(graph);
  if (!g) return invalid("Graph_GetInitializers", "bad graph");
  return fill("Graph_GetInitializers", g->initializers, initializers, num_initializers,
              [](const Value* v) { return to_ort(v); });
}
OrtStatus* Graph_GetNumNodes(const OrtGraph* graph, size_t* num_nodes) noexcept {
  const GraphView* g = graph_of(graph);
  if (!g || !num_nodes) return invalid("Graph_GetNumNodes", "bad graph or out");
  *num_nodes = g->nodes.size();
  return nullptr;
}
OrtStatus* Graph_GetNodes(const OrtGraph* graph, const OrtNode** nodes, size_t num_nodes) noexcept {
  const GraphView* g = graph_of(graph);
  if (!g) return invalid("Graph_GetNodes", "bad graph");
  return fill("Graph_GetNodes", g->nodes, nodes, num_nodes, [](const Node* n) { return to_ort(n); });
}
OrtStatus* Graph_GetParentNode(const OrtGraph* graph, const OrtNode** node) noexcept {
  const GraphView* g = graph_of(graph);
  if (!g || !node) return invalid("Graph_GetParentNode", "bad graph or out");
  *node = g->parent_node ? to_ort(g->parent_node) : nullptr;
  return nullptr;
}

// ---- OrtNode ----

OrtStatus* Node_GetId(const OrtNode* node, size_t* node_id) noexcept {
  const Node* n = node_of(node);
  if (!n || !node_id) return invalid("Node_GetId", "bad node or out");
  *node_id = n->index;
  return nullptr;
}
OrtStatus* Node_GetName(const OrtNode* node, const char** node_name) noexcept {
  const Node* n = node_of(node);
  if (!n || !node_name) return invalid("Node_GetName", "bad node or out");
  *node_name = n->name.c_str();
  return nullptr;
}
OrtStatus* Node_GetOperatorType(const OrtNode* node, const char** operator_type) noexcept {
  const Node* n = node_of(node);
  if (!n || !operator_type) return invalid("Node_GetOperatorType", "bad node or out");
  *operator_type = n->op_type.c_str();
  return nullptr;
}
OrtStatus* Node_GetDomain(const OrtNode* node, const char** domain_name) noexcept {
  const Node* n = node_of(node);
  if (!n || !domain_name) return invalid("Node_GetDomain", "bad node or out");
  *domain_name = n->domain.c_str();
  return nullptr;
}
OrtStatus* Node_GetNumInputs(const OrtNode* node, size_t* num_inputs) noexcept {
  const Node* n = node_of(node);
  if (!n || !num_inputs) return invalid("Node_GetNumInputs", "bad node or out");
  *num_inputs = n->inputs.size();
  return nullptr;
}
OrtStatus* Node_GetInputs(const OrtNode* node, const OrtValueInfo** inputs, size_t num_inputs) noexcept {
  const Node* n = node_of(node);
  if (!n) return invalid("Node_GetInputs", "bad node");
  // An omitted optional input is NULL, as in ONNX Runtime.
  return fill("Node_GetInputs", n->inputs, inputs, num_inputs, [](const Value* v) { return to_ort(v); });
}
OrtStatus* Node_GetNumOutputs(const OrtNode* node, size_t* num_outputs) noexcept {
  const Node* n = node_of(node);
  if (!n || !num_outputs) return invalid("Node_GetNumOutputs", "bad node or out");
  *num_outputs = n->outputs.size();
  return nullptr;
}
OrtStatus* Node_GetOutputs(const OrtNode* node, const OrtValueInfo** outputs, size_t num_outputs) noexcept {
  const Node* n = node_of(node);
  if (!n) return invalid("Node_GetOutputs", "bad node");
  return fill("Node_GetOutputs", n->outputs, outputs, num_outputs, [](const Value* v) { return to_ort(v); });
}
OrtStatus* Node_GetNumImplicitInputs(const OrtNode* node, size_t* num_implicit_inputs) noexcept {
  const Node* n = node_of(node);
  if (!n || !num_implicit_inputs) return invalid("Node_GetNumImplicitInputs", "bad node or out");
  *num_implicit_inputs = n->implicit_inputs.size();
  return nullptr;
}
OrtStatus* Node_GetImplicitInputs(const OrtNode* node, const OrtValueInfo** implicit_inputs,
                                  size_t num_implicit_inputs) noexcept {
  const Node* n = node_of(node);
  if (!n) return invalid("Node_GetImplicitInputs", "bad node");
  return fill("Node_GetImplicitInputs", n->implicit_inputs, implicit_inputs, num_implicit_inputs,
              [](const Value* v) { return to_ort(v); });
}
OrtStatus* Node_GetNumAttributes(const OrtNode* node, size_t* num_attributes) noexcept {
  const Node* n = node_of(node);
  if (!n || !num_attributes) return invalid("Node_GetNumAttributes", "bad node or out");
  *num_attributes = n->attributes.size();
  return nullptr;
}
OrtStatus* Node_GetAttributes(const OrtNode* node, const OrtOpAttr** attributes, size_t num_attributes) noexcept {
  const Node* n = node_of(node);
  if (!n) return invalid("Node_GetAttributes", "bad node");
  if (!attributes && num_attributes) return invalid("Node_GetAttributes", "the array is NULL");
  if (num_attributes < n->attributes.size())
    return invalid("Node_GetAttributes", fmt::format("the array holds {}, {} are needed", num_attributes,
                                                     n->attributes.size()));
  for (size_t i = 0; i < n->attributes.size(); ++i) attributes[i] = to_ort(&n->attributes[i]);
  return nullptr;
}
OrtStatus* Node_GetAttributeByName(const OrtNode* node, const char* attribute_name,
                                   const OrtOpAttr** attribute) noexcept {
  const Node* n = node_of(node);
  if (!n || !attribute_name || !attribute) return invalid("Node_GetAttributeByName", "bad node, name or out");
  for (const auto& a : n->attributes)
    if (a.proto && a.proto->name() == attribute_name) {
      *attribute = to_ort(&a);
      return nullptr;
    }
  // ONNX Runtime: NULL and ORT_NOT_FOUND for an attribute the node does not have.
  *attribute = nullptr;
  return make_status(ORT_NOT_FOUND, fmt::format("node '{}' has no attribute '{}'", n->name, attribute_name));
}
OrtStatus* Node_GetNumSubgraphs(const OrtNode* node, size_t* num_subgraphs) noexcept {
  const Node* n = node_of(node);
  if (!n || !num_subgraphs) return invalid("Node_GetNumSubgraphs", "bad node or out");
  *num_subgraphs = n->subgraphs.size();
  return nullptr;
}
OrtStatus* Node_GetSubgraphs(const OrtNode* node, const OrtGraph** subgraphs, size_t num_subgraphs,
                             const char** attribute_names) noexcept {
  const Node* n = node_of(node);
  if (!n) return invalid("Node_GetSubgraphs", "bad node");
  if (!subgraphs && num_subgraphs) return invalid("Node_GetSubgraphs", "the array is NULL");
  if (num_subgraphs < n->subgraphs.size())
    return invalid("Node_GetSubgraphs", fmt::format("the array holds {}, {} are needed", num_subgraphs,
                                                    n->subgraphs.size()));
  for (size_t i = 0; i < n->subgraphs.size(); ++i) {
    subgraphs[i] = to_ort(n->subgraphs[i].second->view.get());
    if (attribute_names) attribute_names[i] = n->subgraphs[i].first.c_str();
  }
  return nullptr;
}
OrtStatus* Node_GetGraph(const OrtNode* node, const OrtGraph** graph) noexcept {
  const Node* n = node_of(node);
  if (!n || !graph) return invalid("Node_GetGraph", "bad node or out");
  *graph = n->owner && n->owner->view ? to_ort(n->owner->view.get()) : nullptr;
  return nullptr;
}
OrtStatus* Node_GetEpName(const OrtNode* node, const char** out) noexcept {
  if (!node_of(node) || !out) return invalid("Node_GetEpName", "bad node or out");
  // Nodes are not assigned while a plugin looks at them (GetCapability, Compile): no EP yet.
  *out = nullptr;
  return nullptr;
}

// ---- OrtOpAttr ----

OrtStatus* OpAttr_GetName(const OrtOpAttr* attribute, const char** name) noexcept {
  if (!name) return invalid("OpAttr_GetName", "out is NULL");
  if (const Node::AttributeRef* a = attribute_of(attribute)) {
    *name = a->proto->name().c_str();
    return nullptr;
  }
  if (const OrtEditorAttr* e = editor_attr_of(attribute)) {
    *name = e->name.c_str();
    return nullptr;
  }
  return invalid("OpAttr_GetName", "bad attribute");
}

OrtStatus* OpAttr_GetType(const OrtOpAttr* attribute, OrtOpAttrType* type) noexcept {
  if (!type) return invalid("OpAttr_GetType", "out is NULL");
  if (const Node::AttributeRef* a = attribute_of(attribute)) {
    *type = attr_type(*a->proto);
    return nullptr;
  }
  if (const OrtEditorAttr* e = editor_attr_of(attribute)) {
    *type = e->type;
    return nullptr;
  }
  return invalid("OpAttr_GetType", "bad attribute");
}

OrtStatus* ReadOpAttr(const OrtOpAttr* op_attr, OrtOpAttrType type, void* data, size_t len, size_t* out) noexcept {
  if (!out) return invalid("ReadOpAttr", "out is NULL");
  const Node::AttributeRef* a = attribute_of(op_attr);
  if (!a) return invalid("ReadOpAttr", "bad attribute (only a graph node's attributes can be read)");
  const onnx::AttributeProto& p = *a->proto;
  if (attr_type(p) != type)
    return invalid("ReadOpAttr", fmt::format("attribute '{}' is not of the type asked for", p.name()));
  try {
    switch (type) {
      case ORT_OP_ATTR_INT: {
        const int64_t v = p.i();
        return copy_out(&v, sizeof v, data, len, out);
      }
      case ORT_OP_ATTR_FLOAT: {
        const float v = p.f();
        return copy_out(&v, sizeof v, data, len, out);
      }
      case ORT_OP_ATTR_INTS: {
        const std::vector<int64_t> v(p.ints().begin(), p.ints().end());
        return copy_out(v.data(), v.size() * sizeof(int64_t), data, len, out);
      }
      case ORT_OP_ATTR_FLOATS: {
        const std::vector<float> v(p.floats().begin(), p.floats().end());
        return copy_out(v.data(), v.size() * sizeof(float), data, len, out);
      }
      case ORT_OP_ATTR_STRING: return copy_out(p.s().data(), p.s().size(), data, len, out);
      case ORT_OP_ATTR_STRINGS: {
        // The strings one after the other, each with its NUL, as ONNX Runtime lays them out.
        std::string joined;
        for (const auto& s : p.strings()) joined.append(s).push_back('\0');
        return copy_out(joined.data(), joined.size(), data, len, out);
      }
      default:
        return invalid("ReadOpAttr", fmt::format("attribute '{}': graphs and tensors are not read with ReadOpAttr",
                                                 p.name()));
    }
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, e.what());
  }
}

// ---- OrtValueInfo ----

OrtStatus* GetValueInfoName(const OrtValueInfo* value_info, const char** name) noexcept {
  const Value* v = value_info_of(value_info);
  if (!v || !name) return invalid("GetValueInfoName", "bad value info or out");
  *name = v->name.c_str();
  return nullptr;
}

OrtStatus* GetValueInfoTypeInfo(const OrtValueInfo* value_info, const OrtTypeInfo** type_info) noexcept {
  const Value* v = value_info_of(value_info);
  if (!v || !type_info) return invalid("GetValueInfoTypeInfo", "bad value info or out");
  try {
    // The host's, for the call: the plugin does not release it.
    *type_info = CallArena::keep(std::make_unique<OrtTypeInfo>(type_info_of(v->type)));
    return nullptr;
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, e.what());
  }
}

OrtStatus* ValueInfo_GetValueProducer(const OrtValueInfo* value_info, const OrtNode** producer_node,
                                      size_t* producer_output_index) noexcept {
  const Value* v = value_info_of(value_info);
  if (!v || !producer_node) return invalid("ValueInfo_GetValueProducer", "bad value info or out");
  *producer_node = v->producer ? to_ort(v->producer) : nullptr;
  if (producer_output_index) *producer_output_index = v->producer ? v->producer_output : 0;
  return nullptr;
}

OrtStatus* ValueInfo_GetValueNumConsumers(const OrtValueInfo* value_info, size_t* num_consumers) noexcept {
  const Value* v = value_info_of(value_info);
  if (!v || !num_consumers) return invalid("ValueInfo_GetValueNumConsumers", "bad value info or out");
  // One entry per input slot that reads the value (a node reading it twice counts twice), as ONNX Runtime.
  size_t count = 0;
  for (const Node* c : v->consumers)
    for (const Value* in : c->inputs) count += in == v;
  *num_consumers = count;
  return nullptr;
}

OrtStatus* ValueInfo_GetValueConsumers(const OrtValueInfo* value_info, const OrtNode** nodes, int64_t* input_indices,
                                       size_t num_consumers) noexcept {
  const Value* v = value_info_of(value_info);
  if (!v || ((!nodes || !input_indices) && num_consumers)) return invalid("ValueInfo_GetValueConsumers", "bad args");
  size_t k = 0;
  for (const Node* c : v->consumers)
    for (size_t i = 0; i < c->inputs.size(); ++i)
      if (c->inputs[i] == v) {
        if (k >= num_consumers) return invalid("ValueInfo_GetValueConsumers", "the arrays are too short");
        nodes[k] = to_ort(c);
        input_indices[k] = static_cast<int64_t>(i);
        ++k;
      }
  return nullptr;
}

OrtStatus* ValueInfo_GetInitializerValue(const OrtValueInfo* value_info, const OrtValue** initializer_value) noexcept {
  const Value* v = value_info_of(value_info);
  if (!v || !initializer_value) return invalid("ValueInfo_GetInitializerValue", "bad value info or out");
  const Value* source = v->outer ? v->outer : v;
  if (!source->initializer) {
    *initializer_value = nullptr;
    return make_status(ORT_INVALID_ARGUMENT, fmt::format("value '{}' is not an initializer", v->name));
  }
  try {
    auto value = std::make_unique<OrtValue>();
    // Noted before reading back, so that no freeing on another thread takes the bytes again.
    if (InitializerRelease* release = initializer_release_of(*source))
      release->note_handout(source->initializer.get(), {current_initializer_reader(), current_initializer_step()});
    source->initializer->ensure_data();  // freed once its readers were done (model/initializer_release.h)
    value->tensor = source->initializer.get();  // the graph's: alive as long as the graph
    *initializer_value = CallArena::keep(std::move(value));
    return nullptr;
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, e.what());
  }
}

OrtStatus* ValueInfo_IsRequiredGraphInput(const OrtValueInfo* value_info, bool* out) noexcept {
  const Value* v = value_info_of(value_info);
  if (!v || !out) return invalid("ValueInfo_IsRequiredGraphInput", "bad value info or out");
  *out = v->is_graph_input && !v->is_initializer();
  return nullptr;
}
OrtStatus* ValueInfo_IsOptionalGraphInput(const OrtValueInfo* value_info, bool* out) noexcept {
  const Value* v = value_info_of(value_info);
  if (!v || !out) return invalid("ValueInfo_IsOptionalGraphInput", "bad value info or out");
  // A graph input with an initializer: the caller may override it.
  *out = v->is_graph_input && v->is_initializer();
  return nullptr;
}
OrtStatus* ValueInfo_IsGraphOutput(const OrtValueInfo* value_info, bool* out) noexcept {
  const Value* v = value_info_of(value_info);
  if (!v || !out) return invalid("ValueInfo_IsGraphOutput", "bad value info or out");
  *out = v->is_graph_output;
  return nullptr;
}
OrtStatus* ValueInfo_IsConstantInitializer(const OrtValueInfo* value_info, bool* out) noexcept {
  const Value* v = value_info_of(value_info);
  if (!v || !out) return invalid("ValueInfo_IsConstantInitializer", "bad value info or out");
  *out = (v->outer ? v->outer : v)->is_constant_initializer();
  return nullptr;
}
OrtStatus* ValueInfo_IsFromOuterScope(const OrtValueInfo* value_info, bool* out) noexcept {
  const Value* v = value_info_of(value_info);
  if (!v || !out) return invalid("ValueInfo_IsFromOuterScope", "bad value info or out");
  *out = v->is_outer_scope();
  return nullptr;
}

}  // namespace ephost::ort_ep::api
