#include "host_value.h"

#include <onnx/onnx-data_pb.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "data_files.h"

namespace fs = std::filesystem;

namespace ephost_cli {

HostValue::HostValue(HostTensor tensor) : kind_(Kind::kTensor), name_(tensor.name()), tensor_(std::move(tensor)) {}

HostValue HostValue::sequence(std::string name, int32_t elem_type, std::vector<HostTensor> elements) {
  HostValue v;
  v.kind_ = Kind::kSequence;
  v.name_ = std::move(name);
  v.elem_type_ = elem_type;
  v.elements_ = std::move(elements);
  return v;
}

HostValue HostValue::none(std::string name) {
  HostValue v;
  v.kind_ = Kind::kNone;
  v.name_ = std::move(name);
  return v;
}

void HostValue::set_name(std::string name) {
  name_ = std::move(name);
  if (kind_ == Kind::kTensor) tensor_.set_name(name_);
}

HostTensor& HostValue::tensor() {
  if (kind_ != Kind::kTensor)
    throw Ephost::Exception(EPHOST_INVALID_ARGUMENT, "'" + name_ + "' is a " + describe() + ", not a tensor");
  return tensor_;
}

const HostTensor& HostValue::tensor() const { return const_cast<HostValue*>(this)->tensor(); }

std::string HostValue::describe() const {
  switch (kind_) {
    case Kind::kTensor: return element_type_name(tensor_.elem_type()) + " " + shape_string(tensor_.shape());
    case Kind::kSequence:
      return "sequence of " + std::to_string(elements_.size()) + " " + element_type_name(elem_type_) + " tensor" +
             (elements_.size() == 1 ? "" : "s");
    case Kind::kNone: break;
  }
  return "none (empty optional)";
}

Ephost::Tensor HostValue::to_ephost() const {
  if (kind_ == Kind::kTensor) return tensor_.view();
  if (kind_ == Kind::kNone) return with_context("creating '" + name_ + "'", [] { return Ephost::Tensor::none(); });
  std::vector<Ephost::Tensor> views;
  for (const HostTensor& e : elements_) views.push_back(e.view());
  // The library copies the elements: the views may go.
  return with_context("creating sequence '" + name_ + "'",
                      [&] { return Ephost::Tensor::sequence(static_cast<EphostElementType>(elem_type_), views); });
}

HostValue from_ephost_value(const Ephost::Tensor& value, std::string name) {
  switch (value.kind()) {
    case EPHOST_VALUE_TENSOR: return HostValue(from_ephost(value, std::move(name)));
    case EPHOST_VALUE_NONE: return HostValue::none(std::move(name));
    case EPHOST_VALUE_SEQUENCE: {
      const std::string context = "sequence '" + name + "'";
      const EphostElementType type = with_context(context, [&] { return value.sequence_type(); });
      const size_t n = with_context(context, [&] { return value.sequence_length(); });
      std::vector<HostTensor> elements;
      for (size_t i = 0; i < n; ++i) {
        const Ephost::Tensor e = with_context(context, [&] { return value.element(i); });
        elements.push_back(from_ephost(e, name + "[" + std::to_string(i) + "]"));
      }
      return HostValue::sequence(std::move(name), type, std::move(elements));
    }
    default: break;
  }
  throw Ephost::Exception(EPHOST_FAIL, "'" + name + "' came back as a value of unknown kind");
}

namespace {

bool parses_clean(google::protobuf::Message& m, const std::string& bytes) {
  return m.ParseFromString(bytes) && m.GetReflection()->GetUnknownFields(m).empty();
}

// A sequence of tensors from its proto; `declared_type` names the tensors when it is empty.
HostValue sequence_from_proto(const onnx::SequenceProto& seq, int32_t declared_type, const std::string& base_dir) {
  if (seq.elem_type() != onnx::SequenceProto::TENSOR && seq.elem_type() != onnx::SequenceProto::UNDEFINED)
    throw Ephost::Exception(EPHOST_NOT_IMPLEMENTED, "SequenceProto '" + seq.name() + "' holds elements of type " +
                                                        std::to_string(seq.elem_type()) +
                                                        "; only sequences of tensors are supported");
  std::vector<HostTensor> elements;
  for (const auto& t : seq.tensor_values()) elements.push_back(from_proto(t, base_dir));
  int32_t type = elements.empty() ? declared_type : elements[0].elem_type();
  if (type == EPHOST_ELEMENT_UNDEFINED) type = EPHOST_ELEMENT_FLOAT;  // an empty sequence nobody typed
  return HostValue::sequence(seq.name(), type, std::move(elements));
}

}  // namespace

LoadedHostValue load_declared_value(const std::string& path, const DeclaredKind& declared) {
  LoadedHostValue out;
  const bool sequence = declared.kind == EPHOST_VALUE_SEQUENCE;
  const bool optional = declared.kind == EPHOST_VALUE_OPTIONAL;
  if (!sequence && !optional) {
    LoadedValue v = load_value_file(path);
    if (v.tensor) out.value = HostValue(std::move(*v.tensor));
    out.unsupported = std::move(v.unsupported);
    return out;
  }
  const std::string bytes = read_regular_file(path, "value file");
  const std::string base_dir = fs::path(path).parent_path().string();
  const std::string file = fs::path(path).filename().string();
  try {
    if (sequence) {
      onnx::SequenceProto seq;
      if (!parses_clean(seq, bytes)) {
        out.unsupported = file + " is not a SequenceProto, but the model declares a sequence";
        return out;
      }
      out.value = sequence_from_proto(seq, declared.tensor_elem_type, base_dir);
      return out;
    }
    onnx::OptionalProto opt;
    if (!parses_clean(opt, bytes)) {
      out.unsupported = file + " is not an OptionalProto, but the model declares an optional";
      return out;
    }
    switch (opt.elem_type()) {
      case onnx::OptionalProto::UNDEFINED: out.value = HostValue::none(opt.name()); break;
      case onnx::OptionalProto::TENSOR: {
        HostTensor t = from_proto(opt.tensor_value(), base_dir);
        t.set_name(opt.name());
        out.value = HostValue(std::move(t));
        break;
      }
      case onnx::OptionalProto::SEQUENCE: {
        HostValue v = sequence_from_proto(opt.sequence_value(), declared.tensor_elem_type, base_dir);
        v.set_name(opt.name());
        out.value = std::move(v);
        break;
      }
      default:
        out.unsupported = file + " is an OptionalProto holding elements of type " + std::to_string(opt.elem_type()) +
                          " (only tensors and sequences of tensors are supported)";
    }
  } catch (const Ephost::Exception& e) {
    if (e.code() != EPHOST_NOT_IMPLEMENTED) throw;
    out.value.reset();
    out.unsupported = file + ": " + e.message();
  }
  return out;
}

void save_value_file(const HostValue& value, const std::string& path) {
  std::string bytes;
  bool ok = false;
  switch (value.kind()) {
    case HostValue::Kind::kTensor: save_tensor_file(value.tensor(), path); return;
    case HostValue::Kind::kSequence: {
      onnx::SequenceProto seq;
      seq.set_name(value.name());
      seq.set_elem_type(onnx::SequenceProto::TENSOR);
      for (const HostTensor& e : value.elements()) to_proto(e, seq.add_tensor_values());
      ok = seq.SerializeToString(&bytes);
      break;
    }
    case HostValue::Kind::kNone: {
      onnx::OptionalProto opt;
      opt.set_name(value.name());
      opt.set_elem_type(onnx::OptionalProto::UNDEFINED);
      ok = opt.SerializeToString(&bytes);
      break;
    }
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!ok || !out || !out.write(bytes.data(), static_cast<std::streamsize>(bytes.size())))
    throw Ephost::Exception(EPHOST_NO_SUCHFILE, "cannot write " + path);
}

std::optional<std::string> compare_values(const HostValue& expected, const HostValue& got, const Tolerance& tol) {
  if (expected.kind() != got.kind()) return "expected a " + expected.describe() + ", got a " + got.describe();
  switch (expected.kind()) {
    case HostValue::Kind::kTensor: return compare_tensors(expected.tensor(), got.tensor(), tol);
    case HostValue::Kind::kNone: return std::nullopt;
    case HostValue::Kind::kSequence: break;
  }
  const auto& e = expected.elements();
  const auto& g = got.elements();
  if (e.size() != g.size())
    return "expected a sequence of " + std::to_string(e.size()) + " tensors, got " + std::to_string(g.size());
  for (size_t i = 0; i < e.size(); ++i)
    if (auto diff = compare_tensors(e[i], g[i], tol)) return "element " + std::to_string(i) + ": " + *diff;
  return std::nullopt;
}

}  // namespace ephost_cli
