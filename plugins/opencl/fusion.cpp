#include "fusion.h"

#include <algorithm>

namespace ephost_opencl {
namespace {

bool is_elementwise(OpKind k) { return k == OpKind::kUnary || k == OpKind::kBinary || k == OpKind::kChannelAffine; }

// `out` can share the grid of `grid` as far as static shapes tell: same rank, and no axis provably
// different (an axis the grid has of size 1 must be 1 for `out` too).
bool same_grid(const ValueDesc& out, const ValueDesc& grid) {
  if (out.dims.size() != grid.dims.size()) return false;
  for (size_t d = 0; d < out.dims.size(); ++d) {
    const int64_t o = out.dims[d], g = grid.dims[d];
    if (o >= 0 && g >= 0 && o != g) return false;
    if (g == 1 && o != 1) return false;
  }
  return true;
}

}  // namespace

std::array<int64_t, 4> as_4d(const std::vector<int64_t>& shape) {
  std::array<int64_t, 4> d{1, 1, 1, 1};
  const size_t r = std::min<size_t>(shape.size(), 4);
  for (size_t i = 0; i < r; ++i) d[4 - r + i] = shape[shape.size() - r + i];
  return d;
}

Broadcast broadcast_of(const std::vector<int64_t>& dims) {
  Broadcast b;
  const std::array<int64_t, 4> d = as_4d(dims);
  for (size_t i = 0; i < 4; ++i) b.axis[i] = d[i] == 1;
  return b;
}

std::vector<int32_t> kernel_values(const Program& program, const KernelPlan& k) {
  std::vector<int32_t> values;
  if (k.anchor >= 0) values.push_back(program.ops[static_cast<size_t>(k.anchor)].outputs[0]);
  for (int32_t e : k.epilogue) values.push_back(program.ops[static_cast<size_t>(e)].outputs[0]);
  return values;
}

KernelReads kernel_reads(const Program& program, const KernelPlan& k) {
  KernelReads r;
  if (k.anchor >= 0)
    for (int32_t v : program.ops[static_cast<size_t>(k.anchor)].inputs)
      if (v >= 0 && program.values[static_cast<size_t>(v)].placement == Placement::kDevice) r.main.push_back(v);
  const std::vector<int32_t> computed = kernel_values(program, k);
  for (int32_t e : k.epilogue)
    for (int32_t v : program.ops[static_cast<size_t>(e)].inputs) {
      const ValueDesc& d = program.values[static_cast<size_t>(v)];
      const bool in_registers = std::find(computed.begin(), computed.end(), v) != computed.end();
      if (!in_registers && d.placement == Placement::kDevice && std::find(r.extra.begin(), r.extra.end(), v) == r.extra.end()) r.extra.push_back(v);
    }
  return r;
}

void plan_kernels(Program& p) {
  p.kernels.clear();
  const size_t n = p.values.size();
  std::vector<int32_t> in_kernel(n, -1);     // kernel computing the value in registers
  std::vector<int32_t> ready_after(n, -1);   // kernel after which the value can be read from memory
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const Op& op = p.ops[i];
    const int32_t out = op.outputs[0];
    if (op.kind >= OpKind::kShape) continue;  // host operations
    if (op.kind == OpKind::kView) {
      ready_after[out] = ready_after[op.inputs[0]];
      continue;
    }
    if (!is_elementwise(op.kind)) {
      KernelPlan k;
      k.anchor = static_cast<int32_t>(i);
      k.grid_value = out;
      p.kernels.push_back(k);
      in_kernel[out] = ready_after[out] = static_cast<int32_t>(p.kernels.size() - 1);
      continue;
    }
    // The latest kernel computing an input in registers is the one to join, when the rest allows it.
    int32_t join = -1;
    for (int32_t v : op.inputs)
      if (p.values[v].placement == Placement::kDevice) join = std::max(join, in_kernel[v]);
    bool joinable = join >= 0 && same_grid(p.values[out], p.values[p.kernels[join].grid_value]);
    for (int32_t v : op.inputs)
      if (joinable && p.values[v].placement == Placement::kDevice && in_kernel[v] != join && ready_after[v] >= join) joinable = false;
    if (!joinable) {
      KernelPlan k;
      k.grid_value = out;
      p.kernels.push_back(k);
      join = static_cast<int32_t>(p.kernels.size() - 1);
    }
    p.kernels[join].epilogue.push_back(static_cast<int32_t>(i));
    in_kernel[out] = ready_after[out] = join;
  }

  // What must be in memory: what a kernel reads from memory, program outputs, and (through views) what
  // views of them need.
  std::vector<bool> needed(n, false);
  for (int32_t v : p.outputs) needed[v] = true;
  for (const KernelPlan& k : p.kernels) {
    const KernelReads r = kernel_reads(p, k);
    for (int32_t v : r.main) needed[v] = true;
    for (int32_t v : r.extra) needed[v] = true;
  }
  for (size_t i = p.ops.size(); i-- > 0;) {
    const Op& op = p.ops[i];
    if (op.kind == OpKind::kView && needed[op.outputs[0]]) needed[op.inputs[0]] = true;
  }
  for (KernelPlan& k : p.kernels)
    for (int32_t v : kernel_values(p, k))
      if (needed[v]) k.stores.push_back(v);
  // A kernel whose results nothing reads still runs once (its grid value is stored), so that a program
  // is never left with a kernel that computes nothing.
  for (KernelPlan& k : p.kernels)
    if (k.stores.empty()) k.stores.push_back(k.grid_value);
}

}  // namespace ephost_opencl
