// Complex discrete Fourier transforms of any length, for DFT and STFT: an iterative radix-2 FFT for
// power-of-two lengths and Bluestein's chirp-z algorithm (three power-of-two FFTs) for the others,
// so every length costs O(n log n). Computed in double: the ops' float results then carry no
// accumulated rounding from long sums.
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

namespace ephost::cpu::math {

using Complex = std::complex<double>;

// The twiddles (and, for lengths that are not powers of two, the chirp and its transform) of one
// length, built once and reused by every transform of that length. run() is const and thread-safe.
class FftPlan {
 public:
  explicit FftPlan(int64_t n);
  int64_t size() const { return n_; }
  // x[k] = sum_j x[j] * exp(-+2 pi i j k / n) in place (+ when inverse), unscaled.
  // `scratch` is resized as needed; pass one per thread to avoid reallocating.
  void run(Complex* x, bool inverse, std::vector<Complex>& scratch) const;

 private:
  void radix2(Complex* x, bool inverse) const;  // in place, over the radix-2 length

  int64_t n_ = 0;
  bool pow2_ = true;
  std::vector<Complex> twiddle_;  // exp(-2 pi i k / m), k < m / 2, m = the radix-2 length
  std::vector<int64_t> bitrev_;   // bit-reversal permutation of the radix-2 length
  // Bluestein: chirp_[k] = exp(-pi i k^2 / n) for k < n, and the forward transform (length m) of
  // the conjugate chirp laid out circularly, which the convolution multiplies by.
  int64_t m_ = 0;
  std::vector<Complex> chirp_, chirp_fft_;
};

}  // namespace ephost::cpu::math
