// PNG through libpng's simplified API (png_image), which reports errors through image.message instead of
// jumping (it keeps its setjmp inside libpng's own C frames). Every PNG colour type and bit depth is
// converted by libpng to 8-bit RGBA (palette expanded, grey replicated, 16-bit reduced; with
// PNG_IMAGE_FLAG_16BIT_sRGB, 16-bit samples are taken as sRGB-encoded like 8-bit ones, as Pillow does,
// rather than as linear light); alpha is then dropped without compositing, as Pillow's RGBA->RGB does.
#include <png.h>

#include <cstring>

#include "image/image_decoding.h"

namespace ephost::cpu::image {

namespace {
// Frees libpng's state on every path (png_image_free is a no-op once finish_read has freed it).
struct PngImageGuard {
  png_image& image;
  ~PngImageGuard() { png_image_free(&image); }
};
}  // namespace

bool decode_png_rgb(const uint8_t* data, size_t size, RgbImage& out, std::string& error) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  PngImageGuard guard{image};
  if (!png_image_begin_read_from_memory(&image, data, size)) {
    error = std::string("corrupt PNG: ") + image.message;
    return false;
  }
  const int64_t width = image.width, height = image.height;
  if (width * height > kMaxImagePixels) {
    error = "PNG of " + std::to_string(width) + "x" + std::to_string(height) + " pixels is larger than the " +
            std::to_string(kMaxImagePixels) + " pixels ImageDecoder accepts";
    return false;
  }
  image.format = PNG_FORMAT_RGBA;
  image.flags |= PNG_IMAGE_FLAG_16BIT_sRGB;
  std::vector<uint8_t> rgba(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, rgba.data(), 0, nullptr)) {
    error = std::string("corrupt or truncated PNG: ") + image.message;
    return false;
  }
  out.height = height;
  out.width = width;
  out.pixels.resize(static_cast<size_t>(width * height * 3));
  for (int64_t i = 0; i < width * height; ++i) std::memcpy(&out.pixels[i * 3], &rgba[i * 4], 3);
  return true;
}

}  // namespace ephost::cpu::image
