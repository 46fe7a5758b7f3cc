#include "codegen.h"

#include <xxhash.h>

#include <climits>
#include <cmath>
#include <cstdio>
#include <map>

#include "codegen_writer.h"
#include "ephost/sdk/plugin.hpp"
#include "fusion.h"

namespace ephost_opencl {
namespace {

const char* const kCoordinates[4] = {"C0_", "C1_", "C2_", "C3_"};
const char* const kGrid[4] = {"GN", "GC", "GH", "GW"};

std::string index_for_broadcast(const Broadcast& b) {
  std::string idx;
  for (size_t d = 0; d < 4; ++d) {
    if (b.axis[d]) continue;
    idx = idx.empty() ? std::string("(") + kCoordinates[d] + ")" : "(" + idx + ") * " + kGrid[d] + " + (" + kCoordinates[d] + ")";
  }
  return idx.empty() ? "0" : idx;
}

// Index into a constant of static 4-D shape `dims` broadcast against the grid.
std::string index_for_constant(const std::vector<int64_t>& shape) {
  const std::array<int64_t, 4> d = as_4d(shape);
  std::string idx;
  for (size_t a = 0; a < 4; ++a) {
    if (d[a] == 1) continue;
    idx = idx.empty() ? std::string("(") + kCoordinates[a] + ")"
                      : "(" + idx + ") * " + std::to_string(d[a]) + " + (" + kCoordinates[a] + ")";
  }
  return idx.empty() ? "0" : idx;
}

std::string unary_expression(const Op& op, const std::string& x) {
  const auto& f = op.floats;
  switch (static_cast<UnaryOp>(op.ints[0])) {
    case UnaryOp::kRelu: return "fmax(" + x + ", 0.0f)";
    case UnaryOp::kSigmoid: return "1.0f / (1.0f + exp(-(" + x + ")))";
    case UnaryOp::kHardSigmoid:
      return "clamp(" + float_literal(f[0]) + " * " + x + " + " + float_literal(f[1]) + ", 0.0f, 1.0f)";
    case UnaryOp::kHardSwish: return x + " * clamp(" + x + " * (1.0f / 6.0f) + 0.5f, 0.0f, 1.0f)";
    case UnaryOp::kClip: return "fmin(fmax(" + x + ", " + float_literal(f[0]) + "), " + float_literal(f[1]) + ")";
    case UnaryOp::kLeakyRelu: return "(" + x + " >= 0.0f ? " + x + " : " + float_literal(f[0]) + " * " + x + ")";
    case UnaryOp::kTanh: return "tanh(" + x + ")";
    case UnaryOp::kNeg: return "-(" + x + ")";
    case UnaryOp::kAbs: return "fabs(" + x + ")";
    case UnaryOp::kExp: return "exp(" + x + ")";
    case UnaryOp::kSqrt: return "sqrt(" + x + ")";
    case UnaryOp::kIdentity: return x;
  }
  ephost::sdk::fail(EPHOST_INVALID_ARGUMENT, "program: unary code " + std::to_string(op.ints[0]));
}

const char* binary_operator(int64_t code) {
  switch (static_cast<BinaryOp>(code)) {
    case BinaryOp::kAdd: return " + ";
    case BinaryOp::kSub: return " - ";
    case BinaryOp::kMul: return " * ";
    case BinaryOp::kDiv: return " / ";
  }
  ephost::sdk::fail(EPHOST_INVALID_ARGUMENT, "program: binary code " + std::to_string(code));
}

class KernelWriter {
 public:
  KernelWriter(const Program& p, const KernelPlan& k, size_t index, const std::vector<uint64_t>& offsets)
      : p_(p), k_(k), index_(index), offsets_(offsets) {}

  void write(SourceWriter& out) {
    const std::vector<KernelParam> params = kernel_params(p_, k_);
    std::string signature;
    std::vector<std::string> main;
    size_t stores = 0, mains = 0, extras = 0;
    for (const KernelParam& param : params) {
      std::string name;
      switch (param.kind) {
        case KernelParam::Kind::kStore: name = "st" + std::to_string(stores++); break;
        case KernelParam::Kind::kMain:
          name = "mn" + std::to_string(mains++);
          main.push_back(name);
          break;
        case KernelParam::Kind::kExtra:
          name = "ex" + std::to_string(extras++);
          if (!extra_.count(param.value)) extra_[param.value] = name;
          break;
      }
      names_.push_back(name);
      signature += std::string(param.kind == KernelParam::Kind::kStore ? "__global float* " : "__global const float* ") + name +
                   ", const ulong " + name + "_o, ";
    }
    const std::string macro = "K" + std::to_string(index_) + "_STORE";
    write_store_macro(out, macro, params);
    out.line("__kernel __attribute__((reqd_work_group_size(" + std::to_string(p_.work_group_size) + ", 1, 1)))");
    out.open("void " + kernel_name(index_) + "(" + signature + "__global const float* wts, const int16 P, const float4 F)");
    for (const std::string& name : names_) out.line(name + " += " + name + "_o;");
    out.line("const int GN = P.s0, GC = P.s1, GH = P.s2, GW = P.s3;");
    AnchorContext ctx{p_, k_, main, macro, offsets_};
    emit_anchor(ctx, out);
    out.close();
    out.line("#undef " + macro);
    out.line("");
  }

 private:
  // #define K<i>_STORE(V_, O_, C0_, C1_, C2_, C3_): the kernel's elementwise chain on the anchor's value V_ at
  // output index O_ and grid coordinates C0_..C3_, and the stores.
  void write_store_macro(SourceWriter& out, const std::string& macro, const std::vector<KernelParam>& params) {
    std::map<int32_t, std::string> registers;
    std::string body = "do { ";
    if (k_.anchor >= 0) {
      registers[p_.ops[static_cast<size_t>(k_.anchor)].outputs[0]] = "a0";
      body += "const float a0 = (V_); ";
    }
    for (size_t i = 0; i < k_.epilogue.size(); ++i) {
      const Op& op = p_.ops[static_cast<size_t>(k_.epilogue[i])];
      const std::string t = "t" + std::to_string(i);
      body += "const float " + t + " = " + expression(op, registers) + "; ";
      registers[op.outputs[0]] = t;
    }
    size_t store = 0;
    for (const KernelParam& param : params)
      if (param.kind == KernelParam::Kind::kStore) body += "st" + std::to_string(store++) + "[O_] = " + registers.at(param.value) + "; ";
    body += "} while (0)";
    out.line("#define " + macro + "(V_, O_, C0_, C1_, C2_, C3_) " + body);
  }

  std::string operand(int32_t v, const std::map<int32_t, std::string>& registers) const {
    auto r = registers.find(v);
    if (r != registers.end()) return r->second;
    const ValueDesc& d = p_.values[static_cast<size_t>(v)];
    if (d.placement == Placement::kConstant) {
      const std::vector<float>& w = p_.weights[static_cast<size_t>(d.constant)];
      if (w.size() == 1) return float_literal(w[0]);
      return "wts[" + std::to_string(offsets_[static_cast<size_t>(d.constant)]) + " + " + index_for_constant(d.dims) + "]";
    }
    return extra_.at(v) + "[" + index_for_broadcast(broadcast_of(d.dims)) + "]";
  }

  std::string expression(const Op& op, const std::map<int32_t, std::string>& registers) const {
    switch (op.kind) {
      case OpKind::kUnary: return unary_expression(op, operand(op.inputs[0], registers));
      case OpKind::kBinary:
        return "(" + operand(op.inputs[0], registers) + binary_operator(op.ints[0]) + operand(op.inputs[1], registers) + ")";
      case OpKind::kChannelAffine: {
        const size_t rank = p_.values[static_cast<size_t>(op.inputs[0])].dims.size();
        const std::string c = kCoordinates[4 - rank + 1];
        const auto& scale = p_.values[static_cast<size_t>(op.inputs[1])];
        const auto& shift = p_.values[static_cast<size_t>(op.inputs[2])];
        return "(" + operand(op.inputs[0], registers) + " * wts[" + std::to_string(offsets_[static_cast<size_t>(scale.constant)]) +
               " + (" + c + ")] + wts[" + std::to_string(offsets_[static_cast<size_t>(shift.constant)]) + " + (" + c + ")])";
      }
      default: ephost::sdk::fail(EPHOST_INVALID_ARGUMENT, "program: op '" + op.name + "' is not elementwise");
    }
  }

  const Program& p_;
  const KernelPlan& k_;
  size_t index_;
  const std::vector<uint64_t>& offsets_;
  std::map<int32_t, std::string> extra_;
  std::vector<std::string> names_;
};

}  // namespace

std::string float_literal(float v) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "(-INFINITY)";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9g", static_cast<double>(v));
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return "(" + s + "f)";
}

void emit_grid_coordinates(SourceWriter& out, const std::string& index) {
  out.line("int r_ = " + index + ";");
  out.line("const int c3 = r_ % GW; r_ /= GW;");
  out.line("const int c2 = r_ % GH; r_ /= GH;");
  out.line("const int c1 = r_ % GC;");
  out.line("const int c0 = r_ / GC;");
}

std::vector<KernelParam> kernel_params(const Program& program, const KernelPlan& k) {
  std::vector<KernelParam> params;
  for (int32_t v : k.stores) params.push_back({KernelParam::Kind::kStore, v});
  const KernelReads reads = kernel_reads(program, k);
  for (int32_t v : reads.main) params.push_back({KernelParam::Kind::kMain, v});
  for (int32_t v : reads.extra) params.push_back({KernelParam::Kind::kExtra, v});
  return params;
}

size_t kernel_arg_count(const Program& program, const KernelPlan& k) { return kernel_params(program, k).size() * 2 + 3; }

uint32_t kernel_work_dims(const Program& program, const KernelPlan& k) {
  if (k.anchor < 0) return 1;
  const OpKind kind = program.ops[static_cast<size_t>(k.anchor)].kind;
  return kind == OpKind::kConv || kind == OpKind::kConvTranspose ? 3 : 1;
}

std::string kernel_name(size_t index) { return "k" + std::to_string(index); }

std::string generate_source(const Program& program) {
  uint64_t total = 0;
  const std::vector<uint64_t> offsets = weight_offsets(program, &total);
  if (total > static_cast<uint64_t>(INT_MAX)) ephost::sdk::fail(EPHOST_NOT_IMPLEMENTED, "opencl: more than 2^31 weights");
  SourceWriter out;
  out.line("// Generated by the ephost OpenCL plugin: " + std::to_string(program.kernels.size()) + " kernels.");
  out.line("");
  for (size_t i = 0; i < program.kernels.size(); ++i) KernelWriter(program, program.kernels[i], i, offsets).write(out);
  return out.text();
}

uint64_t source_hash(const std::string& source) { return XXH64(source.data(), source.size(), 0); }

std::string build_options(const DeviceIdentity& device) {
  std::string options = "-cl-std=CL1.2";
  if (device.correctly_rounded_divide) options += " -cl-fp32-correctly-rounded-divide-sqrt";
  return options;
}

}  // namespace ephost_opencl
