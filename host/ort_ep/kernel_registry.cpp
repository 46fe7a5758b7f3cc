#include "ort_ep/kernel_registry.h"

#include <fmt/format.h>
#include <onnx/defs/schema.h>

#include <algorithm>

#include "model/model.h"

namespace ephost::ort_ep {
namespace {

// ONNX Runtime names the default domain both "" and "ai.onnx".
std::string canonical_domain(const std::string& domain) { return domain == "ai.onnx" ? std::string() : domain; }

const Model* model_of(const Node& node) {
  const Graph* g = node.owner;
  while (g && g->parent_graph) g = g->parent_graph;
  return g ? g->model : nullptr;
}

const onnx::OpSchema* schema_of(const Node& node) {
  const Model* model = model_of(node);
  if (!model) return nullptr;
  const int64_t opset = model->opset(node.domain);
  if (opset < 0) return nullptr;
  return onnx::OpSchemaRegistry::Schema(node.op_type, static_cast<int>(opset),
                                        node.domain.empty() ? onnx::ONNX_DOMAIN : node.domain);
}

const char* elem_name(int32_t elem) { return EphostElementTypeName(elem); }

// Whether the node's values bound to type parameter `param` (by the schema's formal inputs and outputs)
// are all of an element type in `allowed`; `why_not` names the first that is not.
bool satisfies(const onnx::OpSchema& schema, const Node& node, const std::string& param,
               const std::vector<ONNXTensorElementDataType>& allowed, std::string* why_not) {
  auto check = [&](const std::vector<onnx::OpSchema::FormalParameter>& formals, const std::vector<Value*>& actual,
                   const char* side) {
    for (size_t i = 0; i < actual.size(); ++i) {
      if (formals.empty()) return true;
      const bool variadic_tail = formals.back().GetOption() == onnx::OpSchema::Variadic;
      if (i >= formals.size() && !variadic_tail) break;
      const auto& formal = formals[std::min(i, formals.size() - 1)];
      if (formal.GetTypeStr() != param || !actual[i]) continue;
      const TypeInfo& type = actual[i]->type;
      const bool ok = type.is_tensor() && type.elem_type != 0 &&
                      std::find(allowed.begin(), allowed.end(), static_cast<ONNXTensorElementDataType>(
                                                                    type.elem_type)) != allowed.end();
      if (!ok) {
        std::string allowed_names;
        for (ONNXTensorElementDataType t : allowed)
          allowed_names += (allowed_names.empty() ? "" : ", ") + std::string(elem_name(t));
        *why_not = fmt::format("its type constraint {} allows {{{}}}, and {} {} '{}' is {}", param, allowed_names, side,
                               i, actual[i]->name,
                               !type.is_tensor() ? "not a tensor"
                               : type.elem_type == 0 ? "of an unknown element type"
                                                     : elem_name(type.elem_type));
        return false;
      }
    }
    return true;
  };
  return check(schema.inputs(), node.inputs, "input") && check(schema.outputs(), node.outputs, "output");
}

// Why `entry` does not run `node` ("" when it does), checked in ONNX Runtime's order.
std::string mismatch(const OrtKernelRegistry::Entry& entry, const std::string& ep_name, const Node& node,
                     int since_version, const onnx::OpSchema* schema) {
  const OrtKernelDef& def = entry.def;
  if (!def.ep_name.empty() && def.ep_name != ep_name)
    return fmt::format("its kernel for {} is registered for EP '{}', not '{}'", def.op_type, def.ep_name, ep_name);
  if (since_version < def.since_version_start || since_version > def.since_version_end)
    return fmt::format("its kernels for {} cover since-versions {} to {}, and the node's operator is version {}",
                       def.op_type, def.since_version_start,
                       def.since_version_end == INT_MAX ? std::string("any later") : std::to_string(def.since_version_end),
                       since_version);
  if (def.type_constraints.empty()) return "";
  if (!schema)
    return fmt::format("its kernel for {} has type constraints, and ephost knows no schema for {} (domain '{}') to "
                       "bind them to the node's values",
                       def.op_type, node.op_type, node.domain);
  std::string why;
  for (const auto& [param, allowed] : def.type_constraints)
    if (!satisfies(*schema, node, param, allowed, &why)) return fmt::format("its kernel for {}: {}", def.op_type, why);
  return "";
}

}  // namespace

int node_since_version(const Node& node) {
  if (const onnx::OpSchema* schema = schema_of(node)) return schema->since_version();
  const Model* model = model_of(node);
  return model ? static_cast<int>(model->opset(node.domain)) : -1;
}

const OrtKernelRegistry::Entry* find_kernel(const OrtKernelRegistry& registry, const std::string& ep_name,
                                            const Node& node, std::string* why_not) {
  const std::string domain = canonical_domain(node.domain);
  const int since_version = node_since_version(node);
  const onnx::OpSchema* schema = schema_of(node);
  std::string first_reason;
  for (const OrtKernelRegistry::Entry& entry : registry.kernels) {
    if (entry.def.op_type != node.op_type || canonical_domain(entry.def.domain) != domain) continue;
    std::string reason = mismatch(entry, ep_name, node, since_version, schema);
    if (reason.empty()) return &entry;
    if (first_reason.empty()) first_reason = std::move(reason);
  }
  if (why_not)
    *why_not = first_reason.empty()
                   ? fmt::format("its kernel registry has no kernel for {} (domain '{}')", node.op_type,
                                 domain.empty() ? "ai.onnx" : domain)
                   : first_reason;
  return nullptr;
}

}  // namespace ephost::ort_ep
