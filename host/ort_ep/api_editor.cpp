// OrtModelEditorApi::CreateNode and OrtApi::CreateOpAttr: how a compiling plugin builds the EPContext
// node it returns from Compile. The host reads such nodes back (ep_context_node.h) and never runs them.
#include <fmt/format.h>

#include <cstring>

#include "ort_ep/api_impl.h"
#include "ort_ep/graph_handles.h"
#include "ort_ep/ort_objects.h"

namespace ephost::ort_ep::api {
namespace {

OrtStatus* invalid(const char* function, const std::string& what) {
  return make_status(ORT_INVALID_ARGUMENT, fmt::format("{}: {}", function, what));
}

}  // namespace

OrtStatus* CreateOpAttr(const char* name, const void* data, int len, OrtOpAttrType type, OrtOpAttr** op_attr) noexcept {
  if (!name || !op_attr || len < 0 || (!data && len > 0)) return invalid("OrtApi::CreateOpAttr", "bad arguments");
  try {
    auto attr = std::make_unique<OrtEditorAttr>();
    attr->name = name;
    attr->type = type;
    // `len` counts elements for arrays and bytes for a string, as ONNX Runtime reads it.
    switch (type) {
      case ORT_OP_ATTR_INT:
        if (!data) return invalid("OrtApi::CreateOpAttr", "an INT attribute needs its value");
        attr->i = *static_cast<const int64_t*>(data);
        break;
      case ORT_OP_ATTR_FLOAT:
        if (!data) return invalid("OrtApi::CreateOpAttr", "a FLOAT attribute needs its value");
        attr->f = *static_cast<const float*>(data);
        break;
      case ORT_OP_ATTR_STRING: attr->s.assign(static_cast<const char*>(data), static_cast<size_t>(len)); break;
      case ORT_OP_ATTR_INTS: {
        const auto* p = static_cast<const int64_t*>(data);
        attr->ints.assign(p, p + len);
        break;
      }
      case ORT_OP_ATTR_FLOATS: {
        const auto* p = static_cast<const float*>(data);
        attr->floats.assign(p, p + len);
        break;
      }
      case ORT_OP_ATTR_STRINGS: {
        const auto* p = static_cast<const char* const*>(data);
        for (int i = 0; i < len; ++i) attr->strings.emplace_back(p[i] ? p[i] : "");
        break;
      }
      default:
        return make_status(ORT_NOT_IMPLEMENTED,
                           fmt::format("OrtApi::CreateOpAttr: attribute '{}': type {} is not supported by ephost's "
                                       "ONNX Runtime adapter (INT, INTS, FLOAT, FLOATS, STRING, STRINGS are)",
                                       name, static_cast<int>(type)));
    }
    *op_attr = reinterpret_cast<OrtOpAttr*>(attr.release());
    return nullptr;
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, e.what());
  }
}

void ReleaseOpAttr(OrtOpAttr* input) noexcept {
  // Graph attributes belong to the graph; only the plugin's own are freed.
  if (auto* a = checked_mut<OrtEditorAttr>(input, Magic::kEditorAttr)) delete a;
}

void ReleaseNode(OrtNode* input) noexcept {
  if (OrtEditorNode* n = editor_node_of(input)) delete n;
}

namespace editor {

OrtStatus* CreateNode(const char* operator_name, const char* domain_name, const char* node_name,
                      const char* const* input_names, size_t input_names_len, const char* const* output_names,
                      size_t output_names_len, OrtOpAttr** attributes, size_t attribs_len, OrtNode** node) noexcept {
  static constexpr const char* kWhere = "OrtModelEditorApi::CreateNode";
  if (!operator_name || !domain_name || !node_name || !node) return invalid(kWhere, "a name or out is NULL");
  if ((!input_names && input_names_len) || (!output_names && output_names_len) || (!attributes && attribs_len))
    return invalid(kWhere, "an array is NULL");
  try {
    auto n = std::make_unique<OrtEditorNode>();
    n->op_type = operator_name;
    n->domain = domain_name;
    n->name = node_name;
    for (size_t i = 0; i < input_names_len; ++i) n->inputs.emplace_back(input_names[i] ? input_names[i] : "");
    for (size_t i = 0; i < output_names_len; ++i) n->outputs.emplace_back(output_names[i] ? output_names[i] : "");
    // ONNX Runtime takes the attributes over: the node owns them from here.
    for (size_t i = 0; i < attribs_len; ++i) {
      auto* a = checked_mut<OrtEditorAttr>(attributes[i], Magic::kEditorAttr);
      if (!a) return invalid(kWhere, fmt::format("attribute {} was not made with OrtApi::CreateOpAttr", i));
    }
    for (size_t i = 0; i < attribs_len; ++i) {
      auto* a = checked_mut<OrtEditorAttr>(attributes[i], Magic::kEditorAttr);
      n->attributes.push_back(std::move(*a));
      delete a;
      attributes[i] = nullptr;
    }
    *node = reinterpret_cast<OrtNode*>(n.release());
    return nullptr;
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, e.what());
  }
}

}  // namespace editor
}  // namespace ephost::ort_ep::api
