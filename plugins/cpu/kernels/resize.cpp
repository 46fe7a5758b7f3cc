// Resize (opsets 10 to 19: opset 18's antialias, axes and keep_aspect_ratio_policy, opset 19's
// half_pixel_symmetric) and Upsample (7, 9).
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernel_registry.h"
#include "math/resize.h"

namespace ephost::cpu {

namespace {

bool parse_mode(const std::string& s, math::ResizeMode* m) {
  if (s == "nearest") *m = math::ResizeMode::kNearest;
  else if (s == "linear" || s == "bilinear") *m = math::ResizeMode::kLinear;  // Upsample-7 said "bilinear"
  else if (s == "cubic") *m = math::ResizeMode::kCubic;
  else return false;
  return true;
}

bool parse_coord(const std::string& s, int64_t opset, math::CoordMode* m) {
  if (s == "half_pixel") *m = math::CoordMode::kHalfPixel;
  else if (s == "half_pixel_symmetric" && opset >= 19) *m = math::CoordMode::kHalfPixelSymmetric;
  else if (s == "pytorch_half_pixel") *m = math::CoordMode::kPytorchHalfPixel;
  else if (s == "align_corners") *m = math::CoordMode::kAlignCorners;
  else if (s == "asymmetric") *m = math::CoordMode::kAsymmetric;
  else if (s == "tf_half_pixel_for_nn") *m = math::CoordMode::kTfHalfPixelForNN;
  else if (s == "tf_crop_and_resize") *m = math::CoordMode::kTfCropAndResize;
  else return false;
  return true;
}

bool parse_nearest(const std::string& s, math::NearestMode* m) {
  if (s == "round_prefer_floor") *m = math::NearestMode::kRoundPreferFloor;
  else if (s == "round_prefer_ceil") *m = math::NearestMode::kRoundPreferCeil;
  else if (s == "floor") *m = math::NearestMode::kFloor;
  else if (s == "ceil") *m = math::NearestMode::kCeil;
  else return false;
  return true;
}

// Where the node keeps its scales and sizes, by op and opset.
struct ResizeInputs {
  bool upsample = false;
  int64_t roi = -1, scales = -1, sizes = -1;  // input indices; -1: none
};

ResizeInputs inputs_for(const sdk::Node& node) {
  ResizeInputs r;
  const int64_t opset = node.opset();
  if (node.op_type() == "Upsample") {
    r.upsample = true;
    if (opset >= 9) r.scales = 1;
  } else if (opset < 11) {
    r.scales = 1;
  } else {
    r.roi = 1;
    r.scales = 2;
    r.sizes = 3;
  }
  return r;
}

class ResizeKernel : public CpuKernel {
 public:
  ResizeKernel(const sdk::Node& node, const KernelConfig& c) : CpuKernel(node, c), in_(inputs_for(node)) {
    const std::string mode = node.attr_string("mode", "nearest");
    if (!parse_mode(mode, &p_.mode)) fail_node(node, "unsupported mode '" + mode + "'");
    if (in_.upsample || node.opset() < 11) {
      // Upsample and Resize-10 map coordinates asymmetrically and pick nearest as Upsample did.
      p_.coord = math::CoordMode::kAsymmetric;
      p_.nearest = math::NearestMode::kSimple;
      if (in_.upsample && node.opset() < 9) attr_scales_ = node.attr_floats("scales");
    } else {
      const std::string coord = node.attr_string("coordinate_transformation_mode", "half_pixel");
      const std::string nearest = node.attr_string("nearest_mode", "round_prefer_floor");
      if (!parse_coord(coord, node.opset(), &p_.coord)) fail_node(node, "unsupported coordinate_transformation_mode '" + coord + "'");
      if (!parse_nearest(nearest, &p_.nearest)) fail_node(node, "unsupported nearest_mode '" + nearest + "'");
      p_.cubic_a = node.attr_float("cubic_coeff_a", -0.75f);
      p_.exclude_outside = node.attr_int("exclude_outside", 0) != 0;
      p_.extrapolation_value = node.attr_float("extrapolation_value", 0.f);
    }
    if (!in_.upsample && node.opset() >= 18) {
      p_.antialias = node.attr_int("antialias", 0) != 0;
      has_axes_ = node.has_attr("axes");
      axes_ = node.attr_ints("axes");
      policy_ = node.attr_string("keep_aspect_ratio_policy", "stretch");
      if (policy_ != "stretch" && policy_ != "not_larger" && policy_ != "not_smaller")
        fail_node(node, "unsupported keep_aspect_ratio_policy '" + policy_ + "'");
    }
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "X");
    const Shape xs = x.shape();
    const size_t r = xs.size();
    // Opset 18: scales, sizes and roi may name only some axes.
    std::vector<int64_t> axes;
    if (has_axes_) {
      std::vector<bool> seen(r, false);
      for (int64_t a : axes_) {
        const int64_t n = math::normalize_axis(a, static_cast<int64_t>(r));
        if (seen[n]) fail("axis " + std::to_string(n) + " appears twice in axes");
        seen[n] = true;
        axes.push_back(n);
      }
    } else {
      for (size_t i = 0; i < r; ++i) axes.push_back(static_cast<int64_t>(i));
    }
    std::vector<float> scales = attr_scales_;
    Shape ys;
    const sdk::Tensor sc = in_.scales >= 0 ? ctx.input(in_.scales) : sdk::Tensor();
    const sdk::Tensor sz = in_.sizes >= 0 ? ctx.input(in_.sizes) : sdk::Tensor();
    if (sc.present() && sc.size() > 0) {
      expect_type(sc, {EPHOST_ELEMENT_FLOAT}, "scales");
      scales.assign(sc.data<float>(), sc.data<float>() + sc.size());
    }
    if (!scales.empty()) {
      if (sz.present() && sz.size() > 0) fail("only one of scales and sizes may be given");
      if (scales.size() != axes.size())
        fail("scales has " + std::to_string(scales.size()) + " values for " + std::to_string(axes.size()) + " axes");
      std::vector<float> full(r, 1.f);
      for (size_t i = 0; i < axes.size(); ++i) full[axes[i]] = scales[i];
      scales = full;
      for (size_t i = 0; i < r; ++i) {
        if (!(scales[i] > 0.f)) fail("scales must be positive, found " + std::to_string(scales[i]));
        ys.push_back(math::resize_output_size(xs[i], scales[i]));
      }
    } else if (sz.present() && sz.size() > 0) {
      const Shape sizes = ints_of(sz, "sizes");
      if (sizes.size() != axes.size())
        fail("sizes has " + std::to_string(sizes.size()) + " values for " + std::to_string(axes.size()) + " axes");
      for (int64_t s : sizes)
        if (s < 0) fail("sizes must not be negative, found " + math::to_string(sizes));
      ys = xs;
      scales.assign(r, 1.f);
      if (policy_ == "stretch") {
        for (size_t i = 0; i < axes.size(); ++i) {
          ys[axes[i]] = sizes[i];
          scales[axes[i]] = xs[axes[i]] > 0 ? static_cast<float>(sizes[i]) / static_cast<float>(xs[axes[i]]) : 1.f;
        }
      } else {
        // One scale for every listed axis: the largest (not_smaller) or smallest (not_larger) of them.
        float scale = policy_ == "not_larger" ? HUGE_VALF : 0.f;
        for (size_t i = 0; i < axes.size(); ++i) {
          const float s = xs[axes[i]] > 0 ? static_cast<float>(sizes[i]) / static_cast<float>(xs[axes[i]]) : 1.f;
          scale = policy_ == "not_larger" ? std::min(scale, s) : std::max(scale, s);
        }
        for (int64_t a : axes) {
          scales[a] = scale;
          ys[a] = static_cast<int64_t>(std::floor(static_cast<float>(xs[a]) * scale + 0.5f));
        }
      }
    } else {
      fail("one of scales and sizes must be given");
    }
    math::ResizeParams p = p_;
    if (p.coord == math::CoordMode::kTfCropAndResize) {
      const sdk::Tensor roi = in_.roi >= 0 ? ctx.input(in_.roi) : sdk::Tensor();
      if (!roi.present()) fail("tf_crop_and_resize needs the roi input");
      if (roi.elem_type() == EPHOST_ELEMENT_FLOAT) p.roi.assign(roi.data<float>(), roi.data<float>() + roi.size());
      else if (roi.elem_type() == EPHOST_ELEMENT_DOUBLE) p.roi.assign(roi.data<double>(), roi.data<double>() + roi.size());
      else fail(std::string("roi must be float or double, found ") + type_name(roi.elem_type()));
      if (has_axes_) {  // [starts, ends] of the listed axes; the others keep [0, 1]
        if (p.roi.size() != 2 * axes.size())
          fail("roi has " + std::to_string(p.roi.size()) + " values but must have 2 * " + std::to_string(axes.size()));
        std::vector<float> full(2 * r, 0.f);
        for (size_t i = 0; i < r; ++i) full[r + i] = 1.f;
        for (size_t i = 0; i < axes.size(); ++i) {
          full[axes[i]] = p.roi[i];
          full[r + axes[i]] = p.roi[axes.size() + i];
        }
        p.roi = full;
      }
    }
    void* y = ctx.output_raw(0, x.elem_type(), ys);
    if (p.mode == math::ResizeMode::kNearest && x.elem_type() != EPHOST_ELEMENT_FLOAT) {
      if (!is_movable_type(x.elem_type())) fail(std::string("unsupported type ") + type_name(x.elem_type()));
      math::resize_nearest(x.raw(), xs, y, ys, scales, p, sdk::element_size(x.elem_type()), threads);
    } else {
      expect_type(x, {EPHOST_ELEMENT_FLOAT}, "X (linear and cubic modes, and tf_crop_and_resize)");
      math::resize(x.data<float>(), xs, static_cast<float*>(y), ys, scales, p, threads);
    }
  }

 private:
  ResizeInputs in_;
  math::ResizeParams p_;
  std::vector<float> attr_scales_;
  bool has_axes_ = false;
  Shape axes_;
  std::string policy_ = "stretch";
};

bool resize_supported(const sdk::Node& n) {
  math::ResizeMode mode;
  if (!parse_mode(n.attr_string("mode", "nearest"), &mode)) return false;
  if (n.op_type() == "Resize" && n.opset() >= 11) {
    math::CoordMode coord;
    math::NearestMode nearest;
    if (!parse_coord(n.attr_string("coordinate_transformation_mode", "half_pixel"), n.opset(), &coord)) return false;
    if (!parse_nearest(n.attr_string("nearest_mode", "round_prefer_floor"), &nearest)) return false;
    // Extrapolated positions take a float value.
    if (coord == math::CoordMode::kTfCropAndResize && !input_type_in(n, 0, {EPHOST_ELEMENT_FLOAT})) return false;
  } else if (mode == math::ResizeMode::kCubic) {
    return false;
  }
  if (mode == math::ResizeMode::kNearest) return all_movable(n);
  return input_type_in(n, 0, {EPHOST_ELEMENT_FLOAT});
}

}  // namespace

void register_resize_kernels(KernelRegistry& r) {
  r.add("Resize", 10, 19, resize_supported, make_factory<ResizeKernel>());
  r.add("Upsample", 7, 9, resize_supported, make_factory<ResizeKernel>());
}

}  // namespace ephost::cpu
