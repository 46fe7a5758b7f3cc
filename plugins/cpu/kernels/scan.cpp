// Scan: runs the body subgraph once per position of the scan inputs, carrying state values from one
// iteration to the next (host values, not copied) and stacking the per-iteration scan outputs.
//  - opset 8: every input has a leading batch axis, scan inputs scan axis 1 (after the batch), an
//    optional sequence_lens gives each batch entry its own length (scan outputs are zero past it),
//    `directions` reverses scan inputs;
//  - opset 9+: no batch axis; scan_input_axes / scan_input_directions choose each scan input's axis
//    and direction, scan_output_axes / scan_output_directions where and in which order the
//    per-iteration outputs are stacked.
#include <cstring>
#include <vector>

#include "kernel_registry.h"
#include "math/axis_copy.h"
#include "value_util.h"

namespace ephost::cpu {

namespace {

// Position `pos` along `axis` of `x`, that axis removed, as a host value (a copy) for the body.
sdk::OwnedValue slice_value(const sdk::Tensor& x, int64_t axis, int64_t pos, int threads) {
  const Shape in = x.shape();
  Shape part = in;
  part.erase(part.begin() + axis);
  const int64_t outer = math::numel(in, 0, static_cast<size_t>(axis));
  const int64_t inner_bytes = math::numel(in, static_cast<size_t>(axis) + 1, in.size()) *
                              static_cast<int64_t>(sdk::element_size(x.elem_type()));
  const int64_t extent = in[static_cast<size_t>(axis)];
  if (outer == 1) {  // contiguous (always for axis 0): a view straight into the input
    const char* base = static_cast<const char*>(x.raw()) + pos * inner_bytes;
    return sdk::OwnedValue::copy_of(sdk::Tensor(EphostTensorView{x.elem_type(), part.size(), part.data(), base}));
  }
  // Strided: gather the rows first (strings are pointers into the input; copy_of copies the text).
  std::vector<unsigned char> gathered(static_cast<size_t>(outer * inner_bytes));
  math::copy_from_axis_range(x.raw(), gathered.data(), outer, extent, pos, 1, inner_bytes, threads);
  return sdk::OwnedValue::copy_of(sdk::Tensor(EphostTensorView{x.elem_type(), part.size(), part.data(), gathered.data()}));
}

std::vector<int64_t> per_input(const sdk::Node& node, const char* attr, size_t count, const char* what) {
  std::vector<int64_t> v = node.attr_ints(attr);
  if (v.empty()) v.assign(count, 0);
  if (v.size() != count)
    fail_node(node, std::string(attr) + " has " + std::to_string(v.size()) + " entries for " + std::to_string(count) +
                        " " + what);
  return v;
}

class ScanBase : public CpuKernel {
 public:
  ScanBase(const sdk::Node& node, const KernelConfig& c, size_t leading_inputs)
      : CpuKernel(node, c), body_(node.subgraph("body")) {
    if (!body_.valid()) fail_node(node, "attribute body (a graph) is required");
    if (!node.has_attr("num_scan_inputs")) fail_node(node, "attribute num_scan_inputs is required");
    const int64_t m = node.attr_int("num_scan_inputs", 0);
    if (m < 1 || static_cast<size_t>(m) + leading_inputs > node.num_inputs())
      fail_node(node, "num_scan_inputs " + std::to_string(m) + " does not fit the node's " +
                          std::to_string(node.num_inputs()) + " inputs");
    scan_inputs_ = static_cast<size_t>(m);
    states_ = node.num_inputs() - leading_inputs - scan_inputs_;
    if (body_.num_inputs() != states_ + scan_inputs_)
      fail_node(node, "the body takes " + std::to_string(body_.num_inputs()) + " inputs, the node gives " +
                          std::to_string(states_ + scan_inputs_) + " (states and scan slices)");
    if (body_.num_outputs() < states_)
      fail_node(node, "the body has fewer outputs than there are states");
    scan_outputs_ = body_.num_outputs() - states_;
    if (node.num_outputs() > states_ + scan_outputs_)
      fail_node(node, "has more outputs than the body gives");
  }

 protected:
  // Runs the body over `length` positions: the states start as `states` and end there; each scan
  // input's slice for iteration t comes from `slice(j, t)`; scan outputs are appended to `outputs`.
  template <typename Slice>
  void iterate(sdk::KernelContext& ctx, int64_t length, std::vector<sdk::OwnedValue>& states, Slice&& slice,
               std::vector<std::vector<sdk::OwnedValue>>& outputs) {
    std::vector<const sdk::OwnedValue*> inputs(states_ + scan_inputs_);
    std::vector<sdk::OwnedValue> slices(scan_inputs_);
    for (int64_t t = 0; t < length; ++t) {
      ctx.check_run();  // a long scan ends when the run is stopped (terminate, deadline)
      for (size_t i = 0; i < states_; ++i) inputs[i] = &states[i];
      for (size_t j = 0; j < scan_inputs_; ++j) {
        slices[j] = slice(j, t);
        inputs[states_ + j] = &slices[j];
      }
      std::vector<sdk::OwnedValue> out = ctx.run_subgraph_values("body", inputs, states_ + scan_outputs_);
      for (size_t i = 0; i < states_; ++i) states[i] = std::move(out[i]);
      for (size_t k = 0; k < scan_outputs_; ++k) {
        if (out[states_ + k].kind() != EPHOST_VALUE_TENSOR) fail("scan outputs must be tensors");
        outputs[k].push_back(std::move(out[states_ + k]));
      }
    }
  }

  static std::vector<sdk::Tensor> tensors_of(const std::vector<sdk::OwnedValue>& values) {
    std::vector<sdk::Tensor> out;
    out.reserve(values.size());
    for (const auto& v : values) out.push_back(v.tensor());
    return out;
  }

  int32_t body_output_type(size_t k) const {
    const int32_t t = body_.output(k).elem_type();
    return t != EPHOST_ELEMENT_UNDEFINED ? t : EPHOST_ELEMENT_FLOAT;
  }

  sdk::Graph body_;
  size_t states_ = 0;
  size_t scan_inputs_ = 0;
  size_t scan_outputs_ = 0;
};

class Scan9Kernel : public ScanBase {
 public:
  Scan9Kernel(const sdk::Node& node, const KernelConfig& c) : ScanBase(node, c, 0) {
    input_axes_ = per_input(node, "scan_input_axes", scan_inputs_, "scan inputs");
    input_directions_ = per_input(node, "scan_input_directions", scan_inputs_, "scan inputs");
    output_axes_ = per_input(node, "scan_output_axes", scan_outputs_, "scan outputs");
    output_directions_ = per_input(node, "scan_output_directions", scan_outputs_, "scan outputs");
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    std::vector<sdk::OwnedValue> states;
    for (size_t i = 0; i < states_; ++i) {
      if (ctx.input_kind(i) == EPHOST_VALUE_UNDEFINED) fail("state input " + std::to_string(i) + " is missing");
      states.push_back(ctx.input_value(i));
    }
    std::vector<sdk::Tensor> xs;
    std::vector<int64_t> axes;
    int64_t length = -1;
    for (size_t j = 0; j < scan_inputs_; ++j) {
      xs.push_back(required(ctx, states_ + j, "scan input"));
      const int64_t r = static_cast<int64_t>(xs[j].rank());
      axes.push_back(math::normalize_axis(input_axes_[j], r, "scan_input_axes entry"));
      const int64_t len = xs[j].dim(static_cast<size_t>(axes[j]));
      if (length >= 0 && len != length)
        fail("scan inputs disagree on the sequence length: " + std::to_string(length) + " and " + std::to_string(len));
      length = len;
    }
    std::vector<std::vector<sdk::OwnedValue>> outputs(scan_outputs_);
    iterate(ctx, length, states,
            [&](size_t j, int64_t t) {
              const int64_t pos = input_directions_[j] ? length - 1 - t : t;
              return slice_value(xs[j], axes[j], pos, threads);
            },
            outputs);
    for (size_t i = 0; i < states_; ++i)
      if (output_wanted(i)) ctx.set_output(i, states[i]);
    for (size_t k = 0; k < scan_outputs_; ++k) {
      if (!output_wanted(states_ + k)) continue;
      write_stacked_output(ctx, states_ + k, tensors_of(outputs[k]), output_axes_[k], output_directions_[k] != 0,
                           body_output_type(states_ + k),
                           empty_stacked_shape(body_.output(states_ + k), output_axes_[k]), threads);
    }
  }

 private:
  std::vector<int64_t> input_axes_, input_directions_, output_axes_, output_directions_;
};

class Scan8Kernel : public ScanBase {
 public:
  Scan8Kernel(const sdk::Node& node, const KernelConfig& c) : ScanBase(node, c, 1) {
    directions_ = per_input(node, "directions", scan_inputs_, "scan inputs");
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    std::vector<sdk::Tensor> states_in, xs;
    for (size_t i = 0; i < states_; ++i) states_in.push_back(required(ctx, 1 + i, "initial state"));
    for (size_t j = 0; j < scan_inputs_; ++j) xs.push_back(required(ctx, 1 + states_ + j, "scan input"));
    const sdk::Tensor& first = states_ > 0 ? states_in[0] : xs[0];
    if (first.rank() < 1) fail("inputs need a leading batch axis");
    const int64_t batch = first.dim(0);
    int64_t max_len = -1;
    for (const auto& x : xs) {
      if (x.rank() < 2 || x.dim(0) != batch)
        fail("scan inputs must be [batch, sequence, ...] with batch " + std::to_string(batch) + ", found " +
             math::to_string(x.shape()));
      if (max_len >= 0 && x.dim(1) != max_len) fail("scan inputs disagree on the sequence length");
      max_len = x.dim(1);
    }
    for (const auto& s : states_in)
      if (s.rank() < 1 || s.dim(0) != batch)
        fail("states must have the batch axis first (" + std::to_string(batch) + "), found " +
             math::to_string(s.shape()));
    std::vector<int64_t> lengths(static_cast<size_t>(batch), max_len);
    const sdk::Tensor lens = ctx.input(0);
    if (lens.present()) {
      lengths = ints_of(lens, "sequence_lens");
      if (static_cast<int64_t>(lengths.size()) != batch)
        fail("sequence_lens has " + std::to_string(lengths.size()) + " entries for a batch of " +
             std::to_string(batch));
      for (int64_t l : lengths)
        if (l < 0 || l > max_len)
          fail("sequence_lens entry " + std::to_string(l) + " is outside [0, " + std::to_string(max_len) + "]");
    }

    // Scan inputs seen as [batch * sequence, ...]: position (b, t) is one slice along the first axis.
    std::vector<Shape> flat_shapes(scan_inputs_);
    std::vector<sdk::Tensor> flat;
    for (size_t j = 0; j < scan_inputs_; ++j) {
      const Shape s = xs[j].shape();
      flat_shapes[j] = {batch * max_len};
      flat_shapes[j].insert(flat_shapes[j].end(), s.begin() + 2, s.end());
      flat.emplace_back(EphostTensorView{xs[j].elem_type(), flat_shapes[j].size(), flat_shapes[j].data(), xs[j].raw()});
    }

    // Per batch entry: final states, and scan outputs per iteration.
    std::vector<std::vector<sdk::OwnedValue>> finals(states_);
    std::vector<std::vector<std::vector<sdk::OwnedValue>>> scanned(static_cast<size_t>(batch));
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<sdk::OwnedValue> states;
      for (size_t i = 0; i < states_; ++i) states.push_back(slice_value(states_in[i], 0, b, threads));
      const int64_t len = lengths[static_cast<size_t>(b)];
      scanned[static_cast<size_t>(b)].resize(scan_outputs_);
      iterate(ctx, len, states,
              [&](size_t j, int64_t t) {
                const int64_t pos = directions_[j] ? len - 1 - t : t;
                return slice_value(flat[j], 0, b * max_len + pos, threads);
              },
              scanned[static_cast<size_t>(b)]);
      for (size_t i = 0; i < states_; ++i) finals[i].push_back(std::move(states[i]));
    }
    for (size_t i = 0; i < states_; ++i)
      if (output_wanted(i))
        write_stacked_output(ctx, i, tensors_of(finals[i]), 0, false, states_in[i].elem_type(), states_in[i].shape(),
                             threads);
    for (size_t k = 0; k < scan_outputs_; ++k)
      if (output_wanted(states_ + k)) write_padded_scan_output(ctx, states_ + k, scanned, k, batch, max_len);
  }

 private:
  // Output [batch, max_len, ...]: batch entry b's iterations in order, zeros past its length.
  void write_padded_scan_output(sdk::KernelContext& ctx, size_t out,
                                const std::vector<std::vector<std::vector<sdk::OwnedValue>>>& scanned, size_t k,
                                int64_t batch, int64_t max_len) {
    const sdk::Tensor* sample = nullptr;
    std::vector<std::vector<sdk::Tensor>> parts(static_cast<size_t>(batch));
    for (int64_t b = 0; b < batch; ++b) {
      parts[static_cast<size_t>(b)] = tensors_of(scanned[static_cast<size_t>(b)][k]);
      if (!sample && !parts[static_cast<size_t>(b)].empty()) sample = &parts[static_cast<size_t>(b)][0];
    }
    Shape part_shape;
    int32_t type = body_output_type(out);
    if (sample) {
      part_shape = sample->shape();
      type = sample->elem_type();
    } else {
      const Shape declared = empty_stacked_shape(body_.output(out), 0);
      part_shape.assign(declared.begin() + 1, declared.end());
    }
    if (!is_movable_type(type)) fail(std::string("scan output of type ") + type_name(type) + " is not supported");
    Shape shape{batch, max_len};
    shape.insert(shape.end(), part_shape.begin(), part_shape.end());
    const size_t part_bytes = static_cast<size_t>(math::numel(part_shape)) * sdk::element_size(type);
    char* y = static_cast<char*>(ctx.output_raw(out, type, shape));
    std::memset(y, 0, part_bytes * static_cast<size_t>(batch * max_len));
    for (int64_t b = 0; b < batch; ++b) {
      const auto& ps = parts[static_cast<size_t>(b)];
      for (size_t t = 0; t < ps.size(); ++t) {
        if (ps[t].elem_type() != type || ps[t].shape() != part_shape)
          fail("scan output " + std::to_string(k) + " changes type or shape between iterations");
        if (part_bytes) std::memcpy(y + (static_cast<size_t>(b * max_len) + t) * part_bytes, ps[t].raw(), part_bytes);
      }
    }
  }

  std::vector<int64_t> directions_;
};

}  // namespace

void register_scan_kernels(KernelRegistry& r) {
  r.add_value_kernel("Scan", 8, 8, nullptr, make_factory<Scan8Kernel>());
  r.add_value_kernel("Scan", 9, 17, nullptr, make_factory<Scan9Kernel>());
}

}  // namespace ephost::cpu
