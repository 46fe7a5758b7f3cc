// Recognises an encoded image's format from its first bytes, so that ImageDecoder can name a format it
// does not decode instead of reporting a generic decoding failure.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ephost::cpu::image {

enum class ImageFormat { Jpeg, Png, Bmp, Gif, Tiff, WebP, Jpeg2000, Pnm, Unknown };

ImageFormat sniff_format(const uint8_t* data, size_t size);
const char* format_name(ImageFormat f);

}  // namespace ephost::cpu::image
