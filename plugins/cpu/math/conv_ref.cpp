// ConvRunner without oneDNN (EPHOST_BUILD_DNNL_PLUGIN=OFF): direct loops, parallel over output
// planes. Correct for every geometry conv_geometry accepts, but far slower than oneDNN.
#if !defined(EPHOST_WITH_DNNL)

#include <algorithm>

#include "conv.h"
#include "spatial3.h"
#include "parallel.h"

namespace ephost::cpu::math {

struct ConvRunner::Impl {
  bool transposed;
  const float* const_weights;
};

ConvRunner::ConvRunner(bool transposed, ConvLayout, const float* constant_weights) : impl_(std::make_unique<Impl>()) {
  impl_->transposed = transposed;
  impl_->const_weights = constant_weights;
}

ConvRunner::~ConvRunner() = default;

std::string ConvRunner::implementation(const ConvGeometry&, bool, int) { return "reference (no oneDNN)"; }

void ConvRunner::run(const ConvGeometry& g, const float* x, const float* w, const float* bias, float* y, int threads) {
  if (impl_->const_weights) w = impl_->const_weights;
  const Spatial3 G = to_spatial3(g);
  const int64_t groups = g.group, ICg = g.in_channels / groups, OCg = g.out_channels / groups;
  const int64_t in_plane = G.in[0] * G.in[1] * G.in[2], out_plane = G.out[0] * G.out[1] * G.out[2];
  const int64_t K = G.k[0] * G.k[1] * G.k[2];
  const bool tr = impl_->transposed;
  parallel_for(g.batch * g.out_channels, threads, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t n = p / g.out_channels, oc = p % g.out_channels, grp = oc / OCg, ocg = oc % OCg;
      float* yp = y + p * out_plane;
      std::fill(yp, yp + out_plane, bias ? bias[oc] : 0.f);
      for (int64_t ic = 0; ic < ICg; ++ic) {
        const int64_t c = grp * ICg + ic;
        const float* xp = x + (n * g.in_channels + c) * in_plane;
        // Conv W [M, C/G, k]; ConvTranspose W [C, M/G, k].
        const float* wk = tr ? w + (c * OCg + ocg) * K : w + (oc * ICg + ic) * K;
        for (int64_t a = 0; a < G.k[0]; ++a)
          for (int64_t b = 0; b < G.k[1]; ++b)
            for (int64_t e = 0; e < G.k[2]; ++e) {
              const float wv = wk[(a * G.k[1] + b) * G.k[2] + e];
              if (!tr) {
                for (int64_t od = 0; od < G.out[0]; ++od) {
                  const int64_t id = od * G.s[0] - G.pb[0] + a * G.d[0];
                  if (id < 0 || id >= G.in[0]) continue;
                  for (int64_t oh = 0; oh < G.out[1]; ++oh) {
                    const int64_t ih = oh * G.s[1] - G.pb[1] + b * G.d[1];
                    if (ih < 0 || ih >= G.in[1]) continue;
                    const float* xr = xp + (id * G.in[1] + ih) * G.in[2];
                    float* yr = yp + (od * G.out[1] + oh) * G.out[2];
                    for (int64_t ow = 0; ow < G.out[2]; ++ow) {
                      const int64_t iw = ow * G.s[2] - G.pb[2] + e * G.d[2];
                      if (iw >= 0 && iw < G.in[2]) yr[ow] += wv * xr[iw];
                    }
                  }
                }
              } else {
                for (int64_t id = 0; id < G.in[0]; ++id) {
                  const int64_t od = id * G.s[0] + a * G.d[0] - G.pb[0];
                  if (od < 0 || od >= G.out[0]) continue;
                  for (int64_t ih = 0; ih < G.in[1]; ++ih) {
                    const int64_t oh = ih * G.s[1] + b * G.d[1] - G.pb[1];
                    if (oh < 0 || oh >= G.out[1]) continue;
                    const float* xr = xp + (id * G.in[1] + ih) * G.in[2];
                    float* yr = yp + (od * G.out[1] + oh) * G.out[2];
                    for (int64_t iw = 0; iw < G.in[2]; ++iw) {
                      const int64_t ow = iw * G.s[2] + e * G.d[2] - G.pb[2];
                      if (ow >= 0 && ow < G.out[2]) yr[ow] += wv * xr[iw];
                    }
                  }
                }
              }
            }
      }
    }
  });
}

}  // namespace ephost::cpu::math

#endif  // !EPHOST_WITH_DNNL
