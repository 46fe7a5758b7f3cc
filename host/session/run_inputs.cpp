#include "session/run_inputs.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"

namespace ephost {
namespace {

std::string describe_value(const Value& v) {
  if (v.type.is_non_tensor()) {
    const bool optional = v.type.kind == EPHOST_VALUE_OPTIONAL;
    const bool sequence = v.type.kind == EPHOST_VALUE_SEQUENCE || v.type.optional_kind == EPHOST_VALUE_SEQUENCE;
    return fmt::format("'{}' ({}{}{})", v.name, optional ? "optional " : "", sequence ? "sequence of " : "",
                       element_type_name(v.type.tensor_elem_type));
  }
  std::string dims;
  if (v.type.has_shape) {
    dims = " [";
    for (size_t i = 0; i < v.type.dims.size(); ++i) {
      if (i) dims += ",";
      bool named = i < v.type.dim_params.size() && !v.type.dim_params[i].empty();
      dims += v.type.dims[i] >= 0 ? std::to_string(v.type.dims[i]) : (named ? v.type.dim_params[i] : "?");
    }
    dims += "]";
  }
  return fmt::format("'{}' ({}{})", v.name, element_type_name(v.type.elem_type), dims);
}

std::string list_values(const std::vector<Value*>& values) {
  std::string s;
  for (const Value* v : values) s += (s.empty() ? "" : ", ") + describe_value(*v);
  return s.empty() ? "none" : s;
}

std::string override_note(const std::vector<OverriddenDimension>& overridden, const std::string& input, size_t axis) {
  for (const OverriddenDimension& o : overridden)
    if (o.input == input && o.axis == axis)
      return fmt::format(" (fixed by the session option {}={}: feed that size, or create the session with "
                         "another value or without the override)",
                         o.key, o.value);
  return {};
}

// Throws unless `value` fits `v`'s declared type: kind, element type, and for tensors the shape.
void check_input(const Value& v, const RuntimeValue& value, const std::vector<OverriddenDimension>& overridden) {
  const TypeInfo& type = v.type;
  const int32_t kind = type.kind;
  if (!value.is_set()) fail(EPHOST_INVALID_ARGUMENT, "input {} is given no value", describe_value(v));
  if (kind == EPHOST_VALUE_UNDEFINED) return;  // no declared type (only a model built without one)
  if (kind == EPHOST_VALUE_SEQUENCE || (kind == EPHOST_VALUE_OPTIONAL && type.optional_kind == EPHOST_VALUE_SEQUENCE)) {
    if (value.is_none() && kind == EPHOST_VALUE_OPTIONAL) return;
    if (!value.is_sequence())
      fail(EPHOST_INVALID_ARGUMENT, "input '{}' is declared a {} of {} tensors, got a {}", v.name,
           kind == EPHOST_VALUE_OPTIONAL ? "optional sequence" : "sequence", element_type_name(type.tensor_elem_type),
           value.describe());
    const int32_t et = value.sequence().elem_type;
    if (type.tensor_elem_type != 0 && et != type.tensor_elem_type)
      fail(EPHOST_INVALID_ARGUMENT, "input '{}': expected a sequence of {} tensors, got one of {} tensors", v.name,
           element_type_name(type.tensor_elem_type), element_type_name(et));
    return;
  }
  if (kind == EPHOST_VALUE_OPTIONAL) {
    if (value.is_none()) return;
    if (!value.is_tensor() && type.optional_kind == EPHOST_VALUE_TENSOR)
      fail(EPHOST_INVALID_ARGUMENT, "input '{}' is declared an optional {} tensor, got a {}", v.name,
           element_type_name(type.tensor_elem_type), value.describe());
    if (value.is_tensor() && type.tensor_elem_type != 0 && value.tensor().elem_type() != type.tensor_elem_type)
      fail(EPHOST_INVALID_ARGUMENT, "input '{}': expected element type {}, got {}", v.name,
           element_type_name(type.tensor_elem_type), element_type_name(value.tensor().elem_type()));
    return;
  }
  if (!value.is_tensor())
    fail(EPHOST_INVALID_ARGUMENT, "input {} is a tensor, got a {}", describe_value(v), value.describe());
  const Tensor& t = value.tensor();
  if (type.elem_type != 0 && t.elem_type() != type.elem_type)
    fail(EPHOST_INVALID_ARGUMENT, "input '{}': expected element type {}, got {}", v.name,
         element_type_name(type.elem_type), element_type_name(t.elem_type()));
  if (type.has_shape) {
    if (t.shape().size() != type.dims.size())
      fail(EPHOST_INVALID_ARGUMENT, "input {}: expected rank {}, got shape {}", describe_value(v), type.dims.size(),
           shape_to_string(t.shape()));
    for (size_t d = 0; d < t.shape().size(); ++d)
      if (type.dims[d] >= 0 && type.dims[d] != t.shape()[d])
        fail(EPHOST_INVALID_ARGUMENT, "input {}: dimension {} must be {}, got shape {}{}", describe_value(v), d,
             type.dims[d], shape_to_string(t.shape()), override_note(overridden, v.name, d));
  }
}

}  // namespace

std::vector<std::pair<const Value*, RuntimeValue>> bind_run_inputs(const Graph& g, const std::vector<std::string>& names,
                                                                   const std::vector<RuntimeValue>& values,
                                                                   const std::vector<OverriddenDimension>& overridden) {
  if (names.size() != values.size())
    fail(EPHOST_INVALID_ARGUMENT, "{} input names but {} input values", names.size(), values.size());
  std::vector<const RuntimeValue*> bound(g.values.size(), nullptr);
  for (size_t i = 0; i < names.size(); ++i) {
    const Value* v = g.find(names[i]);
    if (!v || !v->is_graph_input)
      fail(EPHOST_INVALID_ARGUMENT, "unknown input '{}'; the model's inputs are: {}", names[i], list_values(g.required_inputs()));
    if (bound[v->index]) fail(EPHOST_INVALID_ARGUMENT, "input '{}' is given twice", names[i]);
    check_input(*v, values[i], overridden);
    bound[v->index] = &values[i];
  }
  std::vector<std::pair<const Value*, RuntimeValue>> feeds;
  std::vector<std::string> missing;
  for (const Value* v : g.inputs) {
    if (bound[v->index])
      feeds.emplace_back(v, *bound[v->index]);
    else if (!v->initializer)
      missing.push_back(describe_value(*v));
  }
  if (!missing.empty()) {
    std::string m;
    for (const auto& s : missing) m += (m.empty() ? "" : ", ") + s;
    fail(EPHOST_INVALID_ARGUMENT, "missing input(s): {}", m);
  }
  return feeds;
}

std::vector<size_t> pick_run_outputs(const Graph& g, const std::vector<std::string>& names) {
  std::vector<size_t> picks;
  if (names.empty()) {
    for (size_t i = 0; i < g.outputs.size(); ++i) picks.push_back(i);
    return picks;
  }
  for (const std::string& name : names) {
    auto it = std::find_if(g.outputs.begin(), g.outputs.end(), [&](const Value* v) { return v->name == name; });
    if (it == g.outputs.end())
      fail(EPHOST_INVALID_ARGUMENT, "unknown output '{}'; the model's outputs are: {}", name, list_values(g.outputs));
    picks.push_back(static_cast<size_t>(it - g.outputs.begin()));
  }
  return picks;
}

}  // namespace ephost
