#include "program.h"

#include <algorithm>
#include <string>

#include "ephost/sdk/plugin.hpp"

namespace ephost_opencl {
namespace {

constexpr int64_t kMaxWindow = 1 << 16;  // kernel sizes, strides, dilations, pads

[[noreturn]] void invalid(const std::string& what) { ephost::sdk::fail(EPHOST_INVALID_ARGUMENT, "program: " + what); }

int64_t product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

class Validator {
 public:
  explicit Validator(const Program& p) : p_(p), defined_(p.values.size(), false) {}

  void run() {
    if (p_.work_group_size == 0 || p_.work_group_size > 1024) invalid("work group size " + std::to_string(p_.work_group_size));
    for (size_t v = 0; v < p_.values.size(); ++v) check_value(v);
    for (int32_t v : p_.inputs) {
      check_index(v, "input");
      if (p_.values[v].placement == Placement::kConstant) invalid("input '" + p_.values[v].name + "' is a constant");
      defined_[v] = true;
    }
    for (size_t v = 0; v < p_.values.size(); ++v)
      if (p_.values[v].placement == Placement::kConstant) defined_[v] = true;
    for (size_t i = 0; i < p_.ops.size(); ++i) check_op(p_.ops[i]);
    for (int32_t v : p_.outputs) {
      check_index(v, "output");
      if (!defined_[v]) invalid("output '" + p_.values[v].name + "' is never computed");
    }
    for (const KernelPlan& k : p_.kernels) check_kernel(k);
  }

 private:
  void check_index(int32_t v, const char* what) const {
    if (v < 0 || static_cast<size_t>(v) >= p_.values.size()) invalid(std::string(what) + " value " + std::to_string(v) + " out of range");
  }
  void check_value(size_t v) const {
    const ValueDesc& d = p_.values[v];
    if (d.dims.size() > 8) invalid("value '" + d.name + "' has rank " + std::to_string(d.dims.size()));
    for (int64_t x : d.dims)
      if (x < -1) invalid("value '" + d.name + "' has a dimension " + std::to_string(x));
    switch (d.placement) {
      case Placement::kDevice:
        if (d.elem_type != EPHOST_ELEMENT_FLOAT || d.dims.size() > 4) invalid("device value '" + d.name + "' is not a float tensor of rank <= 4");
        break;
      case Placement::kHost:
        if (d.elem_type != EPHOST_ELEMENT_INT64 && d.elem_type != EPHOST_ELEMENT_INT32) invalid("host value '" + d.name + "' is not an integer tensor");
        break;
      case Placement::kConstant: {
        for (int64_t x : d.dims)
          if (x < 0) invalid("constant '" + d.name + "' has an unknown dimension");
        const int64_t n = product(d.dims);
        if (d.elem_type == EPHOST_ELEMENT_FLOAT) {
          if (d.constant < 0 || static_cast<size_t>(d.constant) >= p_.weights.size() ||
              static_cast<int64_t>(p_.weights[d.constant].size()) != n)
            invalid("float constant '" + d.name + "' does not match its weight");
        } else if (d.elem_type == EPHOST_ELEMENT_INT64 || d.elem_type == EPHOST_ELEMENT_INT32) {
          if (d.constant < 0 || static_cast<size_t>(d.constant) >= p_.host_constants.size() ||
              static_cast<int64_t>(p_.host_constants[d.constant].data.size()) != n ||
              p_.host_constants[d.constant].shape != d.dims)
            invalid("integer constant '" + d.name + "' does not match its data");
        } else {
          invalid("constant '" + d.name + "' has element type " + std::to_string(d.elem_type));
        }
        break;
      }
      default: invalid("value '" + d.name + "' has placement " + std::to_string(static_cast<uint32_t>(d.placement)));
    }
  }
  const ValueDesc& operand(const Op& op, size_t i) const {
    if (i >= op.inputs.size()) invalid("op '" + op.name + "' lacks input " + std::to_string(i));
    const int32_t v = op.inputs[i];
    check_index(v, "op input");
    if (!defined_[v]) invalid("op '" + op.name + "' reads '" + p_.values[v].name + "' before it is computed");
    return p_.values[v];
  }
  void device_operand(const Op& op, size_t i, size_t min_rank, size_t max_rank) const {
    const ValueDesc& d = operand(op, i);
    if (d.placement != Placement::kDevice || d.dims.size() < min_rank || d.dims.size() > max_rank)
      invalid("op '" + op.name + "' input " + std::to_string(i) + " is not a device tensor of rank " +
              std::to_string(min_rank) + ".." + std::to_string(max_rank));
  }
  void integer_operand(const Op& op, size_t i) const {
    const ValueDesc& d = operand(op, i);
    const bool integer = d.elem_type == EPHOST_ELEMENT_INT64 || d.elem_type == EPHOST_ELEMENT_INT32;
    if (!integer || d.placement == Placement::kDevice || d.dims.size() > 1)
      invalid("op '" + op.name + "' input " + std::to_string(i) + " is not an integer host tensor of rank <= 1");
  }
  void optional_integer_operand(const Op& op, size_t i) const {
    if (i < op.inputs.size() && op.inputs[i] >= 0) integer_operand(op, i);
  }
  void float_operand(const Op& op, size_t i) const {
    const ValueDesc& d = operand(op, i);
    if (d.elem_type != EPHOST_ELEMENT_FLOAT || d.placement == Placement::kHost || d.dims.size() > 4)
      invalid("op '" + op.name + "' input " + std::to_string(i) + " is not a float tensor of rank <= 4");
  }
  void weight(const Op& op, int64_t index, int64_t size) const {
    if (index < 0 || static_cast<size_t>(index) >= p_.weights.size() ||
        static_cast<int64_t>(p_.weights[index].size()) != size)
      invalid("op '" + op.name + "' refers to weight " + std::to_string(index) + " of the wrong size");
  }
  void ints(const Op& op, size_t n) const {
    if (op.ints.size() != n) invalid("op '" + op.name + "' has " + std::to_string(op.ints.size()) + " integer parameters");
  }
  void window(const Op& op, const std::vector<int64_t>& values, int64_t minimum) const {
    for (int64_t v : values)
      if (v < minimum || v > kMaxWindow) invalid("op '" + op.name + "' has a window parameter " + std::to_string(v));
  }

  void check_conv(const Op& op) const {
    ints(op, kConvIntCount);
    device_operand(op, 0, 4, 4);
    const auto& c = op.ints;
    window(op, {c[kConvKh], c[kConvKw], c[kConvSh], c[kConvSw], c[kConvDh], c[kConvDw], c[kConvGroup], c[kConvBlock]}, 1);
    window(op, {c[kConvPadTop], c[kConvPadLeft], c[kConvPadBottom], c[kConvPadRight], c[kConvOutPadH], c[kConvOutPadW]}, 0);
    const int64_t g = c[kConvGroup], cin = c[kConvCin], cout = c[kConvCout];
    if (cin < 1 || cout < 1 || cin > (1 << 20) || cout > (1 << 20) || cin % g || cout % g || (cout / g) % c[kConvBlock])
      invalid("op '" + op.name + "' has inconsistent channel counts");
    const int64_t block = c[kConvBlock];
    if (block != 1 && block != 2 && block != 4 && block != 8 && block != 16) invalid("op '" + op.name + "' has channel block " + std::to_string(block));
    weight(op, c[kConvWeight], cout * (cin / g) * c[kConvKh] * c[kConvKw]);
    if (c[kConvBias] != -1) weight(op, c[kConvBias], cout);
  }
  void check_pool(const Op& op) const {
    ints(op, kPoolIntCount);
    device_operand(op, 0, 4, 4);
    const auto& c = op.ints;
    window(op, {c[kPoolKh], c[kPoolKw], c[kPoolSh], c[kPoolSw], c[kPoolDh], c[kPoolDw]}, 1);
    window(op, {c[kPoolPadTop], c[kPoolPadLeft], c[kPoolPadBottom], c[kPoolPadRight], c[kPoolCeil], c[kPoolCountIncludePad]}, 0);
  }
  void check_op(const Op& op) {
    if (op.outputs.size() != 1) invalid("op '" + op.name + "' has " + std::to_string(op.outputs.size()) + " outputs");
    const int32_t out = op.outputs[0];
    check_index(out, "op output");
    if (defined_[out]) invalid("value '" + p_.values[out].name + "' is computed twice");
    const ValueDesc& o = p_.values[out];
    const bool host_op = op.kind >= OpKind::kShape;
    if (host_op ? o.placement != Placement::kHost : o.placement != Placement::kDevice)
      invalid("op '" + op.name + "' makes '" + o.name + "' in the wrong place");
    switch (op.kind) {
      case OpKind::kConv:
      case OpKind::kConvTranspose: check_conv(op); break;
      case OpKind::kMaxPool:
      case OpKind::kAveragePool: check_pool(op); break;
      case OpKind::kGlobalAveragePool:
      case OpKind::kGlobalMaxPool: device_operand(op, 0, 4, 4); break;
      case OpKind::kResize:
        device_operand(op, 0, 4, 4);
        optional_integer_operand(op, 1);
        ints(op, 3);
        if (op.floats.size() != 2 || op.ints[0] < 0 || op.ints[0] > 1 || op.ints[1] < 0 || op.ints[1] > 4 || op.ints[2] < 0 ||
            op.ints[2] > 3)
          invalid("op '" + op.name + "' has invalid resize parameters");
        break;
      case OpKind::kConcat:
        if (op.inputs.empty() || op.inputs.size() > 8) invalid("op '" + op.name + "' concatenates " + std::to_string(op.inputs.size()) + " tensors");
        for (size_t i = 0; i < op.inputs.size(); ++i) device_operand(op, i, o.dims.size(), o.dims.size());
        ints(op, 1);
        if (op.ints[0] < 0 || op.ints[0] >= static_cast<int64_t>(o.dims.size())) invalid("op '" + op.name + "' has axis " + std::to_string(op.ints[0]));
        break;
      case OpKind::kMatMul: {
        device_operand(op, 0, 2, 4);
        float_operand(op, 1);
        const ValueDesc& b = operand(op, 1);
        if (b.dims.size() < 2) invalid("op '" + op.name + "' has a B of rank " + std::to_string(b.dims.size()));
        ints(op, 2);
        if (op.floats.size() != 1 || (op.ints[0] | op.ints[1]) & ~int64_t{1}) invalid("op '" + op.name + "' has invalid parameters");
        break;
      }
      case OpKind::kSoftmax:
        device_operand(op, 0, 1, 4);
        ints(op, 2);
        if (op.ints[0] < 0 || op.ints[0] >= static_cast<int64_t>(o.dims.size())) invalid("op '" + op.name + "' has axis " + std::to_string(op.ints[0]));
        break;
      case OpKind::kTranspose: {
        device_operand(op, 0, 1, 4);
        std::vector<int64_t> perm = op.ints;
        std::sort(perm.begin(), perm.end());
        for (size_t i = 0; i < perm.size(); ++i)
          if (perm[i] != static_cast<int64_t>(i)) invalid("op '" + op.name + "' has an invalid permutation");
        if (perm.size() != operand(op, 0).dims.size()) invalid("op '" + op.name + "' has a permutation of the wrong rank");
        break;
      }
      case OpKind::kUnary: {
        device_operand(op, 0, 0, 4);
        ints(op, 1);
        const int64_t code = op.ints[0];
        if (code < 0 || code > static_cast<int64_t>(UnaryOp::kIdentity)) invalid("op '" + op.name + "' has unary code " + std::to_string(code));
        const UnaryOp u = static_cast<UnaryOp>(code);
        const size_t params = u == UnaryOp::kHardSigmoid || u == UnaryOp::kClip ? 2 : u == UnaryOp::kLeakyRelu ? 1 : 0;
        if (op.floats.size() != params) invalid("op '" + op.name + "' has " + std::to_string(op.floats.size()) + " float parameters");
        break;
      }
      case OpKind::kBinary: {
        float_operand(op, 0);
        float_operand(op, 1);
        ints(op, 1);
        if (op.ints[0] < 0 || op.ints[0] > static_cast<int64_t>(BinaryOp::kDiv)) invalid("op '" + op.name + "' has binary code");
        if (operand(op, 0).placement != Placement::kDevice && operand(op, 1).placement != Placement::kDevice)
          invalid("op '" + op.name + "' has constant operands only");
        break;
      }
      case OpKind::kChannelAffine: {
        device_operand(op, 0, 2, 4);
        const ValueDesc& s = operand(op, 1);
        const ValueDesc& t = operand(op, 2);
        if (s.placement != Placement::kConstant || t.placement != Placement::kConstant || s.elem_type != EPHOST_ELEMENT_FLOAT ||
            t.elem_type != EPHOST_ELEMENT_FLOAT || product(s.dims) != product(t.dims))
          invalid("op '" + op.name + "' has invalid scale and shift");
        break;
      }
      case OpKind::kView: {
        device_operand(op, 0, 0, 4);
        optional_integer_operand(op, 1);
        if (op.ints.empty() || op.ints[0] < 0 || op.ints[0] > static_cast<int64_t>(ViewKind::kIdentity))
          invalid("op '" + op.name + "' has an invalid view kind");
        if (static_cast<ViewKind>(op.ints[0]) == ViewKind::kReshape && (op.inputs.size() < 2 || op.inputs[1] < 0))
          invalid("op '" + op.name + "' reshapes without a shape");
        break;
      }
      case OpKind::kShape:
        operand(op, 0);
        ints(op, 2);
        break;
      case OpKind::kHostCast:
      case OpKind::kHostUnsqueeze:
      case OpKind::kHostSqueeze: integer_operand(op, 0); break;
      case OpKind::kHostSlice:
        integer_operand(op, 0);
        integer_operand(op, 1);
        integer_operand(op, 2);
        optional_integer_operand(op, 3);
        optional_integer_operand(op, 4);
        break;
      case OpKind::kHostConcat:
        if (op.inputs.empty()) invalid("op '" + op.name + "' concatenates nothing");
        for (size_t i = 0; i < op.inputs.size(); ++i) integer_operand(op, i);
        break;
      case OpKind::kHostGather:
        integer_operand(op, 0);
        integer_operand(op, 1);
        break;
      case OpKind::kHostBinary:
        integer_operand(op, 0);
        integer_operand(op, 1);
        ints(op, 1);
        if (op.ints[0] < 0 || op.ints[0] > static_cast<int64_t>(BinaryOp::kDiv)) invalid("op '" + op.name + "' has binary code");
        break;
      default: invalid("op '" + op.name + "' has kind " + std::to_string(static_cast<uint32_t>(op.kind)));
    }
    if (op.kind < OpKind::kUnary && o.dims.size() != operand(op, 0).dims.size() && op.kind != OpKind::kMatMul)
      invalid("op '" + op.name + "' changes the rank");
    defined_[out] = true;
  }
  void check_kernel(const KernelPlan& k) const {
    auto op_index = [&](int32_t i) {
      if (i < 0 || static_cast<size_t>(i) >= p_.ops.size()) invalid("kernel op " + std::to_string(i) + " out of range");
      return &p_.ops[i];
    };
    if (k.anchor >= 0 && op_index(k.anchor)->kind >= OpKind::kUnary) invalid("kernel anchor is not an anchor op");
    if (k.anchor < 0 && k.epilogue.empty()) invalid("kernel computes nothing");
    for (int32_t e : k.epilogue) {
      const OpKind kind = op_index(e)->kind;
      if (kind != OpKind::kUnary && kind != OpKind::kBinary && kind != OpKind::kChannelAffine) invalid("kernel fuses a non-elementwise op");
    }
    check_index(k.grid_value, "kernel grid");
    if (p_.values[k.grid_value].placement != Placement::kDevice) invalid("kernel grid is not a device value");
    if (k.stores.empty()) invalid("kernel stores nothing");
    for (int32_t s : k.stores) {
      check_index(s, "kernel store");
      if (p_.values[s].placement != Placement::kDevice || p_.values[s].dims.size() != p_.values[k.grid_value].dims.size())
        invalid("kernel stores '" + p_.values[s].name + "' which is not on its grid");
    }
  }

  const Program& p_;
  std::vector<bool> defined_;
};

}  // namespace

std::vector<uint64_t> weight_offsets(const Program& program, uint64_t* total_floats) {
  std::vector<uint64_t> offsets;
  uint64_t at = 0;
  for (const auto& w : program.weights) {
    offsets.push_back(at);
    at += (static_cast<uint64_t>(w.size()) + 15) / 16 * 16;
  }
  if (total_floats) *total_floats = at;
  return offsets;
}

void validate(const Program& program) { Validator(program).run(); }

}  // namespace ephost_opencl
