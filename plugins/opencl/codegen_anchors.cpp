// The computations that anchor kernels (codegen.h): each ends by calling the kernel's STORE macro once per
// output element it computes.
#include <string>

#include "codegen_writer.h"
#include "ephost/sdk/plugin.hpp"
#include "fusion.h"

namespace ephost_opencl {
namespace {

using std::to_string;

std::string store(const AnchorContext& ctx, const std::string& v, const std::string& o, const std::string& c0,
                  const std::string& c1, const std::string& c2, const std::string& c3) {
  return ctx.store_macro + "(" + v + ", " + o + ", " + c0 + ", " + c1 + ", " + c2 + ", " + c3 + ");";
}

// The 1-D grid prologue: one work item per output element.
void grid_prologue(SourceWriter& out) {
  out.line("const int o = get_global_id(0);");
  out.line("if (o >= GN * GC * GH * GW) return;");
  emit_grid_coordinates(out, "o");
}

std::string vector_type(int64_t block) { return block == 1 ? "float" : "float" + to_string(block); }

std::string vector_load(int64_t block, const std::string& pointer) {
  return block == 1 ? "(" + pointer + ")[0]" : "vload" + to_string(block) + "(0, " + pointer + ")";
}

std::string lane(int64_t block, int64_t j) {
  static const char* hex = "0123456789abcdef";
  return block == 1 ? "acc" : std::string("acc.s") + hex[j];
}

void conv(const AnchorContext& ctx, const Op& op, SourceWriter& out) {
  const auto& c = op.ints;
  const bool transpose = op.kind == OpKind::kConvTranspose;
  const int64_t g = c[kConvGroup], cin_g = c[kConvCin] / g, cout_g = c[kConvCout] / g, block = c[kConvBlock];
  const int64_t kh = c[kConvKh], kw = c[kConvKw];
  const std::string type = vector_type(block), splat = block == 1 ? "" : "(" + type + ")";
  const uint64_t w_off = ctx.weight_offset[static_cast<size_t>(c[kConvWeight])];
  out.line("const int p = get_global_id(0), cb = get_global_id(1), n = get_global_id(2);");
  out.line("const int OHW = GH * GW;");
  out.line("if (p >= OHW || n >= GN) return;");
  out.line("const int XH = P.s6, XW = P.s7;");
  out.line("const int oh = p / GW, ow = p - oh * GW;");
  out.line("const int co = cb * " + to_string(block) + ";");
  out.line("const int g = co / " + to_string(cout_g) + ";");
  out.line("const __global float* xp = " + ctx.main[0] + " + (n * " + to_string(c[kConvCin]) + " + g * " + to_string(cin_g) +
           ") * XH * XW;");
  out.line("const __global float* wp = wts + " + to_string(w_off) + " + cb * " + to_string(cin_g * kh * kw * block) + ";");
  if (c[kConvBias] >= 0)
    out.line(type + " acc = " + vector_load(block, "wts + " + to_string(ctx.weight_offset[static_cast<size_t>(c[kConvBias])]) + " + co") + ";");
  else
    out.line(type + " acc = " + splat + "(0.0f);");
  const bool pointwise = !transpose && kh == 1 && kw == 1 && c[kConvSh] == 1 && c[kConvSw] == 1 && c[kConvPadTop] == 0 &&
                         c[kConvPadLeft] == 0 && c[kConvPadBottom] == 0 && c[kConvPadRight] == 0;
  if (pointwise) {
    out.line("const __global float* xq = xp + p;");
    out.open("for (int ci = 0; ci < " + to_string(cin_g) + "; ++ci)");
    out.line("acc = mad(" + vector_load(block, "wp + ci * " + to_string(block)) + ", " + splat + "(xq[ci * OHW]), acc);");
    out.close();
  } else {
    out.open("for (int ci = 0; ci < " + to_string(cin_g) + "; ++ci)");
    out.line("const __global float* xc = xp + ci * XH * XW;");
    out.line("const __global float* wc = wp + ci * " + to_string(kh * kw * block) + ";");
    out.open("for (int kh = 0; kh < " + to_string(kh) + "; ++kh)");
    if (transpose) {
      out.line("const int th = oh + " + to_string(c[kConvPadTop]) + " - kh * " + to_string(c[kConvDh]) + ";");
      out.line("if (th < 0) continue;");
      out.line("const int ih = th / " + to_string(c[kConvSh]) + ";");
      out.line("if (ih * " + to_string(c[kConvSh]) + " != th || ih >= XH) continue;");
    } else {
      out.line("const int ih = oh * " + to_string(c[kConvSh]) + " - " + to_string(c[kConvPadTop]) + " + kh * " + to_string(c[kConvDh]) + ";");
      out.line("if (ih < 0 || ih >= XH) continue;");
    }
    out.open("for (int kw = 0; kw < " + to_string(kw) + "; ++kw)");
    if (transpose) {
      out.line("const int tw = ow + " + to_string(c[kConvPadLeft]) + " - kw * " + to_string(c[kConvDw]) + ";");
      out.line("if (tw < 0) continue;");
      out.line("const int iw = tw / " + to_string(c[kConvSw]) + ";");
      out.line("if (iw * " + to_string(c[kConvSw]) + " != tw || iw >= XW) continue;");
    } else {
      out.line("const int iw = ow * " + to_string(c[kConvSw]) + " - " + to_string(c[kConvPadLeft]) + " + kw * " + to_string(c[kConvDw]) + ";");
      out.line("if (iw < 0 || iw >= XW) continue;");
    }
    out.line("acc = mad(" + vector_load(block, "wc + (kh * " + to_string(kw) + " + kw) * " + to_string(block)) + ", " + splat +
             "(xc[ih * XW + iw]), acc);");
    out.close();
    out.close();
    out.close();
  }
  out.line("const int o0 = ((n * GC + co) * GH + oh) * GW + ow;");
  for (int64_t j = 0; j < block; ++j)
    out.line(store(ctx, lane(block, j), "o0 + " + to_string(j) + " * OHW", "n", "co + " + to_string(j), "oh", "ow"));
}

void pool(const AnchorContext& ctx, const Op& op, SourceWriter& out) {
  const auto& c = op.ints;
  const bool max = op.kind == OpKind::kMaxPool;
  grid_prologue(out);
  out.line("const int XH = P.s6, XW = P.s7;");
  out.line("const __global float* xp = " + ctx.main[0] + " + (c0 * GC + c1) * XH * XW;");
  out.line("const int ih0 = c2 * " + to_string(c[kPoolSh]) + " - " + to_string(c[kPoolPadTop]) + ";");
  out.line("const int iw0 = c3 * " + to_string(c[kPoolSw]) + " - " + to_string(c[kPoolPadLeft]) + ";");
  out.line(max ? "float v = -INFINITY;" : "float s = 0.0f; int count = 0;");
  out.open("for (int kh = 0; kh < " + to_string(c[kPoolKh]) + "; ++kh)");
  out.line("const int ih = ih0 + kh * " + to_string(c[kPoolDh]) + ";");
  out.line("if (ih < 0 || ih >= XH) continue;");
  out.open("for (int kw = 0; kw < " + to_string(c[kPoolKw]) + "; ++kw)");
  out.line("const int iw = iw0 + kw * " + to_string(c[kPoolDw]) + ";");
  out.line("if (iw < 0 || iw >= XW) continue;");
  out.line(max ? "v = fmax(v, xp[ih * XW + iw]);" : "s += xp[ih * XW + iw]; ++count;");
  out.close();
  out.close();
  if (!max) {
    if (c[kPoolCountIncludePad]) {
      out.line("const int hend = min(ih0 + " + to_string(c[kPoolKh]) + ", XH + " + to_string(c[kPoolPadBottom]) + ");");
      out.line("const int wend = min(iw0 + " + to_string(c[kPoolKw]) + ", XW + " + to_string(c[kPoolPadRight]) + ");");
      out.line("const float v = s / (float)((hend - ih0) * (wend - iw0));");
    } else {
      out.line("const float v = count > 0 ? s / (float)count : 0.0f;");
    }
  }
  out.line(store(ctx, "v", "o", "c0", "c1", "c2", "c3"));
}

void global_pool(const AnchorContext& ctx, const Op& op, SourceWriter& out) {
  const bool max = op.kind == OpKind::kGlobalMaxPool;
  out.line("const int o = get_global_id(0);");
  out.line("if (o >= GN * GC) return;");
  out.line("const int c0 = o / GC, c1 = o - c0 * GC;");
  out.line("const int HW = P.s6 * P.s7;");
  out.line("const __global float* xp = " + ctx.main[0] + " + o * HW;");
  out.line(max ? "float v = -INFINITY;" : "float s = 0.0f;");
  out.line(max ? "for (int i = 0; i < HW; ++i) v = fmax(v, xp[i]);" : "for (int i = 0; i < HW; ++i) s += xp[i];");
  if (!max) out.line("const float v = s / (float)HW;");
  out.line(store(ctx, "v", "o", "c0", "c1", "0", "0"));
}

std::string original_coordinate(CoordinateMode mode, const std::string& x, const std::string& scale, const std::string& out_len,
                                const std::string& in_len) {
  switch (mode) {
    case CoordinateMode::kHalfPixel: return "((float)" + x + " + 0.5f) / " + scale + " - 0.5f";
    case CoordinateMode::kAsymmetric: return "(float)" + x + " / " + scale;
    case CoordinateMode::kAlignCorners:
      return "(" + out_len + " == 1 ? 0.0f : (float)" + x + " * (float)(" + in_len + " - 1) / (float)(" + out_len + " - 1))";
    case CoordinateMode::kPytorchHalfPixel:
      return "(" + out_len + " > 1 ? ((float)" + x + " + 0.5f) / " + scale + " - 0.5f : 0.0f)";
    case CoordinateMode::kTfHalfPixelForNn: return "((float)" + x + " + 0.5f) / " + scale;
  }
  ephost::sdk::fail(EPHOST_INVALID_ARGUMENT, "program: coordinate mode");
}

std::string nearest_index(NearestMode mode, const std::string& f) {
  switch (mode) {
    case NearestMode::kRoundPreferFloor: return "(int)(" + f + " == (float)(int)" + f + " + 0.5f ? floor(" + f + ") : round(" + f + "))";
    case NearestMode::kRoundPreferCeil: return "(int)round(" + f + ")";
    case NearestMode::kFloor: return "(int)floor(" + f + ")";
    case NearestMode::kCeil: return "(int)ceil(" + f + ")";
  }
  ephost::sdk::fail(EPHOST_INVALID_ARGUMENT, "program: nearest mode");
}

void resize(const AnchorContext& ctx, const Op& op, SourceWriter& out) {
  const auto mode = static_cast<CoordinateMode>(op.ints[1]);
  grid_prologue(out);
  out.line("const int XH = P.s6, XW = P.s7;");
  out.line("const __global float* xp = " + ctx.main[0] + " + (c0 * GC + c1) * XH * XW;");
  out.line("float fy = " + original_coordinate(mode, "c2", "F.s0", "GH", "XH") + ";");
  out.line("float fx = " + original_coordinate(mode, "c3", "F.s1", "GW", "XW") + ";");
  if (static_cast<ResizeMode>(op.ints[0]) == ResizeMode::kNearest) {
    const auto nearest = static_cast<NearestMode>(op.ints[2]);
    out.line("const int iy = clamp(" + nearest_index(nearest, "fy") + ", 0, XH - 1);");
    out.line("const int ix = clamp(" + nearest_index(nearest, "fx") + ", 0, XW - 1);");
    out.line("const float v = xp[iy * XW + ix];");
  } else {
    out.line("fy = clamp(fy, 0.0f, (float)(XH - 1));");
    out.line("fx = clamp(fx, 0.0f, (float)(XW - 1));");
    out.line("const int y0 = (int)fy, x0 = (int)fx;");
    out.line("const int y1 = min(y0 + 1, XH - 1), x1 = min(x0 + 1, XW - 1);");
    out.line("float dy1 = fy - (float)y0, dx1 = fx - (float)x0;");
    out.line("if (y0 == y1) dy1 = 0.5f;");
    out.line("if (x0 == x1) dx1 = 0.5f;");
    out.line("const float dy2 = 1.0f - dy1, dx2 = 1.0f - dx1;");
    out.line("const float v = dy2 * dx2 * xp[y0 * XW + x0] + dy2 * dx1 * xp[y0 * XW + x1] + dy1 * dx2 * xp[y1 * XW + x0] + "
             "dy1 * dx1 * xp[y1 * XW + x1];");
  }
  out.line(store(ctx, "v", "o", "c0", "c1", "c2", "c3"));
}

// Products and linear indices over the grid axes before / after axis `a` (of the 4-D grid).
std::string grid_product(size_t from, size_t to) {
  static const char* dims[4] = {"GN", "GC", "GH", "GW"};
  std::string s = "1";
  for (size_t d = from; d < to; ++d) s += " * " + std::string(dims[d]);
  return s;
}
std::string grid_linear(size_t from, size_t to) {
  static const char* dims[4] = {"GN", "GC", "GH", "GW"};
  std::string s = "0";
  for (size_t d = from; d < to; ++d) s = "(" + s + ") * " + dims[d] + " + c" + to_string(d);
  return s;
}

void concat(const AnchorContext& ctx, const Op& op, SourceWriter& out) {
  const size_t rank = ctx.program.values[static_cast<size_t>(op.outputs[0])].dims.size();
  const size_t axis = static_cast<size_t>(op.ints[0]) + 4 - rank;
  grid_prologue(out);
  out.line("const int inner = " + grid_product(axis + 1, 4) + ";");
  out.line("const int outer_i = " + grid_linear(0, axis) + ", inner_i = " + grid_linear(axis + 1, 4) + ";");
  out.line("int q = c" + to_string(axis) + ";");
  out.line("float v;");
  // An if-else chain: input j when q is within its part of the axis, else on to input j + 1.
  for (size_t j = 0; j < ctx.main.size(); ++j) {
    const std::string s = std::string("P.s") + "0123456789abcdef"[8 + j];
    const std::string read = "v = " + ctx.main[j] + "[(outer_i * " + s + " + q) * inner + inner_i];";
    out.line(j + 1 == ctx.main.size() ? read : "if (q < " + s + ") { " + read + " } else { q -= " + s + ";");
  }
  out.line(std::string(ctx.main.size() - 1, '}'));
  out.line(store(ctx, "v", "o", "c0", "c1", "c2", "c3"));
}

void matmul(const AnchorContext& ctx, const Op& op, SourceWriter& out) {
  const bool ta = op.ints[0] != 0, tb = op.ints[1] != 0;
  const ValueDesc& b = ctx.program.values[static_cast<size_t>(op.inputs[1])];
  grid_prologue(out);
  out.line("const int A1 = P.s4, A2 = P.s5, AR = P.s6, AC = P.s7;");
  out.line("const __global float* ap = " + ctx.main[0] + " + ((A1 == 1 ? 0 : c0) * A2 + (A2 == 1 ? 0 : c1)) * (AR * AC);");
  if (b.placement == Placement::kConstant) {
    const std::array<int64_t, 4> d = as_4d(b.dims);
    out.line("const int B1 = " + to_string(d[0]) + ", B2 = " + to_string(d[1]) + ", BR = " + to_string(d[2]) + ", BC = " + to_string(d[3]) + ";");
    out.line("const __global float* bp = wts + " + to_string(ctx.weight_offset[static_cast<size_t>(b.constant)]) +
             " + ((B1 == 1 ? 0 : c0) * B2 + (B2 == 1 ? 0 : c1)) * (BR * BC);");
  } else {
    out.line("const int B1 = P.s8, B2 = P.s9, BR = P.sa, BC = P.sb;");
    out.line("const __global float* bp = " + ctx.main[1] + " + ((B1 == 1 ? 0 : c0) * B2 + (B2 == 1 ? 0 : c1)) * (BR * BC);");
  }
  out.line(std::string("const int K = ") + (ta ? "AR" : "AC") + ";");
  out.line("float s = 0.0f;");
  out.line(std::string("for (int k = 0; k < K; ++k) s = mad(") + (ta ? "ap[k * AC + c2]" : "ap[c2 * AC + k]") + ", " +
           (tb ? "bp[c3 * BC + k]" : "bp[k * BC + c3]") + ", s);");
  const float alpha = op.floats[0];
  out.line("const float v = " + (alpha == 1.0f ? std::string("s") : "s * " + float_literal(alpha)) + ";");
  out.line(store(ctx, "v", "o", "c0", "c1", "c2", "c3"));
}

void softmax(const AnchorContext& ctx, const Op& op, SourceWriter& out) {
  out.line("const int r = get_global_id(0);");
  out.line("const int OUTER = P.s8, L = P.s9, INNER = P.sa;");
  out.line("if (r >= OUTER * INNER) return;");
  out.line("const int ou = r / INNER, ii = r - ou * INNER;");
  out.line("const int base = ou * L * INNER + ii;");
  out.line("const __global float* xp = " + ctx.main[0] + " + base;");
  out.line("float m = -INFINITY;");
  out.line("for (int l = 0; l < L; ++l) m = fmax(m, xp[l * INNER]);");
  out.line("float s = 0.0f;");
  out.line("for (int l = 0; l < L; ++l) s += exp(xp[l * INNER] - m);");
  out.open("for (int l = 0; l < L; ++l)");
  out.line("const int idx = base + l * INNER;");
  emit_grid_coordinates(out, "idx");
  out.line(store(ctx, "exp(xp[l * INNER] - m) / s", "idx", "c0", "c1", "c2", "c3"));
  out.close();
}

void transpose(const AnchorContext& ctx, const Op& op, SourceWriter& out) {
  const size_t rank = op.ints.size(), lead = 4 - rank;
  size_t perm[4];
  for (size_t i = 0; i < 4; ++i) perm[i] = i < lead ? i : lead + static_cast<size_t>(op.ints[i - lead]);
  std::string from[4];
  for (size_t d = 0; d < 4; ++d) from[perm[d]] = "c" + to_string(d);
  grid_prologue(out);
  out.line("const float v = " + ctx.main[0] + "[((" + from[0] + " * P.s5 + " + from[1] + ") * P.s6 + " + from[2] + ") * P.s7 + " +
           from[3] + "];");
  out.line(store(ctx, "v", "o", "c0", "c1", "c2", "c3"));
}

}  // namespace

void emit_anchor(const AnchorContext& ctx, SourceWriter& out) {
  if (ctx.plan.anchor < 0) {
    grid_prologue(out);
    out.line(store(ctx, "0.0f", "o", "c0", "c1", "c2", "c3"));
    return;
  }
  const Op& op = ctx.program.ops[static_cast<size_t>(ctx.plan.anchor)];
  switch (op.kind) {
    case OpKind::kConv:
    case OpKind::kConvTranspose: return conv(ctx, op, out);
    case OpKind::kMaxPool:
    case OpKind::kAveragePool: return pool(ctx, op, out);
    case OpKind::kGlobalAveragePool:
    case OpKind::kGlobalMaxPool: return global_pool(ctx, op, out);
    case OpKind::kResize: return resize(ctx, op, out);
    case OpKind::kConcat: return concat(ctx, op, out);
    case OpKind::kMatMul: return matmul(ctx, op, out);
    case OpKind::kSoftmax: return softmax(ctx, op, out);
    case OpKind::kTranspose: return transpose(ctx, op, out);
    default: ephost::sdk::fail(EPHOST_INVALID_ARGUMENT, "program: op '" + op.name + "' cannot anchor a kernel");
  }
}

}  // namespace ephost_opencl
