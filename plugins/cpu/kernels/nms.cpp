// NonMaxSuppression (opsets 10, 11): greedy per (batch, class) selection by score.
#include <algorithm>
#include <numeric>

#include "kernel_registry.h"

namespace ephost::cpu {

namespace {

struct Box {
  float y1, x1, y2, x2;
};

// Boxes as corners with y1 <= y2 and x1 <= x2, whichever encoding the node uses.
Box corners(const float* b, bool center) {
  if (center) {
    const float xc = b[0], yc = b[1], w = b[2], h = b[3];
    return {yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2};
  }
  return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
}

float iou(const Box& a, const Box& b) {
  const float ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  const float iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (ih <= 0.f || iw <= 0.f) return 0.f;
  const float inter = ih * iw;
  const float area_a = (a.y2 - a.y1) * (a.x2 - a.x1), area_b = (b.y2 - b.y1) * (b.x2 - b.x1);
  const float uni = area_a + area_b - inter;
  return uni > 0.f ? inter / uni : 0.f;
}

class NmsKernel : public CpuKernel {
 public:
  NmsKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), center_(node.attr_int("center_point_box", 0) != 0) {}

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor boxes = required(ctx, 0, "boxes"), scores = required(ctx, 1, "scores");
    expect_type(boxes, {EPHOST_ELEMENT_FLOAT}, "boxes");
    expect_type(scores, {EPHOST_ELEMENT_FLOAT}, "scores");
    const Shape bs = boxes.shape(), ss = scores.shape();
    if (bs.size() != 3 || bs[2] != 4) fail("boxes must have shape [batch, boxes, 4], found " + math::to_string(bs));
    if (ss.size() != 3 || ss[0] != bs[0] || ss[2] != bs[1])
      fail("scores must have shape [batch, classes, boxes] matching boxes " + math::to_string(bs) + ", found " +
           math::to_string(ss));
    int64_t max_out = 0;
    float iou_thr = 0.f, score_thr = 0.f;
    bool has_score_thr = false;
    if (ctx.input(2).present() && ctx.input(2).size() > 0)
      max_out = int_scalar_of(ctx.input(2), "max_output_boxes_per_class");
    if (ctx.input(3).present() && ctx.input(3).size() > 0) iou_thr = static_cast<float>(scalar_of(ctx.input(3), "iou_threshold"));
    if (ctx.input(4).present() && ctx.input(4).size() > 0) {
      score_thr = static_cast<float>(scalar_of(ctx.input(4), "score_threshold"));
      has_score_thr = true;
    }
    if (iou_thr < 0.f || iou_thr > 1.f) fail("iou_threshold must be in [0, 1], found " + std::to_string(iou_thr));
    const int64_t B = bs[0], N = bs[1], C = ss[1];
    std::vector<int64_t> selected;  // triples
    if (max_out > 0) {
      std::vector<Box> all(N);
      std::vector<int64_t> order;
      std::vector<int64_t> kept;
      for (int64_t b = 0; b < B; ++b) {
        for (int64_t i = 0; i < N; ++i) all[i] = corners(boxes.data<float>() + (b * N + i) * 4, center_);
        for (int64_t c = 0; c < C; ++c) {
          const float* sc = scores.data<float>() + (b * C + c) * N;
          order.clear();
          for (int64_t i = 0; i < N; ++i)
            if (!has_score_thr || sc[i] > score_thr) order.push_back(i);
          // Highest score first; equal scores keep the lower box index first.
          std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t z) { return sc[a] > sc[z]; });
          kept.clear();
          for (int64_t i : order) {
            if (static_cast<int64_t>(kept.size()) >= max_out) break;
            bool keep = true;
            for (int64_t k : kept)
              if (iou(all[i], all[k]) > iou_thr) {
                keep = false;
                break;
              }
            if (keep) kept.push_back(i);
          }
          for (int64_t k : kept) selected.insert(selected.end(), {b, c, k});
        }
      }
    }
    const int64_t n = static_cast<int64_t>(selected.size() / 3);
    int64_t* y = ctx.output<int64_t>(0, {n, 3});
    std::copy(selected.begin(), selected.end(), y);
    (void)threads;
  }

 private:
  bool center_;
};

}  // namespace

void register_nms_kernels(KernelRegistry& r) {
  r.add("NonMaxSuppression", 10, 17, inputs_of({EPHOST_ELEMENT_FLOAT}, {0, 1}), make_factory<NmsKernel>());
}

}  // namespace ephost::cpu
