#include "tensor_io.h"

#include <onnx/onnx-data_pb.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "data_files.h"

namespace fs = std::filesystem;

namespace ephost_cli {

void AlignedFree::operator()(void* p) const { std::free(p); }

HostTensor::HostTensor(std::string name, int32_t elem_type, std::vector<int64_t> shape)
    : name_(std::move(name)), elem_type_(elem_type), shape_(std::move(shape)) {
  count_ = ephost_cli::element_count(shape_);
  if (elem_type_ == EPHOST_ELEMENT_STRING) {
    strings_.resize(count_);
    return;
  }
  if (EphostElementBits(elem_type_) == 0)
    throw Ephost::Exception(EPHOST_NOT_IMPLEMENTED, "unsupported element type " + element_type_name(elem_type_));
  // The byte count must not wrap: a shape such as [9223372036854775807] is refused, not allocated small.
  const size_t data_bytes = EphostTensorDataSize(elem_type_, count_);  // packed for int4 and the like
  if (data_bytes > std::numeric_limits<size_t>::max() - 127)
    throw Ephost::Exception(EPHOST_INVALID_ARGUMENT, "tensor '" + name_ + "' of shape " + shape_string(shape_) +
                                                         " would take more bytes than can be counted");
  // At least one aligned block even for empty tensors, so that data() is never NULL.
  size_t bytes = std::max<size_t>(64, (data_bytes + 63) / 64 * 64);
  void* p = std::aligned_alloc(64, bytes);
  if (!p) throw Ephost::Exception(EPHOST_FAIL, "out of memory allocating " + std::to_string(bytes) + " bytes");
  std::memset(p, 0, bytes);
  data_.reset(static_cast<unsigned char*>(p));
}

void HostTensor::reinterpret_as(int32_t elem_type) {
  if (elem_type_ == EPHOST_ELEMENT_STRING || elem_type == EPHOST_ELEMENT_STRING ||
      EphostElementBits(elem_type) != EphostElementBits(elem_type_))
    throw Ephost::Exception(EPHOST_INVALID_ARGUMENT, "cannot reinterpret " + element_type_name(elem_type_) +
                                                         " tensor '" + name_ + "' as " + element_type_name(elem_type));
  elem_type_ = elem_type;
}

Ephost::Tensor HostTensor::view() const {
  const auto type = static_cast<EphostElementType>(elem_type_);
  return with_context("creating tensor '" + name_ + "'", [&] {
    if (elem_type_ != EPHOST_ELEMENT_STRING) return Ephost::Tensor::wrap(type, shape_, data_.get(), byte_size());
    string_ptrs_.clear();
    for (const auto& s : strings_) string_ptrs_.push_back(s.c_str());
    if (string_ptrs_.empty()) string_ptrs_.reserve(1);
    return Ephost::Tensor::wrap(type, shape_, string_ptrs_.data(), string_ptrs_.size());
  });
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

size_t element_count(const std::vector<int64_t>& shape) {
  size_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw Ephost::Exception(EPHOST_INVALID_ARGUMENT, "negative dimension in shape " + shape_string(shape));
    if (d != 0 && n > std::numeric_limits<size_t>::max() / static_cast<size_t>(d))
      throw Ephost::Exception(EPHOST_INVALID_ARGUMENT, "shape " + shape_string(shape) + " is too large");
    n *= static_cast<size_t>(d);
  }
  return n;
}

HostTensor from_ephost(const Ephost::Tensor& tensor, std::string name) {
  const std::vector<int64_t> shape = tensor.shape();
  HostTensor out(std::move(name), tensor.type(), shape);
  size_t count = tensor.size();
  if (count != out.element_count())
    throw Ephost::Exception(EPHOST_FAIL, "tensor '" + out.name() + "' reports " + std::to_string(count) +
                                             " elements for shape " + shape_string(shape));
  const void* data = tensor.data<const void>();
  if (count == 0) return out;
  if (!data) throw Ephost::Exception(EPHOST_FAIL, "tensor '" + out.name() + "' has no data");
  if (out.elem_type() == EPHOST_ELEMENT_STRING) {
    const char* const* strs = static_cast<const char* const*>(data);
    for (size_t i = 0; i < count; ++i) out.strings()[i] = strs[i] ? strs[i] : "";
  } else {
    std::memcpy(out.data(), data, out.byte_size());
  }
  return out;
}

namespace {

[[noreturn]] void bad_proto(const std::string& name, const std::string& what) {
  throw Ephost::Exception(EPHOST_INVALID_PROTOBUF, "TensorProto '" + name + "': " + what);
}

// A decimal integer >= 0 from an external data entry.
int64_t external_number(const onnx::TensorProto& proto, const std::string& key, const std::string& value) {
  int64_t v = 0;
  if (value.empty()) bad_proto(proto.name(), "external data " + key + " is empty");
  for (char c : value) {
    if (c < '0' || c > '9' || v > (std::numeric_limits<int64_t>::max() - (c - '0')) / 10)
      bad_proto(proto.name(), "external data " + key + " '" + value + "' is not a number");
    v = v * 10 + (c - '0');
  }
  return v;
}

// External data, read only from inside `base_dir` (the folder of the .pb file).
std::string read_external(const onnx::TensorProto& proto, const std::string& base_dir) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : proto.external_data()) {
    if (kv.key() == "location") location = kv.value();
    else if (kv.key() == "offset") offset = external_number(proto, kv.key(), kv.value());
    else if (kv.key() == "length") length = external_number(proto, kv.key(), kv.value());
  }
  if (location.empty()) bad_proto(proto.name(), "external data without a location");
  const std::string what = "TensorProto '" + proto.name() + "' external data";
  return read_regular_file_range(confined_data_path(base_dir, location, what + " location"), offset, length,
                                 what + " file");
}

template <typename Dst, typename Field>
void copy_field(const Field& field, HostTensor& t, size_t per_element = 1) {
  if (static_cast<size_t>(field.size()) != t.element_count() * per_element)
    bad_proto(t.name(), std::to_string(field.size()) + " values for " + std::to_string(t.element_count()) +
                            " elements of shape " + shape_string(t.shape()));
  Dst* dst = t.as<Dst>();
  for (int i = 0; i < field.size(); ++i) dst[i] = static_cast<Dst>(field.Get(i));
}

}  // namespace

namespace {

// How many values the proto's typed field for `type` holds, and how many of them make one element.
std::pair<size_t, size_t> typed_field_size(const onnx::TensorProto& p, int32_t type) {
  switch (type) {
    case EPHOST_ELEMENT_FLOAT: return {p.float_data_size(), 1};
    case EPHOST_ELEMENT_COMPLEX64: return {p.float_data_size(), 2};
    case EPHOST_ELEMENT_DOUBLE: return {p.double_data_size(), 1};
    case EPHOST_ELEMENT_COMPLEX128: return {p.double_data_size(), 2};
    case EPHOST_ELEMENT_INT64: return {p.int64_data_size(), 1};
    case EPHOST_ELEMENT_UINT32:
    case EPHOST_ELEMENT_UINT64: return {p.uint64_data_size(), 1};
    case EPHOST_ELEMENT_STRING: return {p.string_data_size(), 1};
    default: return {p.int32_data_size(), 1};  // int32 and narrower, bool, float16/bfloat16/float8 bit patterns
  }
}

}  // namespace

HostTensor from_proto(const onnx::TensorProto& proto, const std::string& base_dir) {
  std::vector<int64_t> shape(proto.dims().begin(), proto.dims().end());
  for (int64_t d : shape)
    if (d < 0) bad_proto(proto.name(), "negative dimension in " + shape_string(shape));
  int32_t type = proto.data_type();
  if (type <= EPHOST_ELEMENT_UNDEFINED || EphostElementBits(type) == 0)
    throw Ephost::Exception(EPHOST_NOT_IMPLEMENTED, "TensorProto '" + proto.name() + "': unsupported element type " +
                                                        std::to_string(type));
  size_t n = 0;
  try {
    n = element_count(shape);
  } catch (const Ephost::Exception&) {
    bad_proto(proto.name(), "shape " + shape_string(shape) + " is too large");
  }
  // Check the amount of data before allocating anything: a file that is not really a TensorProto can
  // parse as one with absurd dims.
  const bool external = proto.data_location() == onnx::TensorProto::EXTERNAL;
  std::string ext;
  if (external) ext = read_external(proto, base_dir);
  const bool raw = type != EPHOST_ELEMENT_STRING && (external || proto.has_raw_data());
  const std::string& raw_bytes = external ? ext : proto.raw_data();
  const size_t packed_bytes = EphostTensorDataSize(type, n);  // int32_data holds these bytes for packed types
  const bool packed = EphostElementBits(type) < 8;
  if (raw) {
    if (raw_bytes.size() != packed_bytes)
      bad_proto(proto.name(), std::to_string(raw_bytes.size()) + " bytes of raw data for " + std::to_string(n) + " " +
                                  element_type_name(type) + " elements of shape " + shape_string(shape));
  } else {
    auto [values, per_element] = typed_field_size(proto, type);
    if (packed ? values != packed_bytes : values / per_element != n || values % per_element != 0)
      bad_proto(proto.name(), std::to_string(values) + " values for " + std::to_string(n) + " " +
                                  element_type_name(type) + " elements of shape " + shape_string(shape));
  }

  HostTensor t(proto.name(), type, shape);
  if (type == EPHOST_ELEMENT_STRING) {
    for (size_t i = 0; i < n; ++i) t.strings()[i] = proto.string_data(static_cast<int>(i));
    return t;
  }
  if (raw) {
    if (!raw_bytes.empty()) std::memcpy(t.data(), raw_bytes.data(), raw_bytes.size());  // little-endian, as we are
    return t;
  }
  switch (type) {
    case EPHOST_ELEMENT_FLOAT: copy_field<float>(proto.float_data(), t); break;
    case EPHOST_ELEMENT_COMPLEX64: copy_field<float>(proto.float_data(), t, 2); break;
    case EPHOST_ELEMENT_DOUBLE: copy_field<double>(proto.double_data(), t); break;
    case EPHOST_ELEMENT_COMPLEX128: copy_field<double>(proto.double_data(), t, 2); break;
    case EPHOST_ELEMENT_INT64: copy_field<int64_t>(proto.int64_data(), t); break;
    case EPHOST_ELEMENT_UINT32: copy_field<uint32_t>(proto.uint64_data(), t); break;
    case EPHOST_ELEMENT_UINT64: copy_field<uint64_t>(proto.uint64_data(), t); break;
    case EPHOST_ELEMENT_INT32: copy_field<int32_t>(proto.int32_data(), t); break;
    case EPHOST_ELEMENT_INT16: copy_field<int16_t>(proto.int32_data(), t); break;
    case EPHOST_ELEMENT_UINT16: copy_field<uint16_t>(proto.int32_data(), t); break;
    case EPHOST_ELEMENT_INT8: copy_field<int8_t>(proto.int32_data(), t); break;
    case EPHOST_ELEMENT_UINT8: copy_field<uint8_t>(proto.int32_data(), t); break;
    case EPHOST_ELEMENT_BOOL: copy_field<uint8_t>(proto.int32_data(), t); break;
    // One code per entry for float8; one packed byte per entry for the 4-bit and 2-bit types.
    case EPHOST_ELEMENT_FLOAT8E4M3FN:
    case EPHOST_ELEMENT_FLOAT8E4M3FNUZ:
    case EPHOST_ELEMENT_FLOAT8E5M2:
    case EPHOST_ELEMENT_FLOAT8E5M2FNUZ:
    case EPHOST_ELEMENT_FLOAT8E8M0: copy_field<uint8_t>(proto.int32_data(), t); break;
    case EPHOST_ELEMENT_UINT4:
    case EPHOST_ELEMENT_INT4:
    case EPHOST_ELEMENT_FLOAT4E2M1:
    case EPHOST_ELEMENT_UINT2:
    case EPHOST_ELEMENT_INT2:  // sizes checked above: one packed byte per entry
      for (int i = 0; i < proto.int32_data_size(); ++i) t.as<uint8_t>()[i] = static_cast<uint8_t>(proto.int32_data(i));
      break;
    // int32_data holds the 16-bit patterns.
    case EPHOST_ELEMENT_FLOAT16:
    case EPHOST_ELEMENT_BFLOAT16: copy_field<uint16_t>(proto.int32_data(), t); break;
    default: bad_proto(proto.name(), "unsupported element type " + std::to_string(type));
  }
  if (type == EPHOST_ELEMENT_BOOL) {
    uint8_t* b = t.as<uint8_t>();
    for (size_t i = 0; i < n; ++i) b[i] = b[i] ? 1 : 0;
  }
  return t;
}

void to_proto(const HostTensor& t, onnx::TensorProto* proto) {
  proto->Clear();
  proto->set_name(t.name());
  proto->set_data_type(t.elem_type());
  for (int64_t d : t.shape()) proto->add_dims(d);
  if (t.elem_type() == EPHOST_ELEMENT_STRING) {
    for (const auto& s : t.strings()) proto->add_string_data(s);
  } else {
    proto->set_raw_data(t.data(), t.byte_size());
  }
}

namespace {

// Why a file that is not a usable TensorProto is not: names the proto it most likely is. ONNX's
// SequenceProto and OptionalProto share TensorProto's first field numbers, so a sequence can parse
// "successfully" as a TensorProto with garbage in it; the checks in load_value_file catch that.
std::string describe_non_tensor(const std::string& bytes, const std::string& why) {
  auto parses_clean = [&](google::protobuf::Message& m) {
    return m.ParseFromString(bytes) && m.GetReflection()->GetUnknownFields(m).empty();
  };
  // Sequence and optional values have the same layout for their first fields: tell them apart only
  // where the bytes say so.
  onnx::SequenceProto seq;
  onnx::OptionalProto opt;
  const bool is_seq = parses_clean(seq);
  const bool is_opt = parses_clean(opt);
  if (is_seq && !is_opt) return "a SequenceProto where a tensor is expected";
  if (is_opt && !is_seq) return "an OptionalProto where a tensor is expected";
  if (is_seq && is_opt) return "a SequenceProto or OptionalProto where a tensor is expected";
  onnx::MapProto map;
  if (parses_clean(map) && map.key_type() != 0) return "a MapProto (map values are not supported)";
  return "not a usable TensorProto (" + why + ")";
}

bool has_unknown_fields(const google::protobuf::Message& m) {
  return !m.GetReflection()->GetUnknownFields(m).empty();
}

}  // namespace

LoadedValue load_value_file(const std::string& path) {
  const std::string bytes = read_regular_file(path, "value file");
  const std::string base_dir = fs::path(path).parent_path().string();
  const std::string file = fs::path(path).filename().string();
  LoadedValue out;
  onnx::TensorProto proto;
  std::string why;
  if (!proto.ParseFromString(bytes)) why = "does not parse";
  else if (has_unknown_fields(proto)) why = "unknown fields";
  else if (proto.has_segment()) why = "segmented tensors are not supported";
  else if (proto.data_type() == 0) why = "no data type";
  if (why.empty()) {
    try {
      out.tensor = from_proto(proto, base_dir);
      return out;
    } catch (const Ephost::Exception& e) {
      why = e.message();
    }
  }
  out.unsupported = file + " is " + describe_non_tensor(bytes, why);
  return out;
}

HostTensor load_tensor_file(const std::string& path) {
  LoadedValue v = load_value_file(path);
  if (!v.tensor) throw Ephost::Exception(EPHOST_INVALID_PROTOBUF, v.unsupported);
  return std::move(*v.tensor);
}

void save_tensor_file(const HostTensor& tensor, const std::string& path) {
  onnx::TensorProto proto;
  to_proto(tensor, &proto);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !proto.SerializeToOstream(&out))
    throw Ephost::Exception(EPHOST_NO_SUCHFILE, "cannot write " + path);
}

std::vector<std::string> numbered_files(const std::string& dir, const std::string& prefix) {
  std::vector<std::pair<long, std::string>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= prefix.size() + 3 || name.compare(0, prefix.size(), prefix) != 0 ||
        name.compare(name.size() - 3, 3, ".pb") != 0)
      continue;
    const std::string num = name.substr(prefix.size(), name.size() - prefix.size() - 3);
    if (num.empty() || !std::all_of(num.begin(), num.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
    found.emplace_back(std::stol(num), entry.path().string());
  }
  if (ec) throw Ephost::Exception(EPHOST_NO_SUCHFILE, "cannot list " + dir + ": " + ec.message());
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

}  // namespace ephost_cli
