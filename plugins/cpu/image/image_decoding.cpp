// Dispatches an encoded image to its codec by signature; formats without a codec are named in the error.
#include "image/image_decoding.h"

#include "image/format_sniffing.h"

namespace ephost::cpu::image {

bool decode_rgb(const uint8_t* data, size_t size, RgbImage& out, std::string& error) {
  const ImageFormat format = sniff_format(data, size);
  switch (format) {
    case ImageFormat::Jpeg: return decode_jpeg_rgb(data, size, out, error);
    case ImageFormat::Png: return decode_png_rgb(data, size, out, error);
    case ImageFormat::Unknown:
      error = "the " + std::to_string(size) +
              " bytes are not an image format that can be recognised (the CPU plugin decodes JPEG and PNG)";
      return false;
    default:
      error = std::string("the image is ") + format_name(format) +
              ", which the CPU plugin does not decode (it decodes JPEG and PNG): convert the image to PNG or JPEG";
      return false;
  }
}

}  // namespace ephost::cpu::image
