// Sequences of tensors: SequenceConstruct, SequenceEmpty, SequenceAt, SequenceInsert, SequenceErase,
// SequenceLength, SplitToSequence, ConcatFromSequence, and Identity on sequences and optionals.
// Elements of sequences are immutable and shared, so ops that keep elements (Insert, Erase, At,
// Identity) pass them on without copying; only new tensors are copied in.
#include <algorithm>
#include <numeric>

#include "kernel_registry.h"
#include "math/axis_copy.h"
#include "value_util.h"

namespace ephost::cpu {

namespace {

// A position input (int32/int64 scalar) normalized into [0, n) (or [0, n] when `inclusive_end`).
int64_t position_of(const sdk::Tensor& t, int64_t n, bool inclusive_end, const char* what) {
  if (t.size() != 1) math::invalid(std::string(what) + " must be a scalar, found shape " + math::to_string(t.shape()));
  int64_t p = 0;
  if (t.elem_type() == EPHOST_ELEMENT_INT64)
    p = t.data<int64_t>()[0];
  else if (t.elem_type() == EPHOST_ELEMENT_INT32)
    p = t.data<int32_t>()[0];
  else
    math::invalid(std::string(what) + " must be int32 or int64, found " + type_name(t.elem_type()));
  const int64_t hi = inclusive_end ? n : n - 1;
  if (p < -n || p > hi)
    math::invalid(std::string(what) + " " + std::to_string(p) + " is out of range [" + std::to_string(-n) + ", " +
                  std::to_string(hi) + "] for a sequence of " + std::to_string(n));
  return p < 0 ? p + n : p;
}

class SequenceConstructKernel : public CpuKernel {
 public:
  using CpuKernel::CpuKernel;

 protected:
  void run(sdk::KernelContext& ctx, int) override {
    const size_t n = ctx.num_inputs();
    if (n == 0) fail("needs at least one input");
    std::vector<sdk::Tensor> in;
    for (size_t i = 0; i < n; ++i) in.push_back(required(ctx, i, "inputs"));
    for (const auto& t : in)
      if (t.elem_type() != in[0].elem_type())
        fail(std::string("all inputs must have one type: found ") + type_name(in[0].elem_type()) + " and " +
             type_name(t.elem_type()));
    ctx.output_sequence(0, in[0].elem_type(), n);
    for (size_t i = 0; i < n; ++i) write_sequence_element(ctx, 0, i, in[i]);
  }
};

class SequenceEmptyKernel : public CpuKernel {
 public:
  SequenceEmptyKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), dtype_(static_cast<int32_t>(node.attr_int("dtype", EPHOST_ELEMENT_FLOAT))) {
    if (sdk::element_size(dtype_) == 0) fail_node(node, "dtype " + std::to_string(dtype_) + " is not a tensor type");
  }

 protected:
  void run(sdk::KernelContext& ctx, int) override { ctx.output_sequence(0, dtype_, 0); }

 private:
  int32_t dtype_;
};

// The node's first input as a sequence, failing with a clear message when it is something else.
sdk::SequenceInput sequence_input(sdk::KernelContext& ctx, size_t i, const std::string& op) {
  if (ctx.input_kind(i) != EPHOST_VALUE_SEQUENCE)
    math::invalid("input " + std::to_string(i) + " of " + op + " must be a sequence, found a " +
                  EphostValueKindName(ctx.input_kind(i)));
  return ctx.input_sequence(i);
}

class SequenceAtKernel : public CpuKernel {
 public:
  using CpuKernel::CpuKernel;

 protected:
  void run(sdk::KernelContext& ctx, int) override {
    const sdk::SequenceInput seq = sequence_input(ctx, 0, op());
    const int64_t p = position_of(required(ctx, 1, "position"), static_cast<int64_t>(seq.size()), false, "position");
    // The element itself, shared: elements of sequences never change.
    const sdk::OwnedValue whole = ctx.input_value(0);
    ctx.set_output(0, whole.element_value(static_cast<size_t>(p)));
  }
};

class SequenceInsertKernel : public CpuKernel {
 public:
  using CpuKernel::CpuKernel;

 protected:
  void run(sdk::KernelContext& ctx, int) override {
    const sdk::SequenceInput seq = sequence_input(ctx, 0, op());
    const sdk::Tensor t = required(ctx, 1, "tensor");
    if (t.elem_type() != seq.elem_type())
      fail(std::string("tensor of type ") + type_name(t.elem_type()) + " cannot go into a sequence of " +
           type_name(seq.elem_type()) + " tensors");
    const int64_t n = static_cast<int64_t>(seq.size());
    const sdk::Tensor pos = ctx.input(2);
    const int64_t p = pos.present() ? position_of(pos, n, true, "position") : n;
    const sdk::OwnedValue whole = ctx.input_value(0);
    const sdk::OwnedValue inserted = ctx.input_value(1);  // a kernel input: the host copies it in
    ctx.output_sequence(0, seq.elem_type(), static_cast<size_t>(n + 1));
    for (int64_t k = 0; k <= n; ++k) {
      if (k == p)
        ctx.set_output_sequence_element(0, static_cast<size_t>(k), inserted);
      else
        ctx.set_output_sequence_element(0, static_cast<size_t>(k), whole, static_cast<size_t>(k < p ? k : k - 1));
    }
  }
};

class SequenceEraseKernel : public CpuKernel {
 public:
  using CpuKernel::CpuKernel;

 protected:
  void run(sdk::KernelContext& ctx, int) override {
    const sdk::SequenceInput seq = sequence_input(ctx, 0, op());
    const int64_t n = static_cast<int64_t>(seq.size());
    if (n == 0) fail("cannot erase from an empty sequence");
    const sdk::Tensor pos = ctx.input(1);
    const int64_t p = pos.present() ? position_of(pos, n, false, "position") : n - 1;
    const sdk::OwnedValue whole = ctx.input_value(0);
    ctx.output_sequence(0, seq.elem_type(), static_cast<size_t>(n - 1));
    for (int64_t k = 0; k + 1 < n; ++k)
      ctx.set_output_sequence_element(0, static_cast<size_t>(k), whole, static_cast<size_t>(k < p ? k : k + 1));
  }
};

class SequenceLengthKernel : public CpuKernel {
 public:
  using CpuKernel::CpuKernel;

 protected:
  void run(sdk::KernelContext& ctx, int) override {
    const sdk::SequenceInput seq = sequence_input(ctx, 0, op());
    ctx.output<int64_t>(0, {})[0] = static_cast<int64_t>(seq.size());
  }
};

class SplitToSequenceKernel : public CpuKernel {
 public:
  SplitToSequenceKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), axis_(node.attr_int("axis", 0)), keepdims_(node.attr_int("keepdims", 1) != 0) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "input");
    if (!is_movable_type(x.elem_type())) fail(std::string("unsupported type ") + type_name(x.elem_type()));
    const Shape in = x.shape();
    const int64_t r = static_cast<int64_t>(in.size());
    if (r == 0) fail("input must have rank >= 1");
    const int64_t axis = math::normalize_axis(axis_, r);
    const int64_t extent = in[static_cast<size_t>(axis)];
    // Part lengths along the axis: ones (no split), chunks of a scalar split (the last may be
    // shorter), or the 1-D split as given.
    std::vector<int64_t> lengths;
    const sdk::Tensor split = ctx.input(1);
    const bool squeeze = !split.present() && !keepdims_;
    if (!split.present()) {
      lengths.assign(static_cast<size_t>(extent), 1);
    } else if (split.rank() == 0) {
      const int64_t chunk = ints_of(split, "split")[0];
      if (chunk <= 0) fail("split must be positive, found " + std::to_string(chunk));
      for (int64_t start = 0; start < extent; start += chunk) lengths.push_back(std::min(chunk, extent - start));
    } else {
      if (split.rank() != 1) fail("split must be a scalar or 1-D, found shape " + math::to_string(split.shape()));
      lengths = ints_of(split, "split");
      int64_t total = 0;
      for (int64_t l : lengths) {
        if (l < 0) fail("split lengths must be >= 0, found " + math::to_string(lengths));
        total += l;
      }
      if (total != extent)
        fail("split lengths " + math::to_string(lengths) + " add up to " + std::to_string(total) + ", not axis " +
             std::to_string(axis) + "'s size " + std::to_string(extent));
    }
    const int64_t outer = math::numel(in, 0, static_cast<size_t>(axis));
    const int64_t inner_bytes =
        math::numel(in, static_cast<size_t>(axis) + 1, in.size()) * static_cast<int64_t>(sdk::element_size(x.elem_type()));
    ctx.output_sequence(0, x.elem_type(), lengths.size());
    int64_t start = 0;
    for (size_t k = 0; k < lengths.size(); ++k) {
      Shape part = in;
      part[static_cast<size_t>(axis)] = lengths[k];
      if (squeeze) part.erase(part.begin() + axis);
      void* dst = ctx.output_sequence_element_raw(0, k, part);
      math::copy_from_axis_range(x.raw(), dst, outer, extent, start, lengths[k], inner_bytes, threads);
      start += lengths[k];
    }
  }

 private:
  int64_t axis_;
  bool keepdims_;
};

class ConcatFromSequenceKernel : public CpuKernel {
 public:
  ConcatFromSequenceKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), axis_(node.attr_int("axis", 0)), new_axis_(node.attr_int("new_axis", 0) != 0) {
    if (!node.has_attr("axis")) fail_node(node, "attribute axis is required");
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::SequenceInput seq = sequence_input(ctx, 0, op());
    if (seq.size() == 0) fail("cannot concatenate an empty sequence");
    if (!is_movable_type(seq.elem_type())) fail(std::string("unsupported type ") + type_name(seq.elem_type()));
    std::vector<sdk::Tensor> parts;
    for (size_t k = 0; k < seq.size(); ++k) parts.push_back(seq.element(k));
    const Shape first = parts[0].shape();
    const int64_t r = static_cast<int64_t>(first.size());
    if (new_axis_) {
      // Stacking: every element has the first one's shape; the result has a new axis.
      write_stacked_output(ctx, 0, parts, axis_, false, seq.elem_type(), {0}, threads);
      return;
    }
    if (r == 0) fail("elements must have rank >= 1 to be concatenated (use new_axis=1 to stack scalars)");
    const int64_t axis = math::normalize_axis(axis_, r);
    Shape out = first;
    out[static_cast<size_t>(axis)] = 0;
    for (const auto& t : parts) {
      const Shape s = t.shape();
      if (static_cast<int64_t>(s.size()) != r)
        fail("all elements must have rank " + std::to_string(r) + ", found shape " + math::to_string(s));
      for (int64_t d = 0; d < r; ++d)
        if (d != axis && s[static_cast<size_t>(d)] != first[static_cast<size_t>(d)])
          fail("element shapes " + math::to_string(first) + " and " + math::to_string(s) +
               " differ outside the concatenation axis " + std::to_string(axis));
      out[static_cast<size_t>(axis)] += s[static_cast<size_t>(axis)];
    }
    void* y = ctx.output_raw(0, seq.elem_type(), out);
    const int64_t outer = math::numel(first, 0, static_cast<size_t>(axis));
    const int64_t inner_bytes = math::numel(first, static_cast<size_t>(axis) + 1, first.size()) *
                                static_cast<int64_t>(sdk::element_size(seq.elem_type()));
    const int64_t extent = out[static_cast<size_t>(axis)];
    int64_t start = 0;
    for (const auto& t : parts) {
      const int64_t len = t.dim(static_cast<size_t>(axis));
      math::copy_into_axis_range(t.raw(), y, outer, extent, start, len, inner_bytes, threads);
      start += len;
    }
  }

 private:
  int64_t axis_;
  bool new_axis_;
};

// Identity on a sequence or an optional: the value itself (tensors go to the tensor Identity kernel).
class ValueIdentityKernel : public CpuKernel {
 public:
  using CpuKernel::CpuKernel;

 protected:
  void run(sdk::KernelContext& ctx, int) override {
    if (ctx.input_kind(0) == EPHOST_VALUE_UNDEFINED) fail("required input 0 (input) is missing");
    ctx.set_output(0, ctx.input_value(0));
  }
};

// Sequence ops take sequences by definition; the check looks at the tensors they hold.
SupportCheck sequence_of_any_tensor() {
  return [](const sdk::Node& node) {
    const int32_t t = node.input(0).tensor_elem_type();
    return t == EPHOST_ELEMENT_UNDEFINED || sdk::element_size(t) != 0;
  };
}

SupportCheck movable_tensors() {
  return [](const sdk::Node& node) {
    const int32_t t = node.input(0).tensor_elem_type();
    return t == EPHOST_ELEMENT_UNDEFINED || is_movable_type(t);
  };
}

}  // namespace

void register_sequence_kernels(KernelRegistry& r) {
  const SupportCheck any = sequence_of_any_tensor();
  r.add_value_kernel("SequenceConstruct", 11, 17, any, make_factory<SequenceConstructKernel>());
  r.add_value_kernel("SequenceEmpty", 11, 17, nullptr, make_factory<SequenceEmptyKernel>());
  r.add_value_kernel("SequenceAt", 11, 17, any, make_factory<SequenceAtKernel>());
  r.add_value_kernel("SequenceInsert", 11, 17, any, make_factory<SequenceInsertKernel>());
  r.add_value_kernel("SequenceErase", 11, 17, any, make_factory<SequenceEraseKernel>());
  r.add_value_kernel("SequenceLength", 11, 17, any, make_factory<SequenceLengthKernel>());
  r.add_value_kernel("SplitToSequence", 11, 17, movable_tensors(), make_factory<SplitToSequenceKernel>());
  r.add_value_kernel("ConcatFromSequence", 11, 17, movable_tensors(), make_factory<ConcatFromSequenceKernel>());
  // Only nodes with a declared sequence or optional reach this definition (tensor Identity nodes
  // match the tensor kernel registered with the shape ops first).
  r.add_value_kernel("Identity", 1, 17, has_non_tensor_value, make_factory<ValueIdentityKernel>());
}

}  // namespace ephost::cpu
