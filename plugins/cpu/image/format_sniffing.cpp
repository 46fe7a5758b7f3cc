// Signatures from each format's specification (JFIF/JPEG SOI marker, PNG signature, BMP "BM", GIF87a/89a,
// TIFF byte-order marks, RIFF WEBP, JPEG 2000 signature box and codestream SOC/SIZ, netpbm P1-P7).
#include "image/format_sniffing.h"

#include <cstring>

namespace ephost::cpu::image {

namespace {
bool starts_with(const uint8_t* data, size_t size, const void* sig, size_t n) {
  return size >= n && std::memcmp(data, sig, n) == 0;
}
}  // namespace

ImageFormat sniff_format(const uint8_t* d, size_t n) {
  if (starts_with(d, n, "\xFF\xD8\xFF", 3)) return ImageFormat::Jpeg;
  if (starts_with(d, n, "\x89PNG\r\n\x1A\n", 8)) return ImageFormat::Png;
  if (starts_with(d, n, "GIF87a", 6) || starts_with(d, n, "GIF89a", 6)) return ImageFormat::Gif;
  if (starts_with(d, n, "II*\0", 4) || starts_with(d, n, "MM\0*", 4)) return ImageFormat::Tiff;
  if (n >= 12 && starts_with(d, n, "RIFF", 4) && std::memcmp(d + 8, "WEBP", 4) == 0) return ImageFormat::WebP;
  if (starts_with(d, n, "\0\0\0\x0CjP  \r\n\x87\n", 12) || starts_with(d, n, "\xFF\x4F\xFF\x51", 4))
    return ImageFormat::Jpeg2000;
  if (starts_with(d, n, "BM", 2)) return ImageFormat::Bmp;
  if (n >= 2 && d[0] == 'P' && d[1] >= '1' && d[1] <= '7') return ImageFormat::Pnm;
  return ImageFormat::Unknown;
}

const char* format_name(ImageFormat f) {
  switch (f) {
    case ImageFormat::Jpeg: return "JPEG";
    case ImageFormat::Png: return "PNG";
    case ImageFormat::Bmp: return "BMP";
    case ImageFormat::Gif: return "GIF";
    case ImageFormat::Tiff: return "TIFF";
    case ImageFormat::WebP: return "WebP";
    case ImageFormat::Jpeg2000: return "JPEG 2000";
    case ImageFormat::Pnm: return "PNM (netpbm)";
    case ImageFormat::Unknown: break;
  }
  return "unknown";
}

}  // namespace ephost::cpu::image
