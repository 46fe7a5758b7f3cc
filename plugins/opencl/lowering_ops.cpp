// Lowering of each supported ONNX operator (lowering.h).
#include <algorithm>
#include <cmath>
#include <limits>

#include "lowering.h"

namespace ephost_opencl {
namespace {

using ephost::sdk::fail;
using ephost::sdk::Tensor;

constexpr int64_t kMaxWindow = 1 << 16;

[[noreturn]] void unsupported(const std::string& why) { fail(EPHOST_NOT_IMPLEMENTED, why); }

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string list(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

std::vector<float> floats_of(const Tensor& t, const std::string& what) {
  if (t.elem_type() != EPHOST_ELEMENT_FLOAT) unsupported(what + " is not a float tensor");
  return std::vector<float>(t.data<float>(), t.data<float>() + t.size());
}

std::vector<int64_t> ints_of(const Tensor& t, const std::string& what) {
  std::vector<int64_t> out;
  if (t.elem_type() == EPHOST_ELEMENT_INT64)
    out.assign(t.data<int64_t>(), t.data<int64_t>() + t.size());
  else if (t.elem_type() == EPHOST_ELEMENT_INT32)
    out.assign(t.data<int32_t>(), t.data<int32_t>() + t.size());
  else
    unsupported(what + " is not an integer tensor");
  return out;
}

int64_t normalized_axis(int64_t axis, int64_t rank, const std::string& what) {
  if (axis < -rank || axis >= rank) unsupported(what + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

// A 2-D window attribute with `count` values, each in [minimum, kMaxWindow].
std::vector<int64_t> window_attr(const ephost::sdk::Node& node, const char* name, std::vector<int64_t> def, int64_t minimum) {
  std::vector<int64_t> v = node.attr_ints(name, def);
  if (v.size() != def.size()) unsupported(std::string(name) + " " + list(v) + " must have " + std::to_string(def.size()) + " values");
  for (int64_t x : v)
    if (x < minimum || x > kMaxWindow) unsupported(std::string(name) + " " + list(v) + " is out of range");
  return v;
}

// NOTSET (explicit pads) and VALID (no padding); SAME_* would need pads computed from each run's shapes.
std::vector<int64_t> pads_of(const ephost::sdk::Node& node) {
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "VALID") return {0, 0, 0, 0};
  if (auto_pad != "NOTSET") unsupported("auto_pad " + auto_pad + " is not implemented");
  return window_attr(node, "pads", {0, 0, 0, 0}, 0);
}

using Dims = std::vector<int64_t>;

Dims unknown_dims(size_t rank) { return Dims(rank, -1); }

// numpy broadcasting of static dims (-1: unknown).
Dims broadcast_dims(const Dims& a, const Dims& b) {
  const size_t r = std::max(a.size(), b.size());
  Dims out(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t x = i + a.size() >= r ? a[i + a.size() - r] : 1, y = i + b.size() >= r ? b[i + b.size() - r] : 1;
    out[i] = x == 1 ? y : y == 1 ? x : x >= 0 ? x : y;
  }
  return out;
}

Dims matmul_dims(const Dims& a, const Dims& b, bool transpose_a, bool transpose_b) {
  Dims out = broadcast_dims(Dims(a.begin(), a.end() - 2), Dims(b.begin(), b.end() - 2));
  out.push_back(transpose_a ? a[a.size() - 1] : a[a.size() - 2]);
  out.push_back(transpose_b ? b[b.size() - 2] : b[b.size() - 1]);
  return out;
}

}  // namespace

void Lowering::conv(const Node& node, bool transpose) {
  const int32_t x = input(node, 0);
  require_device(node, x, 4, 4);
  if (!node.has_input(1)) unsupported("the weights are missing");
  const Tensor w = constant_tensor(node.input(1));
  if (w.elem_type() != EPHOST_ELEMENT_FLOAT || w.rank() != 4) unsupported("the weights are not a float tensor of rank 4");
  const std::vector<int64_t> ws = w.shape();
  const int64_t group = node.attr_int("group", 1);
  if (group < 1 || group > kMaxWindow) unsupported("group " + std::to_string(group));
  const int64_t cin = transpose ? ws[0] : ws[1] * group, cout = transpose ? ws[1] * group : ws[0];
  if (cin % group || cout % group || cin < 1 || cout < 1) unsupported("group " + std::to_string(group) + " does not divide the channels");
  if (node.has_attr("kernel_shape") && node.attr_ints("kernel_shape") != std::vector<int64_t>{ws[2], ws[3]})
    unsupported("kernel_shape " + list(node.attr_ints("kernel_shape")) + " differs from the weights " + list(ws));
  for (size_t i = 2; i < 4; ++i)
    if (ws[i] < 1 || ws[i] > kMaxWindow) unsupported("kernel size " + list(ws));
  const std::vector<int64_t> strides = window_attr(node, "strides", {1, 1}, 1);
  const std::vector<int64_t> dilations = window_attr(node, "dilations", {1, 1}, 1);
  const std::vector<int64_t> pads = pads_of(node);
  std::vector<int64_t> out_pad = {0, 0};
  if (transpose) {
    if (node.has_attr("output_shape")) unsupported("output_shape is not implemented (give pads instead)");
    out_pad = window_attr(node, "output_padding", {0, 0}, 0);
  }
  const int64_t channels = desc(x).dims[1];
  if (channels >= 0 && channels != cin)
    unsupported("input " + quoted(desc(x).name) + " has " + std::to_string(channels) + " channels, the weights " + std::to_string(cin));
  int64_t bias = -1;
  if (node.has_input(2)) {
    std::vector<float> b = floats_of(constant_tensor(node.input(2)), "the bias");
    if (static_cast<int64_t>(b.size()) != cout) unsupported("the bias has " + std::to_string(b.size()) + " values for " + std::to_string(cout) + " channels");
    bias = new_weight(std::move(b));
  }
  const int32_t out = output(node, 0, Placement::kDevice, {desc(x).dims[0], cout, -1, -1});
  if (desc(out).dims.size() != 4) unsupported("the output's rank is not 4");
  std::vector<int64_t> ints(kConvIntCount);
  ints[kConvGroup] = group;
  ints[kConvKh] = ws[2];
  ints[kConvKw] = ws[3];
  ints[kConvSh] = strides[0];
  ints[kConvSw] = strides[1];
  ints[kConvDh] = dilations[0];
  ints[kConvDw] = dilations[1];
  ints[kConvPadTop] = pads[0];
  ints[kConvPadLeft] = pads[1];
  ints[kConvPadBottom] = pads[2];
  ints[kConvPadRight] = pads[3];
  ints[kConvCin] = cin;
  ints[kConvCout] = cout;
  ints[kConvBlock] = conv_channel_block(cout / group);
  ints[kConvWeight] = new_weight(floats_of(w, "the weights"));
  ints[kConvBias] = bias;
  ints[kConvOutPadH] = out_pad[0];
  ints[kConvOutPadW] = out_pad[1];
  const int32_t op = add_op(transpose ? OpKind::kConvTranspose : OpKind::kConv, node, {x}, out, ints);
  if (!transpose) conv_of_[out] = op;
}

void Lowering::batch_norm(const Node& node) {
  const int32_t x = input(node, 0);
  require_device(node, x, 2, 4);
  if (node.attr_int("training_mode", 0) != 0) unsupported("training_mode 1");
  require_no_extra_outputs(node, 1);
  std::vector<float> params[4];
  const char* names[4] = {"scale", "B", "mean", "var"};
  for (size_t i = 0; i < 4; ++i) {
    if (!node.has_input(i + 1)) unsupported(std::string(names[i]) + " is missing");
    params[i] = floats_of(constant_tensor(node.input(i + 1)), names[i]);
    if (params[i].size() != params[0].size()) unsupported("the parameters have different sizes");
  }
  const size_t channels = params[0].size();
  const int64_t static_channels = desc(x).dims[1];
  if (static_channels >= 0 && static_cast<size_t>(static_channels) != channels)
    unsupported("input " + quoted(desc(x).name) + " has " + std::to_string(static_channels) + " channels, the parameters " + std::to_string(channels));
  const float epsilon = node.attr_float("epsilon", 1e-5f);
  std::vector<float> scale(channels), shift(channels);
  for (size_t c = 0; c < channels; ++c) {
    scale[c] = params[0][c] / std::sqrt(params[3][c] + epsilon);
    shift[c] = params[1][c] - params[2][c] * scale[c];
  }
  // Folded into the convolution that makes x when nothing else reads x.
  const Value xv = node.input(0);
  auto conv = conv_of_.find(x);
  if (conv != conv_of_.end() && xv.consumers().size() == 1 && !xv.is_graph_output() && !kept_.count(xv.name())) {
    std::vector<int64_t>& c = p_.ops[static_cast<size_t>(conv->second)].ints;
    if (static_cast<size_t>(c[kConvCout]) == channels) {
      std::vector<float>& w = p_.weights[static_cast<size_t>(c[kConvWeight])];
      const size_t per_channel = w.size() / channels;
      for (size_t co = 0; co < channels; ++co)
        for (size_t i = 0; i < per_channel; ++i) w[co * per_channel + i] *= scale[co];
      if (c[kConvBias] < 0) c[kConvBias] = new_weight(std::vector<float>(channels, 0.0f));
      std::vector<float>& b = p_.weights[static_cast<size_t>(c[kConvBias])];
      for (size_t co = 0; co < channels; ++co) b[co] = b[co] * scale[co] + shift[co];
      ValueDesc& d = p_.values[static_cast<size_t>(x)];
      d.name = node.output(0).name();
      if (node.output(0).rank() == 4) d.dims = node.output(0).dims();
      names_[d.name] = x;
      return;
    }
  }
  const int64_t c64 = static_cast<int64_t>(channels);
  const int32_t s = add_weight(std::move(scale), {c64}, node.name() + "#scale");
  const int32_t t = add_weight(std::move(shift), {c64}, node.name() + "#shift");
  const int32_t out = output(node, 0, Placement::kDevice, desc(x).dims);
  add_op(OpKind::kChannelAffine, node, {x, s, t}, out);
}

void Lowering::binary(const Node& node, BinaryOp op) {
  const int32_t a = input(node, 0), b = input(node, 1);
  if (is_integer(a) && is_integer(b)) {
    require_host_integer(node, a);
    require_host_integer(node, b);
    add_op(OpKind::kHostBinary, node, {a, b}, output(node, 0, Placement::kHost, broadcast_dims(desc(a).dims, desc(b).dims)), {static_cast<int64_t>(op)});
    return;
  }
  for (int32_t v : {a, b}) {
    const ValueDesc& d = desc(v);
    if (d.elem_type != EPHOST_ELEMENT_FLOAT || d.placement == Placement::kHost)
      unsupported("input " + quoted(d.name) + " is not a float tensor");
    if (d.dims.size() > 4) unsupported("input " + quoted(d.name) + " has rank " + std::to_string(d.dims.size()));
  }
  if (!is_device(a) && !is_device(b)) unsupported("both inputs are constants (the host's constant folding computes this node)");
  add_op(OpKind::kBinary, node, {a, b}, output(node, 0, Placement::kDevice, broadcast_dims(desc(a).dims, desc(b).dims)),
         {static_cast<int64_t>(op)});
}

void Lowering::unary(const Node& node, UnaryOp op, std::vector<float> params) {
  const int32_t x = input(node, 0);
  require_device(node, x, 0, 4);
  add_op(OpKind::kUnary, node, {x}, output(node, 0, Placement::kDevice, desc(x).dims), {static_cast<int64_t>(op)}, std::move(params));
}

void Lowering::clip(const Node& node) {
  float bounds[2] = {-std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity()};
  if (node.opset() < 11) {
    bounds[0] = node.attr_float("min", -std::numeric_limits<float>::max());
    bounds[1] = node.attr_float("max", std::numeric_limits<float>::max());
  } else {
    for (size_t i = 1; i <= 2; ++i) {
      if (!node.has_input(i)) continue;
      const std::vector<float> v = floats_of(constant_tensor(node.input(i)), "the bound " + quoted(node.input(i).name()));
      if (v.size() != 1) unsupported("the bound " + quoted(node.input(i).name()) + " is not a scalar");
      bounds[i - 1] = v[0];
    }
  }
  unary(node, UnaryOp::kClip, {bounds[0], bounds[1]});
}

void Lowering::pool(const Node& node, bool max) {
  const int32_t x = input(node, 0);
  require_device(node, x, 4, 4);
  require_no_extra_outputs(node, 1);
  if (!node.has_attr("kernel_shape")) unsupported("kernel_shape is missing");
  const std::vector<int64_t> kernel = window_attr(node, "kernel_shape", {1, 1}, 1);
  const std::vector<int64_t> strides = window_attr(node, "strides", {1, 1}, 1);
  const std::vector<int64_t> dilations = window_attr(node, "dilations", {1, 1}, 1);
  if (!max && dilations != std::vector<int64_t>{1, 1}) unsupported("AveragePool with dilations");
  const std::vector<int64_t> pads = pads_of(node);
  std::vector<int64_t> ints(kPoolIntCount);
  ints[kPoolKh] = kernel[0];
  ints[kPoolKw] = kernel[1];
  ints[kPoolSh] = strides[0];
  ints[kPoolSw] = strides[1];
  ints[kPoolDh] = dilations[0];
  ints[kPoolDw] = dilations[1];
  ints[kPoolPadTop] = pads[0];
  ints[kPoolPadLeft] = pads[1];
  ints[kPoolPadBottom] = pads[2];
  ints[kPoolPadRight] = pads[3];
  ints[kPoolCeil] = node.attr_int("ceil_mode", 0) != 0;
  ints[kPoolCountIncludePad] = !max && node.attr_int("count_include_pad", 0) != 0;
  add_op(max ? OpKind::kMaxPool : OpKind::kAveragePool, node, {x}, output(node, 0, Placement::kDevice, {desc(x).dims[0], desc(x).dims[1], -1, -1}), ints);
}

void Lowering::global_pool(const Node& node, bool max) {
  const int32_t x = input(node, 0);
  require_device(node, x, 4, 4);
  add_op(max ? OpKind::kGlobalMaxPool : OpKind::kGlobalAveragePool, node, {x},
         output(node, 0, Placement::kDevice, {desc(x).dims[0], desc(x).dims[1], 1, 1}));
}

void Lowering::resize(const Node& node) {
  const int32_t x = input(node, 0);
  require_device(node, x, 4, 4);
  const std::string mode = node.attr_string("mode", "nearest");
  int64_t m = 0;
  if (mode == "nearest") m = static_cast<int64_t>(ResizeMode::kNearest);
  else if (mode == "linear") m = static_cast<int64_t>(ResizeMode::kLinear);
  else unsupported("mode " + mode + " is not implemented");
  const int64_t opset = node.opset();
  const std::string coordinates = opset < 11 ? "asymmetric" : node.attr_string("coordinate_transformation_mode", "half_pixel");
  int64_t c = 0;
  if (coordinates == "half_pixel") c = static_cast<int64_t>(CoordinateMode::kHalfPixel);
  else if (coordinates == "asymmetric") c = static_cast<int64_t>(CoordinateMode::kAsymmetric);
  else if (coordinates == "align_corners") c = static_cast<int64_t>(CoordinateMode::kAlignCorners);
  else if (coordinates == "pytorch_half_pixel") c = static_cast<int64_t>(CoordinateMode::kPytorchHalfPixel);
  else if (coordinates == "tf_half_pixel_for_nn") c = static_cast<int64_t>(CoordinateMode::kTfHalfPixelForNn);
  else unsupported("coordinate_transformation_mode " + coordinates + " is not implemented");
  const std::string nearest = opset < 11 ? "floor" : node.attr_string("nearest_mode", "round_prefer_floor");
  int64_t n = 0;
  if (nearest == "round_prefer_floor") n = static_cast<int64_t>(NearestMode::kRoundPreferFloor);
  else if (nearest == "round_prefer_ceil") n = static_cast<int64_t>(NearestMode::kRoundPreferCeil);
  else if (nearest == "floor") n = static_cast<int64_t>(NearestMode::kFloor);
  else if (nearest == "ceil") n = static_cast<int64_t>(NearestMode::kCeil);
  else unsupported("nearest_mode " + nearest + " is not implemented");
  if (node.attr_int("antialias", 0) != 0) unsupported("antialias is not implemented");
  if (node.has_attr("axes")) unsupported("axes is not implemented");
  if (node.attr_int("exclude_outside", 0) != 0) unsupported("exclude_outside is not implemented");
  if (node.attr_string("keep_aspect_ratio_policy", "stretch") != "stretch") unsupported("keep_aspect_ratio_policy is not implemented");
  const size_t scales_at = opset < 11 ? 1 : 2;
  std::vector<float> scales;
  if (node.has_input(scales_at)) scales = floats_of(constant_tensor(node.input(scales_at)), "scales");
  if (!scales.empty()) {
    if (scales.size() != 4 || scales[0] != 1.0f || scales[1] != 1.0f || !(scales[2] > 0.0f) || !(scales[3] > 0.0f))
      unsupported("scales must resize H and W only, by positive factors");
    add_op(OpKind::kResize, node, {x, -1}, output(node, 0, Placement::kDevice, {desc(x).dims[0], desc(x).dims[1], -1, -1}), {m, c, n},
           {scales[2], scales[3]});
    return;
  }
  if (opset < 11 || !node.has_input(3)) unsupported("neither scales nor sizes are given");
  const int32_t sizes = input(node, 3);
  require_host_integer(node, sizes);
  add_op(OpKind::kResize, node, {x, sizes}, output(node, 0, Placement::kDevice, {desc(x).dims[0], desc(x).dims[1], -1, -1}), {m, c, n},
         {0.0f, 0.0f});
}

void Lowering::concat(const Node& node) {
  std::vector<int32_t> inputs;
  for (size_t i = 0; i < node.num_inputs(); ++i) inputs.push_back(input(node, i));
  if (inputs.empty()) unsupported("no inputs");
  bool integer = true;
  for (int32_t v : inputs) integer = integer && is_integer(v);
  if (integer) {
    for (int32_t v : inputs) require_host_integer(node, v);
    normalized_axis(node.attr_int("axis", 0), 1, "axis");
    int64_t length = 0;
    for (int32_t v : inputs) length = length >= 0 && !desc(v).dims.empty() && desc(v).dims[0] >= 0 ? length + desc(v).dims[0] : -1;
    add_op(OpKind::kHostConcat, node, inputs, output(node, 0, Placement::kHost, {length}), {0});
    return;
  }
  if (inputs.size() > 8) unsupported(std::to_string(inputs.size()) + " inputs (at most 8)");
  const size_t rank = desc(inputs[0]).dims.size();
  for (int32_t v : inputs) require_device(node, v, rank, rank);
  if (rank == 0) unsupported("concatenating scalars");
  const int64_t axis = normalized_axis(node.attr_int("axis", 0), static_cast<int64_t>(rank), "axis");
  Dims dims = desc(inputs[0]).dims;
  for (size_t i = 1; i < inputs.size(); ++i) {
    const int64_t d = desc(inputs[i]).dims[static_cast<size_t>(axis)];
    int64_t& sum = dims[static_cast<size_t>(axis)];
    sum = sum >= 0 && d >= 0 ? sum + d : -1;
  }
  add_op(OpKind::kConcat, node, inputs, output(node, 0, Placement::kDevice, dims), {axis});
}

void Lowering::view(const Node& node, ViewKind kind) {
  const int32_t x = input(node, 0);
  if (kind == ViewKind::kIdentity) {
    if (node.op_type() == "Dropout") {
      require_no_extra_outputs(node, 1);
      if (node.has_input(2)) unsupported("training_mode is given");
    }
    if (is_integer(x)) {
      require_host_integer(node, x);
      add_op(OpKind::kHostCast, node, {x}, output(node, 0, Placement::kHost, desc(x).dims));
      return;
    }
  }
  require_device(node, x, 0, 4);
  const int64_t rank = static_cast<int64_t>(desc(x).dims.size());
  if (kind == ViewKind::kReshape) {
    if (node.opset() < 5) unsupported("Reshape before opset 5");
    const int32_t shape = input(node, 1);
    require_host_integer(node, shape);
    // The rank is the shape's length; the dims are known where the shape is a constant.
    const Dims& shape_dims = desc(shape).dims;
    const bool rank_known = shape_dims.size() == 1 && shape_dims[0] >= 0;
    Dims dims = unknown_dims(rank_known ? static_cast<size_t>(shape_dims[0]) : 0);
    if (desc(shape).placement == Placement::kConstant && node.attr_int("allowzero", 0) == 0) {
      const std::vector<int64_t>& target = int_data(shape).data;
      for (size_t a = 0; a < dims.size() && a < target.size(); ++a)
        dims[a] = target[a] > 0 ? target[a] : target[a] == 0 && a < desc(x).dims.size() ? desc(x).dims[a] : -1;
    }
    add_op(OpKind::kView, node, {x, shape}, output(node, 0, Placement::kDevice, dims, rank_known),
           {static_cast<int64_t>(kind), node.attr_int("allowzero", 0) != 0});
    return;
  }
  std::vector<int64_t> ints = {static_cast<int64_t>(kind)};
  if (kind == ViewKind::kFlatten) {
    int64_t axis = node.attr_int("axis", 1);
    if (axis < -rank || axis > rank) unsupported("axis " + std::to_string(axis) + " is out of range");
    ints.push_back(axis < 0 ? axis + rank : axis);
  }
  add_op(OpKind::kView, node, {x, -1},
         output(node, 0, Placement::kDevice, kind == ViewKind::kFlatten ? unknown_dims(2) : desc(x).dims), ints);
}

void Lowering::squeeze(const Node& node, bool unsqueeze) {
  const int32_t x = input(node, 0);
  std::vector<int64_t> axes;
  if (node.opset() < 13)
    axes = node.attr_ints("axes");
  else if (node.has_input(1))
    axes = ints_of(constant_tensor(node.input(1)), "axes");
  if (unsqueeze && axes.empty()) unsupported("Unsqueeze without axes");
  const int64_t rank_in = static_cast<int64_t>(desc(x).dims.size());
  const int64_t rank = unsqueeze ? rank_in + static_cast<int64_t>(axes.size()) : rank_in;
  for (int64_t& a : axes) a = normalized_axis(a, rank, "axis");
  // Static dims: unsqueezing inserts 1s; squeezing drops the listed axes (all of static size 1 when none
  // are listed, and then only when every size is known).
  Dims dims;
  const Dims& in = desc(x).dims;
  bool rank_known = true;
  if (unsqueeze) {
    for (int64_t a = 0, from = 0; a < rank; ++a)
      dims.push_back(std::find(axes.begin(), axes.end(), a) != axes.end() ? 1 : in[static_cast<size_t>(from++)]);
  } else {
    for (size_t a = 0; a < in.size(); ++a) {
      const bool listed = std::find(axes.begin(), axes.end(), static_cast<int64_t>(a)) != axes.end();
      if (axes.empty() && in[a] < 0) rank_known = false;
      if (!(listed || (axes.empty() && in[a] == 1))) dims.push_back(in[a]);
    }
  }
  if (is_integer(x)) {
    require_host_integer(node, x);
    add_op(unsqueeze ? OpKind::kHostUnsqueeze : OpKind::kHostSqueeze, node, {x},
           output(node, 0, Placement::kHost, dims, rank_known), axes);
    return;
  }
  require_device(node, x, 0, 4);
  std::vector<int64_t> ints = {static_cast<int64_t>(unsqueeze ? ViewKind::kUnsqueeze : ViewKind::kSqueeze)};
  ints.insert(ints.end(), axes.begin(), axes.end());
  add_op(OpKind::kView, node, {x, -1}, output(node, 0, Placement::kDevice, dims, rank_known), ints);
}

void Lowering::transpose(const Node& node) {
  const int32_t x = input(node, 0);
  require_device(node, x, 1, 4);
  const int64_t rank = static_cast<int64_t>(desc(x).dims.size());
  std::vector<int64_t> perm = node.attr_ints("perm");
  if (perm.empty())
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  if (static_cast<int64_t>(perm.size()) != rank) unsupported("perm " + list(perm) + " does not match rank " + std::to_string(rank));
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[static_cast<size_t>(p)]) unsupported("perm " + list(perm) + " is not a permutation");
    seen[static_cast<size_t>(p)] = true;
  }
  Dims dims;
  for (int64_t p : perm) dims.push_back(desc(x).dims[static_cast<size_t>(p)]);
  add_op(OpKind::kTranspose, node, {x}, output(node, 0, Placement::kDevice, dims), perm);
}

void Lowering::matmul(const Node& node) {
  const int32_t a = input(node, 0), b = input(node, 1);
  require_device(node, a, 2, 4);
  if (is_float_constant(b)) {
    if (desc(b).dims.size() < 2) unsupported("B has rank " + std::to_string(desc(b).dims.size()));
  } else {
    require_device(node, b, 2, 4);
  }
  add_op(OpKind::kMatMul, node, {a, b}, output(node, 0, Placement::kDevice, matmul_dims(desc(a).dims, desc(b).dims, false, false)),
         {0, 0}, {1.0f});
}

void Lowering::gemm(const Node& node) {
  const int32_t a = input(node, 0), b = input(node, 1);
  require_device(node, a, 2, 2);
  if (is_float_constant(b)) {
    if (desc(b).dims.size() != 2) unsupported("B has rank " + std::to_string(desc(b).dims.size()));
  } else {
    require_device(node, b, 2, 2);
  }
  const std::vector<int64_t> ints = {node.attr_int("transA", 0) != 0, node.attr_int("transB", 0) != 0};
  const float alpha = node.attr_float("alpha", 1.0f), beta = node.attr_float("beta", 1.0f);
  if (!node.has_input(2) || beta == 0.0f) {
    add_op(OpKind::kMatMul, node, {a, b}, output(node, 0, Placement::kDevice, matmul_dims(desc(a).dims, desc(b).dims, ints[0], ints[1])),
           ints, {alpha});
    return;
  }
  int32_t c = input(node, 2);
  if (is_float_constant(c)) {
    if (beta != 1.0f) {
      std::vector<float> scaled = float_data(c);
      for (float& v : scaled) v *= beta;
      c = add_weight(std::move(scaled), desc(c).dims, node.name() + "#C");
    }
  } else {
    require_device(node, c, 0, 2);
    if (beta != 1.0f) unsupported("beta != 1 with a C computed at run time");
  }
  ValueDesc product;
  product.name = node.output(0).name() + "#matmul";
  product.dims = matmul_dims(desc(a).dims, desc(b).dims, ints[0], ints[1]);
  const int32_t ab = add_value(std::move(product));
  add_op(OpKind::kMatMul, node, {a, b}, ab, ints, {alpha});
  add_op(OpKind::kBinary, node, {ab, c}, output(node, 0, Placement::kDevice, desc(ab).dims), {static_cast<int64_t>(BinaryOp::kAdd)});
}

void Lowering::softmax(const Node& node) {
  const int32_t x = input(node, 0);
  require_device(node, x, 1, 4);
  const bool coerce = node.opset() < 13;
  const int64_t rank = static_cast<int64_t>(desc(x).dims.size());
  const int64_t axis = normalized_axis(node.attr_int("axis", coerce ? 1 : -1), rank, "axis");
  add_op(OpKind::kSoftmax, node, {x}, output(node, 0, Placement::kDevice, desc(x).dims), {axis, coerce ? 1 : 0});
}

void Lowering::shape(const Node& node) {
  const int32_t x = input(node, 0);
  const int64_t rank = static_cast<int64_t>(desc(x).dims.size());
  auto clamp = [&](int64_t v) { return std::min(rank, std::max<int64_t>(0, v < 0 ? v + rank : v)); };
  const int64_t start = node.attr_int("start", 0), end = node.attr_int("end", std::numeric_limits<int64_t>::max());
  add_op(OpKind::kShape, node, {x}, output(node, 0, Placement::kHost, {std::max<int64_t>(0, clamp(end) - clamp(start))}),
         {start, end});
}

void Lowering::cast(const Node& node) {
  const int32_t x = input(node, 0);
  const int64_t to = node.attr_int("to", 0);
  if (is_integer(x) && (to == EPHOST_ELEMENT_INT64 || to == EPHOST_ELEMENT_INT32)) {
    require_host_integer(node, x);
    add_op(OpKind::kHostCast, node, {x}, output(node, 0, Placement::kHost, desc(x).dims));
    return;
  }
  if (is_device(x) && to == EPHOST_ELEMENT_FLOAT) {
    add_op(OpKind::kView, node, {x, -1}, output(node, 0, Placement::kDevice, desc(x).dims),
           {static_cast<int64_t>(ViewKind::kIdentity)});
    return;
  }
  unsupported("Cast of " + std::string(EphostElementTypeName(desc(x).elem_type)) + " to " +
              EphostElementTypeName(static_cast<int32_t>(to)) + " is not implemented");
}

void Lowering::slice(const Node& node) {
  const int32_t data = input(node, 0);
  require_host_integer(node, data);
  std::vector<int32_t> inputs = {data};
  if (node.opset() < 10) {
    const std::vector<int64_t> axes = node.attr_ints("axes");
    inputs.push_back(add_host_constant(node.attr_ints("starts"), node.name() + "#starts"));
    inputs.push_back(add_host_constant(node.attr_ints("ends"), node.name() + "#ends"));
    inputs.push_back(axes.empty() ? -1 : add_host_constant(axes, node.name() + "#axes"));
    inputs.push_back(-1);
  } else {
    for (size_t i = 1; i <= 4; ++i) {
      if (i >= 3 && !node.has_input(i)) {
        inputs.push_back(-1);
        continue;
      }
      const int32_t v = input(node, i);
      require_host_integer(node, v);
      inputs.push_back(v);
    }
  }
  add_op(OpKind::kHostSlice, node, inputs, output(node, 0, Placement::kHost, slice_dims(inputs)));
}

void Lowering::gather(const Node& node) {
  const int32_t data = input(node, 0), indices = input(node, 1);
  if (!is_integer(data)) unsupported("Gather of float tensors is not implemented");
  require_host_integer(node, data);
  require_host_integer(node, indices);
  if (normalized_axis(node.attr_int("axis", 0), 1, "axis") != 0) unsupported("axis");
  add_op(OpKind::kHostGather, node, {data, indices}, output(node, 0, Placement::kHost, desc(indices).dims));
}

void Lowering::constant(const Node& node) {
  if (!node.has_output(0)) unsupported("no output");
  const Value out = node.output(0);
  if (names_.count(out.name())) return;
  if (constant_of(out) < 0) unsupported("only Constant nodes with a `value` tensor are implemented");
}

}  // namespace ephost_opencl

namespace ephost_opencl {

std::vector<int64_t> Lowering::slice_dims(const std::vector<int32_t>& in) const {
  // The length of a 1-D slice, when its data length and all its parameters are known.
  const ValueDesc& data = desc(in[0]);
  auto constant = [&](int32_t v) { return v < 0 || desc(v).placement == Placement::kConstant; };
  if (data.dims.size() != 1 || data.dims[0] < 0 || !constant(in[1]) || !constant(in[2]) || !constant(in[3]) || !constant(in[4]))
    return {-1};
  const std::vector<int64_t>& starts = int_data(in[1]).data;
  const std::vector<int64_t>& ends = int_data(in[2]).data;
  const int64_t step = in[4] >= 0 && !int_data(in[4]).data.empty() ? int_data(in[4]).data[0] : 1;
  if (starts.size() != 1 || ends.size() != 1 || step == 0) return {-1};
  const int64_t n = data.dims[0];
  auto clamp = [&](int64_t v, int64_t lo, int64_t hi) { return std::min(hi, std::max(lo, v < 0 ? v + n : v)); };
  int64_t count = 0;
  if (step > 0) {
    for (int64_t i = clamp(starts[0], 0, n); i < clamp(ends[0], 0, n); i += step) ++count;
  } else {
    for (int64_t i = clamp(starts[0], -1, n - 1); i > clamp(ends[0], -1, n - 1); i += step) ++count;
  }
  return {count};
}

}  // namespace ephost_opencl
