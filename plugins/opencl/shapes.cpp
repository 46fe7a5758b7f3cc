#include "shapes.h"

#include <algorithm>
#include <limits>
#include <string>

#include "ephost/sdk/plugin.hpp"

namespace ephost_opencl {
namespace {

std::string text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

[[noreturn]] void bad(const Op& op, const std::string& what) {
  ephost::sdk::fail(EPHOST_INVALID_ARGUMENT, "opencl: node '" + op.name + "': " + what);
}

std::vector<int64_t> broadcast(const Op& op, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> out(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t x = i + a.size() >= r ? a[i + a.size() - r] : 1;
    const int64_t y = i + b.size() >= r ? b[i + b.size() - r] : 1;
    if (x != y && x != 1 && y != 1) bad(op, "shapes " + text(a) + " and " + text(b) + " do not broadcast");
    out[i] = x == 1 ? y : x;
  }
  return out;
}

int64_t window_output(const Op& op, int64_t in, int64_t k, int64_t s, int64_t d, int64_t pad, bool ceil_mode) {
  const int64_t span = in + pad - (d * (k - 1) + 1);
  if (span < 0) bad(op, "the input (" + std::to_string(in) + ") is smaller than the window");
  return (ceil_mode ? (span + s - 1) / s : span / s) + 1;
}

class Inference {
 public:
  Inference(const Program& p, RunShapes& r) : p_(p), r_(r) {}

  void run() {
    for (const Op& op : p_.ops) {
      for (int32_t v : op.inputs)
        if (v >= 0 && !r_.known[v]) bad(op, "input '" + p_.values[v].name + "' has no shape");
      const int32_t out = op.outputs[0];
      if (op.kind >= OpKind::kShape) {
        host(op, r_.data[out], r_.shape[out]);
      } else {
        r_.shape[out] = device(op);
      }
      r_.known[out] = true;
    }
  }

 private:
  const std::vector<int64_t>& shape(int32_t v) const { return r_.shape[v]; }
  const std::vector<int64_t>& data(int32_t v) const { return r_.data[v]; }

  std::vector<int64_t> device(const Op& op) {
    const std::vector<int64_t>& x = shape(op.inputs[0]);
    const auto& c = op.ints;
    switch (op.kind) {
      case OpKind::kConv:
      case OpKind::kConvTranspose: {
        if (x.size() != 4) bad(op, "input shape " + text(x) + " is not 4-D");
        if (x[1] != c[kConvCin]) bad(op, "input shape " + text(x) + " has " + std::to_string(x[1]) + " channels, the weights " + std::to_string(c[kConvCin]));
        int64_t oh, ow;
        if (op.kind == OpKind::kConv) {
          oh = window_output(op, x[2], c[kConvKh], c[kConvSh], c[kConvDh], c[kConvPadTop] + c[kConvPadBottom], false);
          ow = window_output(op, x[3], c[kConvKw], c[kConvSw], c[kConvDw], c[kConvPadLeft] + c[kConvPadRight], false);
        } else {
          oh = (x[2] - 1) * c[kConvSh] - c[kConvPadTop] - c[kConvPadBottom] + c[kConvDh] * (c[kConvKh] - 1) + 1 + c[kConvOutPadH];
          ow = (x[3] - 1) * c[kConvSw] - c[kConvPadLeft] - c[kConvPadRight] + c[kConvDw] * (c[kConvKw] - 1) + 1 + c[kConvOutPadW];
          if (x[2] < 1 || x[3] < 1 || oh < 1 || ow < 1) bad(op, "input shape " + text(x) + " gives no output");
        }
        return {x[0], c[kConvCout], oh, ow};
      }
      case OpKind::kMaxPool:
      case OpKind::kAveragePool: {
        if (x.size() != 4) bad(op, "input shape " + text(x) + " is not 4-D");
        const bool ceil_mode = c[kPoolCeil] != 0;
        return {x[0], x[1], window_output(op, x[2], c[kPoolKh], c[kPoolSh], c[kPoolDh], c[kPoolPadTop] + c[kPoolPadBottom], ceil_mode),
                window_output(op, x[3], c[kPoolKw], c[kPoolSw], c[kPoolDw], c[kPoolPadLeft] + c[kPoolPadRight], ceil_mode)};
      }
      case OpKind::kGlobalAveragePool:
      case OpKind::kGlobalMaxPool:
        if (x.size() != 4) bad(op, "input shape " + text(x) + " is not 4-D");
        if (x[2] * x[3] == 0) bad(op, "input shape " + text(x) + " is empty");
        return {x[0], x[1], 1, 1};
      case OpKind::kResize: {
        if (x.size() != 4) bad(op, "input shape " + text(x) + " is not 4-D");
        std::vector<int64_t> out = x;
        if (op.inputs[1] >= 0) {
          const std::vector<int64_t>& sizes = data(op.inputs[1]);
          if (sizes.size() != 4 || sizes[0] != x[0] || sizes[1] != x[1])
            bad(op, "sizes " + text(sizes) + " must keep N and C of " + text(x));
          out = sizes;
        } else {
          out[2] = static_cast<int64_t>(static_cast<float>(x[2]) * op.floats[0]);
          out[3] = static_cast<int64_t>(static_cast<float>(x[3]) * op.floats[1]);
        }
        if (out[2] < 1 || out[3] < 1 || x[2] < 1 || x[3] < 1) bad(op, "resizing " + text(x) + " to " + text(out));
        return out;
      }
      case OpKind::kConcat: {
        const size_t axis = static_cast<size_t>(c[0]);
        std::vector<int64_t> out = x;
        for (size_t i = 1; i < op.inputs.size(); ++i) {
          const std::vector<int64_t>& y = shape(op.inputs[i]);
          bool fits = y.size() == x.size();
          for (size_t d = 0; fits && d < x.size(); ++d) fits = d == axis || x[d] == y[d];
          if (!fits) bad(op, "shapes " + text(x) + " and " + text(y) + " cannot be concatenated along axis " + std::to_string(axis));
          out[axis] += y[axis];
        }
        return out;
      }
      case OpKind::kMatMul: {
        const std::vector<int64_t>& b = shape(op.inputs[1]);
        if (x.size() < 2 || b.size() < 2) bad(op, "operands " + text(x) + " and " + text(b) + " are not matrices");
        const int64_t m = c[0] ? x[x.size() - 1] : x[x.size() - 2], k = c[0] ? x[x.size() - 2] : x[x.size() - 1];
        const int64_t kb = c[1] ? b[b.size() - 1] : b[b.size() - 2], n = c[1] ? b[b.size() - 2] : b[b.size() - 1];
        if (k != kb) bad(op, "operands " + text(x) + " and " + text(b) + " do not multiply");
        std::vector<int64_t> out = broadcast(op, std::vector<int64_t>(x.begin(), x.end() - 2), std::vector<int64_t>(b.begin(), b.end() - 2));
        if (out.size() > 2) bad(op, "more than two batch axes");
        out.push_back(m);
        out.push_back(n);
        return out;
      }
      case OpKind::kSoftmax:
      case OpKind::kUnary: return x;
      case OpKind::kTranspose: {
        if (c.size() != x.size()) bad(op, "input shape " + text(x) + " does not match the permutation");
        std::vector<int64_t> out;
        for (int64_t a : c) out.push_back(x[static_cast<size_t>(a)]);
        return out;
      }
      case OpKind::kBinary: return broadcast(op, x, shape(op.inputs[1]));
      case OpKind::kChannelAffine: {
        if (x.size() < 2 || x[1] != element_count(shape(op.inputs[1])))
          bad(op, "input shape " + text(x) + " does not have " + std::to_string(element_count(shape(op.inputs[1]))) + " channels");
        return x;
      }
      case OpKind::kView: return view(op, x);
      default: bad(op, "not a device operation");
    }
  }

  std::vector<int64_t> view(const Op& op, const std::vector<int64_t>& x) {
    const ViewKind kind = static_cast<ViewKind>(op.ints[0]);
    const int64_t count = element_count(x);
    std::vector<int64_t> out;
    switch (kind) {
      case ViewKind::kIdentity: return x;
      case ViewKind::kReshape: {
        const std::vector<int64_t>& target = data(op.inputs[1]);
        const bool allowzero = op.ints.size() > 1 && op.ints[1] != 0;
        int64_t known = 1, infer = -1;
        for (size_t i = 0; i < target.size(); ++i) {
          int64_t d = target[i];
          if (d == 0 && !allowzero) {
            if (i >= x.size()) bad(op, "shape " + text(target) + " copies a dimension " + text(x) + " lacks");
            d = x[i];
          }
          if (d == -1) {
            if (infer >= 0) bad(op, "shape " + text(target) + " has two -1");
            infer = static_cast<int64_t>(i);
            out.push_back(1);
            continue;
          }
          if (d < 0) bad(op, "shape " + text(target) + " has a negative dimension");
          known *= d;
          out.push_back(d);
        }
        if (infer >= 0) {
          if (known == 0 || count % known) bad(op, "cannot reshape " + text(x) + " to " + text(target));
          out[static_cast<size_t>(infer)] = count / known;
        }
        break;
      }
      case ViewKind::kFlatten: {
        const size_t axis = static_cast<size_t>(op.ints[1]);
        if (axis > x.size()) bad(op, "axis " + std::to_string(axis) + " for shape " + text(x));
        int64_t outer = 1;
        for (size_t i = 0; i < axis; ++i) outer *= x[i];
        out = {outer, outer == 0 ? 0 : count / outer};
        break;
      }
      case ViewKind::kSqueeze: {
        const std::vector<int64_t> axes(op.ints.begin() + 1, op.ints.end());
        for (size_t i = 0; i < x.size(); ++i) {
          const bool listed = std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) != axes.end();
          if (listed && x[i] != 1) bad(op, "axis " + std::to_string(i) + " of " + text(x) + " is not 1");
          if (!(listed || (axes.empty() && x[i] == 1))) out.push_back(x[i]);
        }
        break;
      }
      case ViewKind::kUnsqueeze: {
        const std::vector<int64_t> axes(op.ints.begin() + 1, op.ints.end());
        const size_t rank = x.size() + axes.size();
        size_t from = 0;
        for (size_t i = 0; i < rank; ++i) {
          if (std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) != axes.end())
            out.push_back(1);
          else if (from < x.size())
            out.push_back(x[from++]);
          else
            bad(op, "axes do not fit shape " + text(x));
        }
        break;
      }
    }
    if (out.size() > 4) bad(op, "the result " + text(out) + " has more than 4 axes");
    if (element_count(out) != count) bad(op, "cannot view " + text(x) + " as " + text(out));
    return out;
  }

  void host(const Op& op, std::vector<int64_t>& out, std::vector<int64_t>& out_shape) {
    out.clear();
    switch (op.kind) {
      case OpKind::kShape: {
        const std::vector<int64_t>& x = shape(op.inputs[0]);
        const int64_t rank = static_cast<int64_t>(x.size());
        auto clamp = [&](int64_t v) { return std::min(rank, std::max<int64_t>(0, v < 0 ? v + rank : v)); };
        const int64_t start = clamp(op.ints[0]), end = clamp(op.ints[1]);
        for (int64_t i = start; i < end; ++i) out.push_back(x[static_cast<size_t>(i)]);
        out_shape = {static_cast<int64_t>(out.size())};
        return;
      }
      case OpKind::kHostCast:
        out = data(op.inputs[0]);
        out_shape = shape(op.inputs[0]);
        return;
      case OpKind::kHostSlice: {
        const std::vector<int64_t>& x = data(op.inputs[0]);
        if (shape(op.inputs[0]).size() != 1) bad(op, "slicing a tensor of rank " + std::to_string(shape(op.inputs[0]).size()));
        const std::vector<int64_t>& starts = data(op.inputs[1]);
        const std::vector<int64_t>& ends = data(op.inputs[2]);
        if (starts.size() != 1 || ends.size() != 1) bad(op, "starts and ends must hold one value");
        if (op.inputs[3] >= 0 && (data(op.inputs[3]).size() != 1 || (data(op.inputs[3])[0] != 0 && data(op.inputs[3])[0] != -1)))
          bad(op, "axes must be [0]");
        const int64_t step = op.inputs[4] >= 0 && !data(op.inputs[4]).empty() ? data(op.inputs[4])[0] : 1;
        if (step == 0) bad(op, "step 0");
        const int64_t n = static_cast<int64_t>(x.size());
        auto clamp = [&](int64_t v, int64_t lo, int64_t hi) {
          if (v < 0) v += n;
          return std::min(hi, std::max(lo, v));
        };
        int64_t s = starts[0], e = ends[0];
        if (step > 0) {
          s = clamp(s, 0, n);
          e = clamp(e, 0, n);
          for (int64_t i = s; i < e; i += step) out.push_back(x[static_cast<size_t>(i)]);
        } else {
          s = clamp(s, -1, n - 1);
          e = clamp(e, -1, n - 1);
          for (int64_t i = s; i > e; i += step) out.push_back(x[static_cast<size_t>(i)]);
        }
        out_shape = {static_cast<int64_t>(out.size())};
        return;
      }
      case OpKind::kHostConcat:
        for (int32_t v : op.inputs) out.insert(out.end(), data(v).begin(), data(v).end());
        out_shape = {static_cast<int64_t>(out.size())};
        return;
      case OpKind::kHostGather: {
        const std::vector<int64_t>& x = data(op.inputs[0]);
        const int64_t n = static_cast<int64_t>(x.size());
        for (int64_t i : data(op.inputs[1])) {
          if (i < -n || i >= n) bad(op, "index " + std::to_string(i) + " out of range for " + std::to_string(n) + " values");
          out.push_back(x[static_cast<size_t>(i < 0 ? i + n : i)]);
        }
        out_shape = shape(op.inputs[1]);
        return;
      }
      case OpKind::kHostUnsqueeze:
      case OpKind::kHostSqueeze: {
        out = data(op.inputs[0]);
        out_shape.clear();
        const std::vector<int64_t>& x = shape(op.inputs[0]);
        if (op.kind == OpKind::kHostSqueeze) {
          for (size_t i = 0; i < x.size(); ++i)
            if (std::find(op.ints.begin(), op.ints.end(), static_cast<int64_t>(i)) == op.ints.end() && !(op.ints.empty() && x[i] == 1))
              out_shape.push_back(x[i]);
        } else {
          size_t from = 0;
          for (size_t i = 0; i < x.size() + op.ints.size(); ++i)
            out_shape.push_back(std::find(op.ints.begin(), op.ints.end(), static_cast<int64_t>(i)) != op.ints.end() ? 1
                                : from < x.size()                                                      ? x[from++]
                                                                                                        : 1);
        }
        if (out_shape.size() > 1 || element_count(out_shape) != static_cast<int64_t>(out.size())) bad(op, "the result has rank > 1");
        return;
      }
      case OpKind::kHostBinary: {
        const std::vector<int64_t>& a = data(op.inputs[0]);
        const std::vector<int64_t>& b = data(op.inputs[1]);
        out_shape = broadcast(op, shape(op.inputs[0]), shape(op.inputs[1]));
        const int64_t n = element_count(out_shape);
        for (int64_t i = 0; i < n; ++i) {
          const int64_t x = a[a.size() == 1 ? 0 : static_cast<size_t>(i)], y = b[b.size() == 1 ? 0 : static_cast<size_t>(i)];
          switch (static_cast<BinaryOp>(op.ints[0])) {
            case BinaryOp::kAdd: out.push_back(x + y); break;
            case BinaryOp::kSub: out.push_back(x - y); break;
            case BinaryOp::kMul: out.push_back(x * y); break;
            case BinaryOp::kDiv:
              if (y == 0) bad(op, "integer division by zero");
              out.push_back(x / y);
              break;
          }
        }
        return;
      }
      default: bad(op, "not a host operation");
    }
  }

  const Program& p_;
  RunShapes& r_;
};

}  // namespace

int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

RunShapes start_shapes(const Program& p) {
  RunShapes r;
  r.shape.resize(p.values.size());
  r.data.resize(p.values.size());
  r.known.assign(p.values.size(), false);
  for (size_t v = 0; v < p.values.size(); ++v) {
    const ValueDesc& d = p.values[v];
    if (d.placement != Placement::kConstant) continue;
    r.shape[v] = d.dims;
    if (d.elem_type != EPHOST_ELEMENT_FLOAT) r.data[v] = p.host_constants[static_cast<size_t>(d.constant)].data;
    r.known[v] = true;
  }
  return r;
}

void infer_shapes(const Program& program, RunShapes& shapes) { Inference(program, shapes).run(); }

void resize_scales(const Op& op, const std::vector<int64_t>& in, const std::vector<int64_t>& out, float* scale_h,
                   float* scale_w) {
  if (op.inputs[1] < 0) {
    *scale_h = op.floats[0];
    *scale_w = op.floats[1];
  } else {
    *scale_h = static_cast<float>(out[2]) / static_cast<float>(in[2]);
    *scale_w = static_cast<float>(out[3]) / static_cast<float>(in[3]);
  }
}

}  // namespace ephost_opencl
