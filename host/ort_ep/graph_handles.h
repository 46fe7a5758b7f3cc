// How ONNX Runtime's graph handles map onto ephost's IR, which plugins read directly (as ephost's own
// plugins do through the EphostGraph handles): an OrtGraph is a GraphView, an OrtNode a Node (or a node
// the plugin made with OrtModelEditorApi::CreateNode), an OrtValueInfo a Value, and an OrtOpAttr a
// Node::AttributeRef (or an attribute made with CreateOpAttr). Each is checked by its tag before use.
#pragma once

#include "graph/graph.h"
#include "ort_ep/ort_abi.h"
#include "ort_ep/ort_objects.h"

namespace ephost::ort_ep {

inline const OrtGraph* to_ort(const GraphView* g) { return reinterpret_cast<const OrtGraph*>(g); }
inline const OrtNode* to_ort(const Node* n) { return reinterpret_cast<const OrtNode*>(n); }
inline const OrtValueInfo* to_ort(const Value* v) { return reinterpret_cast<const OrtValueInfo*>(v); }
inline const OrtOpAttr* to_ort(const Node::AttributeRef* a) { return reinterpret_cast<const OrtOpAttr*>(a); }

// The IR object behind a handle, or nullptr when the handle is not one of that kind.
inline const GraphView* graph_of(const OrtGraph* g) {
  const auto* view = reinterpret_cast<const GraphView*>(g);
  return view && view->handle_tag.valid() ? view : nullptr;
}
inline const Node* node_of(const OrtNode* n) {
  const auto* node = reinterpret_cast<const Node*>(n);
  return node && node->handle_tag.valid() ? node : nullptr;
}
inline const Value* value_info_of(const OrtValueInfo* v) {
  const auto* value = reinterpret_cast<const Value*>(v);
  return value && value->handle_tag.valid() ? value : nullptr;
}
inline const Node::AttributeRef* attribute_of(const OrtOpAttr* a) {
  const auto* attr = reinterpret_cast<const Node::AttributeRef*>(a);
  return attr && attr->handle_tag.valid() ? attr : nullptr;
}
inline OrtEditorNode* editor_node_of(OrtNode* n) { return checked_mut<OrtEditorNode>(n, Magic::kEditorNode); }
inline const OrtEditorAttr* editor_attr_of(const OrtOpAttr* a) {
  return checked<OrtEditorAttr>(a, Magic::kEditorAttr);
}

}  // namespace ephost::ort_ep
