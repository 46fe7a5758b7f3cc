#include "opsets/schema_util.h"

#include "opsets/new_type_names.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "opsets/opsets.h"

namespace ephost::opsets {

bool has_input(onnx::InferenceContext& ctx, size_t i) {
  return i < ctx.getNumInputs() && ctx.getInputType(i) != nullptr;
}

namespace {

template <typename T>
std::vector<T> read_raw(const std::string& raw) {
  std::vector<T> v(raw.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), raw.data(), v.size() * sizeof(T));
  return v;
}

float half_to_float(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal
      int e = -1;
      uint32_t m = mant;
      do {
        ++e;
        m <<= 1;
      } while (!(m & 0x400));
      bits = sign | ((127 - 15 - e) << 23) | ((m & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace

std::optional<std::vector<int64_t>> constant_ints(onnx::InferenceContext& ctx, size_t i) {
  if (i >= ctx.getNumInputs()) return std::nullopt;
  const onnx::TensorProto* t = ctx.getInputData(i);
  if (!t) return std::nullopt;
  std::vector<int64_t> out;
  if (t->data_type() == onnx::TensorProto::INT64) {
    if (t->has_raw_data()) return read_raw<int64_t>(t->raw_data());
    out.assign(t->int64_data().begin(), t->int64_data().end());
  } else if (t->data_type() == onnx::TensorProto::INT32) {
    if (t->has_raw_data()) {
      for (int32_t v : read_raw<int32_t>(t->raw_data())) out.push_back(v);
    } else {
      out.assign(t->int32_data().begin(), t->int32_data().end());
    }
  } else {
    return std::nullopt;
  }
  return out;
}

std::optional<std::vector<double>> constant_floats(onnx::InferenceContext& ctx, size_t i) {
  if (i >= ctx.getNumInputs()) return std::nullopt;
  const onnx::TensorProto* t = ctx.getInputData(i);
  if (!t) return std::nullopt;
  std::vector<double> out;
  switch (t->data_type()) {
    case onnx::TensorProto::FLOAT:
      if (t->has_raw_data())
        for (float v : read_raw<float>(t->raw_data())) out.push_back(v);
      else
        out.assign(t->float_data().begin(), t->float_data().end());
      return out;
    case onnx::TensorProto::DOUBLE:
      if (t->has_raw_data()) return read_raw<double>(t->raw_data());
      out.assign(t->double_data().begin(), t->double_data().end());
      return out;
    case onnx::TensorProto::FLOAT16:
      if (t->has_raw_data())
        for (uint16_t v : read_raw<uint16_t>(t->raw_data())) out.push_back(half_to_float(v));
      else
        for (int32_t v : t->int32_data()) out.push_back(half_to_float(static_cast<uint16_t>(v)));
      return out;
    default:
      return std::nullopt;
  }
}

int64_t normalize_axis(int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank)
    fail_shape_inference(what, " ", axis, " is out of range for rank ", rank, " (valid: ", -rank, " to ",
                               rank - 1, ")");
  return axis < 0 ? axis + rank : axis;
}

const onnx::OpSchema& onnx_schema(const char* op, int version) {
  const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(op, version, onnx::ONNX_DOMAIN);
  if (!s || s->SinceVersion() > kOnnxLibraryNewestOpset)
    throw std::runtime_error(std::string("onnx 1.12 has no schema of ") + op + " at opset " + std::to_string(version));
  return *s;
}

TypeList onnx_types(const char* op, int version, const char* param, const TypeList& extra) {
  for (const auto& c : onnx_schema(op, version).typeConstraintParams())
    if (c.type_param_str == param) return concat(c.allowed_type_strs, extra);
  throw std::runtime_error(std::string("onnx 1.12's ") + op + "-" + std::to_string(version) +
                           " has no type constraint " + param);
}

onnx::InferenceFunction onnx_inference(const char* op, int version) {
  return onnx_schema(op, version).GetTypeAndShapeInferenceFunction();
}

onnx::DataPropagationFunction onnx_data_propagation(const char* op, int version) {
  return onnx_schema(op, version).GetDataPropagationFunction();
}

onnx::OpSchema types_only_version(const char* op, int since, const TypeWidener& widen,
                                  const std::vector<onnx::OpSchema::Attribute>& extra_attrs) {
  const onnx::OpSchema* previous = onnx::OpSchemaRegistry::Schema(op, since - 1, onnx::ONNX_DOMAIN);
  if (!previous) throw std::runtime_error(std::string(op) + " has no version below opset " + std::to_string(since));
  onnx::OpSchema s(op, __FILE__, __LINE__);
  s.SetDomain(onnx::ONNX_DOMAIN).SinceVersion(since);
  s.SetDoc(std::string(previous->doc() ? previous->doc() : "") + "\n\nOpset " + std::to_string(since) +
           " only accepts more element types than " + op + "-" + std::to_string(previous->SinceVersion()) + ".");
  int i = 0;
  for (const auto& p : previous->inputs())
    s.Input(i++, p.GetName(), p.GetDescription(), p.GetTypeStr(), p.GetOption(), p.GetIsHomogeneous(),
            p.GetMinArity(), p.GetDifferentiationCategory());
  i = 0;
  for (const auto& p : previous->outputs())
    s.Output(i++, p.GetName(), p.GetDescription(), p.GetTypeStr(), p.GetOption(), p.GetIsHomogeneous(),
             p.GetMinArity(), p.GetDifferentiationCategory());
  for (const auto& [name, attr] : previous->attributes()) s.Attr(attr);
  for (const auto& attr : extra_attrs) s.Attr(attr);
  // Without a widener, a version of an opset that added element types onnx 1.12 cannot name takes them
  // (and those of earlier opsets) into every constraint of general tensors, those allowing int8.
  const TypeList added = new_types_of_opset(since).empty() ? TypeList{} : new_types_through(since);
  for (const auto& c : previous->typeConstraintParams()) {
    TypeList allowed = c.allowed_type_strs;
    TypeList extra;
    if (widen)
      extra = widen(c.type_param_str, c.allowed_type_strs);
    else if (std::find(allowed.begin(), allowed.end(), "tensor(int8)") != allowed.end())
      extra = added;
    for (const std::string& t : extra)
      if (std::find(allowed.begin(), allowed.end(), t) == allowed.end()) allowed.push_back(t);
    s.TypeConstraint(c.type_param_str, allowed, c.description);
  }
  s.TypeAndShapeInferenceFunction(previous->GetTypeAndShapeInferenceFunction());
  if (previous->GetDataPropagationFunction()) s.PartialDataPropagationFunction(previous->GetDataPropagationFunction());
  if (previous->HasFunction() && previous->GetFunction()) {
    const onnx::FunctionProto& f = *previous->GetFunction();
    s.FunctionBody(std::vector<onnx::NodeProto>(f.node().begin(), f.node().end()),
                   std::vector<onnx::OperatorSetIdProto>(f.opset_import().begin(), f.opset_import().end()));
  }
  if (previous->HasContextDependentFunction())
    s.SetContextDependentFunctionBodyBuilder(
        [previous](const onnx::FunctionBodyBuildContext& ctx, const onnx::OpSchema&, onnx::FunctionProto& body) {
          return previous->BuildContextDependentFunction(ctx, body);
        });
  return s;
}

void broadcast_binary_inference(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (onnx::hasNInputShapes(ctx, 2))
    onnx::bidirectionalBroadcastShapeInference(onnx::getInputShape(ctx, 0), onnx::getInputShape(ctx, 1),
                                               *onnx::getOutputShape(ctx, 0));
}

}  // namespace ephost::opsets
