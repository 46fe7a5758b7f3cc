// Decoding of encoded images (JPEG through libjpeg, PNG through libpng) into 8-bit pixels, for the
// ImageDecoder operator. Pure functions over byte buffers: no plugin or session state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ephost::cpu::image {

// Decoded pixels, row-major [height, width, 3] in RGB order (alpha dropped, grey replicated).
struct RgbImage {
  int64_t height = 0;
  int64_t width = 0;
  std::vector<uint8_t> pixels;
};

// Decodes a JPEG or PNG image. On failure returns false and sets `error` to a message that names the
// problem (an unsupported format by name, a corrupt or truncated stream with the library's reason).
// Never aborts and never lets libjpeg or libpng jump across C++ frames.
bool decode_rgb(const uint8_t* data, size_t size, RgbImage& out, std::string& error);

// The two codecs behind decode_rgb (jpeg_decoding.cpp, png_decoding.cpp), same contract.
bool decode_jpeg_rgb(const uint8_t* data, size_t size, RgbImage& out, std::string& error);
bool decode_png_rgb(const uint8_t* data, size_t size, RgbImage& out, std::string& error);

// The largest image decoded (pixels), so that a header claiming a huge size gets an error, not an
// allocation of gigabytes.
constexpr int64_t kMaxImagePixels = int64_t{1} << 28;

// PIL's 'L' conversion (ITU-R 601-2 luma, Pillow's integer form: (R*19595 + G*38470 + B*7471 + 0x8000) >> 16),
// which ONNX's reference ImageDecoder uses for pixel_format Grayscale.
inline uint8_t luma_601(uint8_t r, uint8_t g, uint8_t b) {
  return static_cast<uint8_t>((r * 19595u + g * 38470u + b * 7471u + 0x8000u) >> 16);
}

}  // namespace ephost::cpu::image
