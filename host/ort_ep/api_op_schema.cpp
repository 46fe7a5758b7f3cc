// The OpSchema entries of OrtEpApi (API 25): an EP asks for an ONNX operator's schema (GetOpSchema) and
// reads its inputs, outputs and type constraints, answered from the host's schema registry: onnx's own
// schemas and the newer ones ephost registers (host/opsets), so an EP sees the same operator versions
// the host loads models with.
#include <fmt/format.h>
#include <onnx/defs/schema.h>

#include <memory>
#include <string>
#include <vector>

#include "opsets/opsets.h"
#include "ort_ep/api_impl.h"
#include "ort_ep/ort_objects.h"

// One type parameter of a schema ("T"): the types it allows as onnx spells them ("tensor(float)"), and the
// formal inputs and outputs bound to it.
struct OrtOpSchemaTypeConstraint {
  ephost::ort_ep::Magic magic = ephost::ort_ep::Magic::kOpSchemaTypeConstraint;
  std::string param;
  std::vector<std::string> allowed;
  std::vector<const char*> allowed_pointers;  // into `allowed`, what GetAllowedTypes hands out
  std::vector<size_t> inputs, outputs;
};

// A schema found for an EP (ReleaseOpSchema frees it). The onnx schema lives for the process; the
// constraints are built once, with each formal input's and output's constraint (null when its type is
// fixed, e.g. "tensor(int64)").
struct OrtOpSchema {
  ephost::ort_ep::Magic magic = ephost::ort_ep::Magic::kOpSchema;
  const onnx::OpSchema* schema = nullptr;
  std::vector<OrtOpSchemaTypeConstraint> constraints;
  std::vector<const OrtOpSchemaTypeConstraint*> input_constraints, output_constraints;
};

namespace ephost::ort_ep::api::ep {
namespace {

OrtStatus* invalid(const char* function, const std::string& what) {
  return make_status(ORT_INVALID_ARGUMENT, fmt::format("OrtEpApi::{}: {}", function, what));
}

const OrtOpSchema* schema_of(const OrtOpSchema* schema) { return checked<OrtOpSchema>(schema, Magic::kOpSchema); }
const OrtOpSchemaTypeConstraint* constraint_of(const OrtOpSchemaTypeConstraint* c) {
  return checked<OrtOpSchemaTypeConstraint>(c, Magic::kOpSchemaTypeConstraint);
}

std::unique_ptr<OrtOpSchema> describe(const onnx::OpSchema& schema) {
  auto out = std::make_unique<OrtOpSchema>();
  out->schema = &schema;
  const auto& inputs = schema.inputs();
  const auto& outputs = schema.outputs();
  for (const auto& param : schema.typeConstraintParams()) {
    OrtOpSchemaTypeConstraint& c = out->constraints.emplace_back();
    c.param = param.type_param_str;
    c.allowed = param.allowed_type_strs;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i].GetTypeStr() == c.param) c.inputs.push_back(i);
    for (size_t i = 0; i < outputs.size(); ++i)
      if (outputs[i].GetTypeStr() == c.param) c.outputs.push_back(i);
  }
  // Pointers only once the vector no longer grows.
  out->input_constraints.assign(inputs.size(), nullptr);
  out->output_constraints.assign(outputs.size(), nullptr);
  for (OrtOpSchemaTypeConstraint& c : out->constraints) {
    for (const std::string& s : c.allowed) c.allowed_pointers.push_back(s.c_str());
    for (size_t i : c.inputs) out->input_constraints[i] = &c;
    for (size_t i : c.outputs) out->output_constraints[i] = &c;
  }
  return out;
}

// A formal input's or output's name (`index` checked against `count`).
OrtStatus* formal_name(const char* function, const OrtOpSchema* schema, size_t index, const char** out, bool input) {
  const OrtOpSchema* s = schema_of(schema);
  if (!s || !out) return invalid(function, "bad schema or out");
  const auto& formals = input ? s->schema->inputs() : s->schema->outputs();
  if (index >= formals.size())
    return invalid(function, fmt::format("{} index {} out of range: the schema has {}", input ? "input" : "output",
                                         index, formals.size()));
  *out = formals[index].GetName().c_str();
  return nullptr;
}

OrtStatus* formal_constraint(const char* function, const OrtOpSchema* schema, size_t index,
                             const OrtOpSchemaTypeConstraint** out, bool input) {
  const OrtOpSchema* s = schema_of(schema);
  if (!s || !out) return invalid(function, "bad schema or out");
  const auto& constraints = input ? s->input_constraints : s->output_constraints;
  if (index >= constraints.size())
    return invalid(function, fmt::format("{} index {} out of range: the schema has {}", input ? "input" : "output",
                                         index, constraints.size()));
  *out = constraints[index];
  return nullptr;
}

OrtStatus* indices(const char* function, const OrtOpSchemaTypeConstraint* constraint, const size_t** out,
                   size_t* count, bool input) {
  const OrtOpSchemaTypeConstraint* c = constraint_of(constraint);
  if (!c || !out || !count) return invalid(function, "bad type constraint or out");
  const std::vector<size_t>& v = input ? c->inputs : c->outputs;
  *out = v.empty() ? nullptr : v.data();
  *count = v.size();
  return nullptr;
}

}  // namespace

// The newest schema of `name` in `domain` ("" or "ai.onnx" for ONNX) at or below `max_inclusive_version`;
// *out_schema NULL (and no error) when there is none.
OrtStatus* GetOpSchema(const char* name, int max_inclusive_version, const char* domain,
                       OrtOpSchema** out_schema) noexcept {
  if (!name || !domain || !out_schema) return invalid("GetOpSchema", "name, domain and out_schema must not be NULL");
  try {
    opsets::register_schemas();
    const std::string d = std::string(domain) == "ai.onnx" ? std::string(onnx::ONNX_DOMAIN) : std::string(domain);
    const onnx::OpSchema* found = onnx::OpSchemaRegistry::Schema(name, max_inclusive_version, d);
    *out_schema = found ? describe(*found).release() : nullptr;
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, fmt::format("OrtEpApi::GetOpSchema: {}", e.what()));
  }
  return nullptr;
}

void ReleaseOpSchema(OrtOpSchema* input) noexcept {
  if (schema_of(input)) delete input;
}

OrtStatus* OpSchema_GetSinceVersion(const OrtOpSchema* schema, int* out) noexcept {
  const OrtOpSchema* s = schema_of(schema);
  if (!s || !out) return invalid("OpSchema_GetSinceVersion", "bad schema or out");
  *out = s->schema->SinceVersion();
  return nullptr;
}

OrtStatus* OpSchema_GetNumInputs(const OrtOpSchema* schema, size_t* out) noexcept {
  const OrtOpSchema* s = schema_of(schema);
  if (!s || !out) return invalid("OpSchema_GetNumInputs", "bad schema or out");
  *out = s->schema->inputs().size();
  return nullptr;
}

OrtStatus* OpSchema_GetInputName(const OrtOpSchema* schema, size_t index, const char** out) noexcept {
  return formal_name("OpSchema_GetInputName", schema, index, out, true);
}

OrtStatus* OpSchema_GetInputTypeConstraint(const OrtOpSchema* schema, size_t index,
                                           const OrtOpSchemaTypeConstraint** out) noexcept {
  return formal_constraint("OpSchema_GetInputTypeConstraint", schema, index, out, true);
}

OrtStatus* OpSchema_GetNumOutputs(const OrtOpSchema* schema, size_t* out) noexcept {
  const OrtOpSchema* s = schema_of(schema);
  if (!s || !out) return invalid("OpSchema_GetNumOutputs", "bad schema or out");
  *out = s->schema->outputs().size();
  return nullptr;
}

OrtStatus* OpSchema_GetOutputName(const OrtOpSchema* schema, size_t index, const char** out) noexcept {
  return formal_name("OpSchema_GetOutputName", schema, index, out, false);
}

OrtStatus* OpSchema_GetOutputTypeConstraint(const OrtOpSchema* schema, size_t index,
                                            const OrtOpSchemaTypeConstraint** out) noexcept {
  return formal_constraint("OpSchema_GetOutputTypeConstraint", schema, index, out, false);
}

OrtStatus* OpSchema_GetTypeConstraintCount(const OrtOpSchema* schema, size_t* out) noexcept {
  const OrtOpSchema* s = schema_of(schema);
  if (!s || !out) return invalid("OpSchema_GetTypeConstraintCount", "bad schema or out");
  *out = s->constraints.size();
  return nullptr;
}

OrtStatus* OpSchema_GetTypeConstraint(const OrtOpSchema* schema, size_t index,
                                      const OrtOpSchemaTypeConstraint** out) noexcept {
  const OrtOpSchema* s = schema_of(schema);
  if (!s || !out) return invalid("OpSchema_GetTypeConstraint", "bad schema or out");
  if (index >= s->constraints.size())
    return invalid("OpSchema_GetTypeConstraint", fmt::format("type constraint index {} out of range: the schema has {}",
                                                             index, s->constraints.size()));
  *out = &s->constraints[index];
  return nullptr;
}

OrtStatus* OpSchemaTypeConstraint_GetTypeParamName(const OrtOpSchemaTypeConstraint* type_constraint,
                                                   const char** out) noexcept {
  const OrtOpSchemaTypeConstraint* c = constraint_of(type_constraint);
  if (!c || !out) return invalid("OpSchemaTypeConstraint_GetTypeParamName", "bad type constraint or out");
  *out = c->param.c_str();
  return nullptr;
}

OrtStatus* OpSchemaTypeConstraint_GetAllowedTypes(const OrtOpSchemaTypeConstraint* type_constraint,
                                                  const char* const** out_types, size_t* num_types) noexcept {
  const OrtOpSchemaTypeConstraint* c = constraint_of(type_constraint);
  if (!c || !out_types || !num_types)
    return invalid("OpSchemaTypeConstraint_GetAllowedTypes", "bad type constraint or out");
  *out_types = c->allowed_pointers.data();
  *num_types = c->allowed_pointers.size();
  return nullptr;
}

OrtStatus* OpSchemaTypeConstraint_GetInputIndices(const OrtOpSchemaTypeConstraint* type_constraint,
                                                  const size_t** out_indices, size_t* count) noexcept {
  return indices("OpSchemaTypeConstraint_GetInputIndices", type_constraint, out_indices, count, true);
}

OrtStatus* OpSchemaTypeConstraint_GetOutputIndices(const OrtOpSchemaTypeConstraint* type_constraint,
                                                   const size_t** out_indices, size_t* count) noexcept {
  return indices("OpSchemaTypeConstraint_GetOutputIndices", type_constraint, out_indices, count, false);
}

}  // namespace ephost::ort_ep::api::ep
