#include "launch.h"

#include <climits>
#include <string>

#include "codegen.h"
#include "ephost/sdk/plugin.hpp"
#include "fusion.h"

namespace ephost_opencl {
namespace {

std::string text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

void set4(cl_int16& p, size_t at, const std::vector<int64_t>& shape) {
  const std::array<int64_t, 4> d = as_4d(shape);
  for (size_t i = 0; i < 4; ++i) p.s[at + i] = static_cast<cl_int>(d[i]);
}

size_t round_up(int64_t n, size_t multiple) {
  const size_t u = static_cast<size_t>(n);
  return (u + multiple - 1) / multiple * multiple;
}

const Op& op_named_by(const Program& p, int32_t value) {
  for (const Op& op : p.ops)
    if (op.outputs[0] == value) return op;
  return p.ops.front();
}

}  // namespace

Launch launch_of(const Program& p, const KernelPlan& k, const RunShapes& shapes) {
  Launch l;
  const std::vector<int64_t>& grid = shapes.shape[static_cast<size_t>(k.grid_value)];
  const int64_t total = element_count(grid);
  l.empty = total == 0;
  set4(l.P, 0, grid);
  const size_t wg = p.work_group_size;
  l.global[0] = round_up(total, wg);
  if (k.anchor < 0) return l;
  const Op& op = p.ops[static_cast<size_t>(k.anchor)];
  const std::vector<int64_t>& x = shapes.shape[static_cast<size_t>(op.inputs[0])];
  set4(l.P, 4, x);
  switch (op.kind) {
    case OpKind::kConv:
    case OpKind::kConvTranspose:
      l.work_dims = 3;
      l.global[0] = round_up(grid[2] * grid[3], wg);
      l.global[1] = static_cast<size_t>(op.ints[kConvCout] / op.ints[kConvBlock]);
      l.global[2] = static_cast<size_t>(grid[0]);
      break;
    case OpKind::kGlobalAveragePool:
    case OpKind::kGlobalMaxPool: l.global[0] = round_up(grid[0] * grid[1], wg); break;
    case OpKind::kConcat: {
      const size_t axis = static_cast<size_t>(op.ints[0]);
      for (size_t j = 0; j < op.inputs.size(); ++j)
        l.P.s[8 + j] = static_cast<cl_int>(shapes.shape[static_cast<size_t>(op.inputs[j])][axis]);
      break;
    }
    case OpKind::kMatMul:
      if (p.values[static_cast<size_t>(op.inputs[1])].placement == Placement::kDevice)
        set4(l.P, 8, shapes.shape[static_cast<size_t>(op.inputs[1])]);
      break;
    case OpKind::kSoftmax: {
      const size_t axis = static_cast<size_t>(op.ints[0]);
      int64_t outer = 1, length = 1, inner = 1;
      for (size_t d = 0; d < x.size(); ++d) {
        if (d < axis) outer *= x[d];
        else if (d == axis || op.ints[1] != 0) length *= x[d];
        else inner *= x[d];
      }
      l.P.s[8] = static_cast<cl_int>(outer);
      l.P.s[9] = static_cast<cl_int>(length);
      l.P.s[10] = static_cast<cl_int>(inner);
      l.global[0] = round_up(outer * inner, wg);
      l.empty = outer * inner == 0 || length == 0;
      break;
    }
    case OpKind::kResize: {
      float h = 1, w = 1;
      resize_scales(op, x, grid, &h, &w);
      l.F.s[0] = h;
      l.F.s[1] = w;
      break;
    }
    default: break;
  }
  return l;
}

void check_kernel_shapes(const Program& p, const RunShapes& shapes) {
  for (size_t v = 0; v < p.values.size(); ++v)
    if (p.values[v].placement == Placement::kDevice && shapes.known[v] && element_count(shapes.shape[v]) > INT_MAX)
      ephost::sdk::fail(EPHOST_INVALID_ARGUMENT, "opencl: value '" + p.values[v].name + "' of shape " + text(shapes.shape[v]) +
                                                     " has 2^31 elements or more");
  for (const KernelPlan& k : p.kernels) {
    const std::vector<int64_t>& grid = shapes.shape[static_cast<size_t>(k.grid_value)];
    for (int32_t v : kernel_values(p, k))
      if (shapes.shape[static_cast<size_t>(v)] != grid)
        ephost::sdk::fail(EPHOST_INVALID_ARGUMENT,
                          "opencl: node '" + op_named_by(p, v).name + "' makes shape " + text(shapes.shape[static_cast<size_t>(v)]) +
                              " where the fused kernel expects " + text(grid) + " (the model's static shapes promised it)");
    const std::array<int64_t, 4> g = as_4d(grid);
    for (int32_t v : kernel_reads(p, k).extra) {
      const std::array<int64_t, 4> d = as_4d(shapes.shape[static_cast<size_t>(v)]);
      const Broadcast b = broadcast_of(p.values[static_cast<size_t>(v)].dims);
      for (size_t a = 0; a < 4; ++a)
        if (d[a] != (b.axis[a] ? 1 : g[a]))
          ephost::sdk::fail(EPHOST_INVALID_ARGUMENT, "opencl: value '" + p.values[static_cast<size_t>(v)].name + "' has shape " +
                                                         text(shapes.shape[static_cast<size_t>(v)]) + ", which the kernel computing " +
                                                         text(grid) + " was not compiled to broadcast");
    }
  }
}

}  // namespace ephost_opencl
