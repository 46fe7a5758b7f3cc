#include "lowering.h"

#include <cmath>

namespace ephost_opencl {
namespace {

using ephost::sdk::fail;
using ephost::sdk::Tensor;

[[noreturn]] void unsupported(const std::string& why) { fail(EPHOST_NOT_IMPLEMENTED, why); }

bool is_integer_type(int32_t t) { return t == EPHOST_ELEMENT_INT64 || t == EPHOST_ELEMENT_INT32; }

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// The node that made `v` when it is a Constant node with a `value` tensor, else an invalid node.
ephost::sdk::Node constant_node_of(const ephost::sdk::Value& v) {
  const ephost::sdk::Node producer = v.producer();
  if (producer.valid() && producer.op_type() == "Constant" && (producer.domain().empty() || producer.domain() == "ai.onnx") &&
      producer.has_attr("value"))
    return producer;
  return ephost::sdk::Node();
}

// Packs ONNX convolution weights for the kernels: [cout / block][cin / group][kh][kw][block], so that a work
// item computing `block` output channels reads its weights as one vector. ConvTranspose weights
// ([cin][cout / group][kh][kw]) are packed into the same layout.
std::vector<float> pack_conv_weights(const std::vector<float>& w, const std::vector<int64_t>& c, bool transpose) {
  const int64_t g = c[kConvGroup], cin_g = c[kConvCin] / g, cout = c[kConvCout], cout_g = cout / g;
  const int64_t k = c[kConvKh] * c[kConvKw], block = c[kConvBlock];
  std::vector<float> packed(w.size());
  for (int64_t co = 0; co < cout; ++co) {
    const int64_t group = co / cout_g, j = co % block, cb = co / block;
    for (int64_t ci = 0; ci < cin_g; ++ci)
      for (int64_t s = 0; s < k; ++s) {
        const int64_t from = transpose ? ((group * cin_g + ci) * cout_g + co % cout_g) * k + s : (co * cin_g + ci) * k + s;
        packed[static_cast<size_t>(((cb * cin_g + ci) * k + s) * block + j)] = w[static_cast<size_t>(from)];
      }
  }
  return packed;
}

}  // namespace

int64_t conv_channel_block(int64_t per_group) {
  for (int64_t b : {8, 4, 2})
    if (per_group % b == 0) return b;
  return 1;
}

int32_t Lowering::add_value(ValueDesc desc) {
  p_.values.push_back(std::move(desc));
  const int32_t index = static_cast<int32_t>(p_.values.size() - 1);
  names_[p_.values.back().name] = index;
  return index;
}

int32_t Lowering::find(const std::string& name) const {
  auto it = names_.find(name);
  if (it == names_.end()) fail(EPHOST_INVALID_ARGUMENT, "opencl: the group has no value " + quoted(name));
  return it->second;
}

bool Lowering::is_integer(int32_t v) const { return is_integer_type(desc(v).elem_type) && desc(v).placement != Placement::kDevice; }

bool Lowering::is_float_constant(int32_t v) const {
  return desc(v).placement == Placement::kConstant && desc(v).elem_type == EPHOST_ELEMENT_FLOAT;
}

const std::vector<float>& Lowering::float_data(int32_t v) const { return p_.weights[static_cast<size_t>(desc(v).constant)]; }

const HostTensor& Lowering::int_data(int32_t v) const { return p_.host_constants[static_cast<size_t>(desc(v).constant)]; }

int32_t Lowering::add_input(const Value& v) {
  ValueDesc d;
  d.name = v.name();
  d.elem_type = v.elem_type();
  if (v.is_non_tensor()) unsupported("input " + quoted(d.name) + " is not a tensor");
  if (v.rank() < 0) unsupported("the rank of input " + quoted(d.name) + " is unknown");
  d.dims = v.dims();
  if (d.elem_type == EPHOST_ELEMENT_FLOAT) {
    if (d.dims.size() > 4) unsupported("input " + quoted(d.name) + " has rank " + std::to_string(d.dims.size()) + " (at most 4)");
    d.placement = Placement::kDevice;
  } else if (is_integer_type(d.elem_type)) {
    if (d.dims.size() > 1) unsupported("integer input " + quoted(d.name) + " has rank " + std::to_string(d.dims.size()));
    d.placement = Placement::kHost;
  } else {
    unsupported("input " + quoted(d.name) + " has element type " + EphostElementTypeName(d.elem_type));
  }
  return add_value(std::move(d));
}

int32_t Lowering::add_weight(std::vector<float> data, std::vector<int64_t> dims, const std::string& name) {
  p_.weights.push_back(std::move(data));
  ValueDesc d;
  d.name = name;
  d.elem_type = EPHOST_ELEMENT_FLOAT;
  d.placement = Placement::kConstant;
  d.dims = std::move(dims);
  d.constant = static_cast<int32_t>(p_.weights.size() - 1);
  return add_value(std::move(d));
}

Tensor Lowering::constant_tensor(const Value& v) const {
  if (v.is_constant()) return v.constant();
  const Node producer = constant_node_of(v);
  if (!producer.valid()) unsupported("input " + quoted(v.name()) + " is not a constant");
  return producer.attr_tensor("value");
}

int64_t Lowering::new_weight(std::vector<float> data) {
  p_.weights.push_back(std::move(data));
  return static_cast<int64_t>(p_.weights.size() - 1);
}

int32_t Lowering::add_host_constant(std::vector<int64_t> data, const std::string& name) {
  HostTensor h;
  h.shape = {static_cast<int64_t>(data.size())};
  h.data = std::move(data);
  p_.host_constants.push_back(std::move(h));
  ValueDesc d;
  d.name = name;
  d.elem_type = EPHOST_ELEMENT_INT64;
  d.placement = Placement::kConstant;
  d.dims = p_.host_constants.back().shape;
  d.constant = static_cast<int32_t>(p_.host_constants.size() - 1);
  return add_value(std::move(d));
}

int32_t Lowering::constant_of(const Value& v) {
  if (!v.is_constant() && !constant_node_of(v).valid()) return -1;
  const Tensor t = constant_tensor(v);
  const std::vector<int64_t> shape = t.shape();
  if (t.elem_type() == EPHOST_ELEMENT_FLOAT) {
    if (shape.size() > 4) unsupported("constant " + quoted(v.name()) + " has rank " + std::to_string(shape.size()));
    const float* data = t.data<float>();
    return add_weight(std::vector<float>(data, data + t.size()), shape, v.name());
  }
  if (!is_integer_type(t.elem_type()))
    unsupported("constant " + quoted(v.name()) + " has element type " + EphostElementTypeName(t.elem_type()));
  HostTensor h;
  h.shape = shape;
  for (int64_t i = 0; i < t.size(); ++i)
    h.data.push_back(t.elem_type() == EPHOST_ELEMENT_INT64 ? t.data<int64_t>()[i] : t.data<int32_t>()[i]);
  p_.host_constants.push_back(std::move(h));
  ValueDesc d;
  d.name = v.name();
  d.elem_type = t.elem_type();
  d.placement = Placement::kConstant;
  d.dims = shape;
  d.constant = static_cast<int32_t>(p_.host_constants.size() - 1);
  return add_value(std::move(d));
}

int32_t Lowering::value(const Value& v) {
  auto it = names_.find(v.name());
  if (it != names_.end()) return it->second;
  const int32_t c = constant_of(v);
  if (c < 0) unsupported("input " + quoted(v.name()) + " is neither computed in the group nor a constant");
  return c;
}

int32_t Lowering::input(const Node& node, size_t i) {
  if (!node.has_input(i)) unsupported("input " + std::to_string(i) + " is missing");
  return value(node.input(i));
}

int32_t Lowering::output(const Node& node, size_t i, Placement placement, std::vector<int64_t> inferred, bool rank_inferred) {
  if (!node.has_output(i)) unsupported("output " + std::to_string(i) + " is missing");
  const Value v = node.output(i);
  if (v.is_non_tensor()) unsupported("output " + quoted(v.name()) + " is not a tensor");
  ValueDesc d;
  d.name = v.name();
  d.placement = placement;
  d.elem_type = v.elem_type();
  if (v.rank() >= 0) {
    d.dims = v.dims();
    if (rank_inferred && inferred.size() == d.dims.size())
      for (size_t a = 0; a < d.dims.size(); ++a)
        if (d.dims[a] < 0) d.dims[a] = inferred[a];
  } else if (rank_inferred) {
    d.dims = std::move(inferred);
  } else {
    unsupported("the rank of " + quoted(d.name) + " is unknown");
  }
  if (placement == Placement::kDevice) {
    if (d.elem_type == EPHOST_ELEMENT_UNDEFINED) d.elem_type = EPHOST_ELEMENT_FLOAT;
    if (d.elem_type != EPHOST_ELEMENT_FLOAT) unsupported("output " + quoted(d.name) + " is not float");
    if (d.dims.size() > 4) unsupported("output " + quoted(d.name) + " has rank " + std::to_string(d.dims.size()) + " (at most 4)");
  } else {
    if (d.elem_type == EPHOST_ELEMENT_UNDEFINED) d.elem_type = EPHOST_ELEMENT_INT64;
    if (!is_integer_type(d.elem_type)) unsupported("output " + quoted(d.name) + " is not an integer tensor");
    if (d.dims.size() > 1) unsupported("integer output " + quoted(d.name) + " has rank " + std::to_string(d.dims.size()));
  }
  return add_value(std::move(d));
}

int32_t Lowering::add_op(OpKind kind, const Node& node, std::vector<int32_t> inputs, int32_t out, std::vector<int64_t> ints,
                         std::vector<float> floats) {
  Op op;
  op.kind = kind;
  op.name = node.name();
  op.inputs = std::move(inputs);
  op.outputs = {out};
  op.ints = std::move(ints);
  op.floats = std::move(floats);
  p_.ops.push_back(std::move(op));
  return static_cast<int32_t>(p_.ops.size() - 1);
}

void Lowering::require_device(const Node& node, int32_t v, size_t min_rank, size_t max_rank) const {
  const ValueDesc& d = desc(v);
  if (d.placement != Placement::kDevice) unsupported("input " + quoted(d.name) + " is not a float tensor computed at run time");
  if (d.dims.size() < min_rank || d.dims.size() > max_rank)
    unsupported("input " + quoted(d.name) + " has rank " + std::to_string(d.dims.size()) + " (" + std::to_string(min_rank) +
                ".." + std::to_string(max_rank) + " supported)");
}

void Lowering::require_host_integer(const Node& node, int32_t v) const {
  const ValueDesc& d = desc(v);
  if (!is_integer(v)) unsupported("input " + quoted(d.name) + " is not an integer tensor the host can compute");
  if (d.dims.size() > 1) unsupported("integer input " + quoted(d.name) + " has rank " + std::to_string(d.dims.size()));
}

void Lowering::require_no_extra_outputs(const Node& node, size_t used) const {
  for (size_t i = used; i < node.num_outputs(); ++i)
    if (node.has_output(i)) unsupported("output " + std::to_string(i) + " (" + node.output(i).name() + ") is not implemented");
}

void Lowering::lower(const Node& node) {
  const std::string domain = node.domain();
  if (!domain.empty() && domain != "ai.onnx") unsupported("domain " + domain);
  const std::string op = node.op_type();
  if (op == "Conv") return conv(node, false);
  if (op == "ConvTranspose") return conv(node, true);
  if (op == "BatchNormalization") return batch_norm(node);
  if (op == "Add") return binary(node, BinaryOp::kAdd);
  if (op == "Sub") return binary(node, BinaryOp::kSub);
  if (op == "Mul") return binary(node, BinaryOp::kMul);
  if (op == "Div") return binary(node, BinaryOp::kDiv);
  if (op == "Relu") return unary(node, UnaryOp::kRelu);
  if (op == "Sigmoid") return unary(node, UnaryOp::kSigmoid);
  if (op == "Tanh") return unary(node, UnaryOp::kTanh);
  if (op == "Neg") return unary(node, UnaryOp::kNeg);
  if (op == "Abs") return unary(node, UnaryOp::kAbs);
  if (op == "Exp") return unary(node, UnaryOp::kExp);
  if (op == "Sqrt") return unary(node, UnaryOp::kSqrt);
  if (op == "HardSigmoid")
    return unary(node, UnaryOp::kHardSigmoid, {node.attr_float("alpha", 0.2f), node.attr_float("beta", 0.5f)});
  if (op == "HardSwish") return unary(node, UnaryOp::kHardSwish);
  if (op == "LeakyRelu") return unary(node, UnaryOp::kLeakyRelu, {node.attr_float("alpha", 0.01f)});
  if (op == "Clip") return clip(node);
  if (op == "MaxPool") return pool(node, true);
  if (op == "AveragePool") return pool(node, false);
  if (op == "GlobalAveragePool") return global_pool(node, false);
  if (op == "GlobalMaxPool") return global_pool(node, true);
  if (op == "Resize") return resize(node);
  if (op == "Concat") return concat(node);
  if (op == "Reshape") return view(node, ViewKind::kReshape);
  if (op == "Flatten") return view(node, ViewKind::kFlatten);
  if (op == "Identity" || op == "Dropout") return view(node, ViewKind::kIdentity);
  if (op == "Squeeze") return squeeze(node, false);
  if (op == "Unsqueeze") return squeeze(node, true);
  if (op == "Transpose") return transpose(node);
  if (op == "MatMul") return matmul(node);
  if (op == "Gemm") return gemm(node);
  if (op == "Softmax") return softmax(node);
  if (op == "Shape") return shape(node);
  if (op == "Cast") return cast(node);
  if (op == "Slice") return slice(node);
  if (op == "Gather") return gather(node);
  if (op == "Constant") return constant(node);
  unsupported("op type " + op + " is not implemented");
}

void Lowering::finish() {
  for (Op& op : p_.ops) {
    if (op.kind != OpKind::kConv && op.kind != OpKind::kConvTranspose) continue;
    auto& w = p_.weights[static_cast<size_t>(op.ints[kConvWeight])];
    w = pack_conv_weights(w, op.ints, op.kind == OpKind::kConvTranspose);
  }
}

}  // namespace ephost_opencl
