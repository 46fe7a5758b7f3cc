#if defined(EPHOST_WITH_DNNL)

#include "winograd_weights.h"

#include <new>
#include <vector>

namespace ephost::cpu::fusion {

using dnnl::memory;

float* PackBuffers::floats(int slot, size_t count) {
  Block& b = blocks_[slot];
  if (b.count < count) {
    b.data.reset(new (std::nothrow) float[count]);
    if (!b.data) throw std::bad_alloc();
    b.count = count;
  }
  return b.data.get();
}

bool is_winograd_layout(const memory::desc& want) { return want.data.format_kind == dnnl_format_kind_wino; }

namespace {

// The transforms oneDNN's Winograd kernels expect (rows: alpha, columns: the 3 taps). F(4,3)'s is
// scaled as oneDNN scales it, so that its kernels' input and output transforms match.
constexpr float kG2x3[4][3] = {{1.0f, 0.0f, 0.0f}, {0.5f, 0.5f, 0.5f}, {0.5f, -0.5f, 0.5f}, {0.0f, 0.0f, 1.0f}};
constexpr float kG4x3[6][3] = {{1.13777777777778f, 0.f, 0.f},
                               {-0.688403361344538f, -0.430252100840336f, -0.26890756302521f},
                               {-0.688403361344538f, 0.430252100840336f, -0.26890756302521f},
                               {0.119514472455649f, 0.179271708683473f, 0.26890756302521f},
                               {0.119514472455649f, -0.179271708683473f, 0.26890756302521f},
                               {0.f, 0.f, 1.f}};

// Float offset of U[a][b] for (padded) output channel op and input channel ip in the layout.
struct WinoLayout {
  dnnl_wino_desc_t d;
  int64_t nb_ic, nb_oc;
  int64_t offset(int64_t a, int64_t b, int64_t op, int64_t ip) const {
    const int64_t alpha = d.alpha, ocb = d.oc_block, icb = d.ic_block, oc2 = d.oc2_block;
    const int64_t o = op % ocb, i = ip % icb;
    switch (d.wino_format) {
      case dnnl_wino_wei_aaOio:
        return (a * alpha + b) * d.oc * d.ic + (op / ocb) * d.ic * ocb + ip * ocb + o;
      case dnnl_wino_wei_aaOBiOo: {
        const int64_t occ = op / (oc2 * ocb), ob2 = (op / ocb) % oc2, ib = ip / icb;
        return ((((a * alpha + b) * (nb_oc / oc2) + occ) * nb_ic + ib) * oc2 * icb + i * oc2 + ob2) * ocb + o;
      }
      default: {  // dnnl_wino_wei_OBaaIBOIio
        const int64_t ic2 = d.ic2_block;
        const int64_t occ = op / (oc2 * ocb), ob = (op / ocb) % oc2;
        const int64_t icc = ip / (ic2 * icb), ib = (ip / icb) % ic2;
        return ((((((occ * alpha + a) * alpha + b) * (nb_ic / ic2) + icc) * oc2 + ob) * ic2 + ib) * icb + i) * ocb + o;
      }
    }
  }
};

bool layout_supported(const dnnl_wino_desc_t& d, int64_t oc, int64_t ic) {
  const bool f2 = d.wino_format == dnnl_wino_wei_aaOio || d.wino_format == dnnl_wino_wei_aaOBiOo;
  const bool f4 = d.wino_format == dnnl_wino_wei_OBaaIBOIio;
  if (d.r != 3 || !((f2 && d.alpha == 4) || (f4 && d.alpha == 6))) return false;
  if (d.oc_block <= 0 || d.ic_block <= 0 || d.oc2_block <= 0 || d.oc < oc || d.ic < ic) return false;
  if (d.oc % d.oc_block != 0 || d.ic % d.ic_block != 0 || (d.oc / d.oc_block) % d.oc2_block != 0) return false;
  if (f4 && (d.ic2_block <= 0 || (d.ic / d.ic_block) % d.ic2_block != 0)) return false;
  return d.size >= static_cast<size_t>(d.alpha) * d.alpha * d.oc * d.ic * sizeof(float);
}

}  // namespace

math::WeightsMemory pack_winograd_weights_dnnl(const float* w, int64_t oc, int64_t ic, const memory::desc& want) {
  dnnl::engine& eng = math::cpu_engine();
  memory user(memory::desc({oc, ic, 3, 3}, memory::data_type::f32, memory::format_tag::oihw), eng,
              const_cast<float*>(w));
  math::WeightsMemory packed = math::weights_memory(want);
  dnnl::stream& s = math::thread_stream();
  dnnl::reorder(user, packed.memory).execute(s, user, packed.memory);
  s.wait();
  return packed;
}

math::WeightsMemory pack_winograd_weights(const float* w, const float* mul, int64_t oc, int64_t ic,
                                          const memory::desc& want, PackBuffers& buffers) {
  const dnnl_wino_desc_t& d = want.data.format_desc.wino_desc;
  if (!layout_supported(d, oc, ic)) {
    if (mul == nullptr) return pack_winograd_weights_dnnl(w, oc, ic, want);
    std::vector<float> scaled(w, w + oc * ic * 9);
    for (int64_t o = 0; o < oc; ++o)
      for (int64_t k = 0; k < ic * 9; ++k) scaled[static_cast<size_t>(o * ic * 9 + k)] *= mul[o];
    return pack_winograd_weights_dnnl(scaled.data(), oc, ic, want);
  }
  const WinoLayout layout{d, d.ic / d.ic_block, d.oc / d.oc_block};
  const int64_t alpha = d.alpha, OC = d.oc;
  const float* g = d.alpha == 4 ? &kG2x3[0][0] : &kG4x3[0][0];
  math::WeightsMemory packed = math::weights_memory(want);
  float* out = static_cast<float*>(packed.memory.get_data_handle());
  // One input channel at a time: its 9 taps over the padded output channels (zero beyond oc), then
  // the two 1-D transforms, each a sum over 3 terms from 0 in tap order, as oneDNN's reorder sums.
  float* taps = buffers.floats(0, static_cast<size_t>(9 * OC));           // [tap][o]
  float* half = buffers.floats(1, static_cast<size_t>(3 * alpha * OC));  // [kh][b][o] = sum_kw w g[b][kw]
  for (int64_t ip = 0; ip < d.ic; ++ip) {
    for (int64_t t = 0; t < 9; ++t)
      for (int64_t o = 0; o < OC; ++o) {
        float v = 0.0f;
        if (ip < ic && o < oc) v = w[(o * ic + ip) * 9 + t] * (mul != nullptr ? mul[o] : 1.0f);
        taps[t * OC + o] = v;
      }
    for (int64_t kh = 0; kh < 3; ++kh)
      for (int64_t b = 0; b < alpha; ++b) {
        float* h = half + (kh * alpha + b) * OC;
        for (int64_t o = 0; o < OC; ++o) {
          float acc = 0.0f;
          for (int64_t kw = 0; kw < 3; ++kw) acc += taps[(kh * 3 + kw) * OC + o] * g[b * 3 + kw];
          h[o] = acc;
        }
      }
    // Within a block of oc_block output channels the layout is contiguous (offset(.., o, ..) ends in
    // "+ o % oc_block" in every format): one offset per block, not per value (the offset per value
    // was half of the packing's time).
    const int64_t ocb = d.oc_block;
    for (int64_t a = 0; a < alpha; ++a)
      for (int64_t b = 0; b < alpha; ++b)
        for (int64_t o0 = 0; o0 < OC; o0 += ocb) {
          float* dst = out + layout.offset(a, b, o0, ip);
          for (int64_t o = o0; o < o0 + ocb; ++o) {
            float acc = 0.0f;
            for (int64_t kh = 0; kh < 3; ++kh) acc += g[a * 3 + kh] * half[(kh * alpha + b) * OC + o];
            dst[o - o0] = acc;
          }
        }
  }
  return packed;
}

}  // namespace ephost::cpu::fusion

#endif  // EPHOST_WITH_DNNL
