// JPEG through libjpeg (Debian's libjpeg62-turbo). libjpeg reports fatal errors through error_exit, which
// must not return: ours longjmps back to the setjmp of the phase that called libjpeg. Each phase function
// (read_header, read_pixels) holds only trivially destructible locals and calls nothing but libjpeg
// between its setjmp and its return, so the jump skips no C++ destructor; allocations happen between the
// phases, and the decompress object is destroyed by a guard in decode_jpeg_rgb.
#include <cstdio>  // jpeglib.h needs FILE and size_t first
#include <csetjmp>
#include <cstring>

#include <jpeglib.h>
#include <jerror.h>

#include "image/image_decoding.h"

namespace ephost::cpu::image {

namespace {

struct JpegErrors {
  jpeg_error_mgr base;  // first member: libjpeg sees a jpeg_error_mgr*
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void stop_decoding(j_common_ptr info) {
  auto* errors = reinterpret_cast<JpegErrors*>(info->err);
  (*info->err->format_message)(info, errors->message);
  std::longjmp(errors->jump, 1);
}

// Warnings (level -1) are ignored like Pillow does, except the end of the data before the end of the
// image: libjpeg would fill the rest with grey, Pillow reports a truncated image, and so do we.
void on_message(j_common_ptr info, int level) {
  if (level < 0 && info->err->msg_code == JWRN_JPEG_EOF) stop_decoding(info);
}

struct Decompress {
  jpeg_decompress_struct info;
  JpegErrors errors;
  bool created = false;
  ~Decompress() {
    if (created) jpeg_destroy_decompress(&info);
  }
};

bool read_header(Decompress* d, const uint8_t* data, size_t size) {
  d->info.err = jpeg_std_error(&d->errors.base);
  d->errors.base.error_exit = stop_decoding;
  d->errors.base.emit_message = on_message;
  if (setjmp(d->errors.jump)) return false;
  jpeg_create_decompress(&d->info);
  d->created = true;
  jpeg_mem_src(&d->info, const_cast<unsigned char*>(data), static_cast<unsigned long>(size));
  jpeg_read_header(&d->info, TRUE);
  d->info.out_color_space = JCS_RGB;  // YCbCr converted, grey replicated (CMYK refused by libjpeg)
  jpeg_start_decompress(&d->info);
  return true;
}

bool read_pixels(Decompress* d, uint8_t* pixels) {
  if (setjmp(d->errors.jump)) return false;
  const size_t stride = static_cast<size_t>(d->info.output_width) * 3;
  while (d->info.output_scanline < d->info.output_height) {
    JSAMPROW row = pixels + static_cast<size_t>(d->info.output_scanline) * stride;
    jpeg_read_scanlines(&d->info, &row, 1);
  }
  jpeg_finish_decompress(&d->info);
  return true;
}

}  // namespace

bool decode_jpeg_rgb(const uint8_t* data, size_t size, RgbImage& out, std::string& error) {
  Decompress d;
  std::memset(&d.info, 0, sizeof d.info);
  std::memset(&d.errors, 0, sizeof d.errors);
  if (!read_header(&d, data, size)) {
    error = std::string("corrupt JPEG: ") + d.errors.message;
    return false;
  }
  const int64_t width = d.info.output_width, height = d.info.output_height;
  if (d.info.output_components != 3) {
    error = "JPEG decoded to " + std::to_string(d.info.output_components) + " components instead of RGB's 3";
    return false;
  }
  if (width * height > kMaxImagePixels) {
    error = "JPEG of " + std::to_string(width) + "x" + std::to_string(height) + " pixels is larger than the " +
            std::to_string(kMaxImagePixels) + " pixels ImageDecoder accepts";
    return false;
  }
  out.pixels.assign(static_cast<size_t>(width * height * 3), 0);
  if (!read_pixels(&d, out.pixels.data())) {
    error = std::string("corrupt or truncated JPEG: ") + d.errors.message;
    return false;
  }
  out.height = height;
  out.width = width;
  return true;
}

}  // namespace ephost::cpu::image
