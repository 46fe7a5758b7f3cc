#include "fft.h"

#include <cmath>
#include <utility>

#include "shape.h"

namespace ephost::cpu::math {

namespace {

constexpr double kPi = 3.14159265358979323846;

bool is_pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

int64_t next_pow2(int64_t n) {
  int64_t m = 1;
  while (m < n) m <<= 1;
  return m;
}

}  // namespace

FftPlan::FftPlan(int64_t n) : n_(n) {
  if (n < 1) invalid("FFT length must be positive, found " + std::to_string(n));
  pow2_ = is_pow2(n);
  // Bluestein convolves two length-n sequences circularly without wrap-around: m >= 2n - 1.
  const int64_t len = pow2_ ? n : next_pow2(2 * n - 1);
  m_ = pow2_ ? 0 : len;
  twiddle_.resize(static_cast<size_t>(len / 2));
  for (int64_t k = 0; k < len / 2; ++k) twiddle_[k] = std::polar(1.0, -2.0 * kPi * static_cast<double>(k) / len);
  bitrev_.resize(static_cast<size_t>(len));
  int bits = 0;
  while ((int64_t{1} << bits) < len) ++bits;
  for (int64_t i = 0; i < len; ++i) {
    int64_t r = 0;
    for (int b = 0; b < bits; ++b)
      if (i & (int64_t{1} << b)) r |= int64_t{1} << (bits - 1 - b);
    bitrev_[i] = r;
  }
  if (pow2_) return;
  chirp_.resize(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    // k^2 mod 2n keeps the angle small, so large lengths lose no precision.
    const int64_t k2 = (k * k) % (2 * n);
    chirp_[k] = std::polar(1.0, -kPi * static_cast<double>(k2) / static_cast<double>(n));
  }
  chirp_fft_.assign(static_cast<size_t>(m_), Complex(0, 0));
  chirp_fft_[0] = std::conj(chirp_[0]);
  for (int64_t k = 1; k < n; ++k) chirp_fft_[k] = chirp_fft_[m_ - k] = std::conj(chirp_[k]);
  radix2(chirp_fft_.data(), false);
}

void FftPlan::radix2(Complex* x, bool inverse) const {
  const int64_t len = static_cast<int64_t>(bitrev_.size());
  for (int64_t i = 0; i < len; ++i)
    if (i < bitrev_[i]) std::swap(x[i], x[bitrev_[i]]);
  for (int64_t half = 1; half < len; half <<= 1) {
    const int64_t step = len / (2 * half);  // twiddle stride for this stage
    for (int64_t start = 0; start < len; start += 2 * half)
      for (int64_t k = 0; k < half; ++k) {
        const Complex w = inverse ? std::conj(twiddle_[k * step]) : twiddle_[k * step];
        const Complex a = x[start + k], b = x[start + k + half] * w;
        x[start + k] = a + b;
        x[start + k + half] = a - b;
      }
  }
}

void FftPlan::run(Complex* x, bool inverse, std::vector<Complex>& scratch) const {
  if (pow2_) {
    radix2(x, inverse);
    return;
  }
  // X_k = w_k * sum_j (x_j w_j) conj(w_{k-j}) with w_k = exp(-pi i k^2 / n); the inverse transform
  // is the conjugate of the forward one of the conjugate input.
  scratch.assign(static_cast<size_t>(m_), Complex(0, 0));
  for (int64_t j = 0; j < n_; ++j) scratch[j] = (inverse ? std::conj(x[j]) : x[j]) * chirp_[j];
  radix2(scratch.data(), false);
  for (int64_t k = 0; k < m_; ++k) scratch[k] *= chirp_fft_[k];
  radix2(scratch.data(), true);
  const double inv_m = 1.0 / static_cast<double>(m_);
  for (int64_t k = 0; k < n_; ++k) {
    const Complex v = scratch[k] * inv_m * chirp_[k];
    x[k] = inverse ? std::conj(v) : v;
  }
}

}  // namespace ephost::cpu::math
