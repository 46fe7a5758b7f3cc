// ImageDecoder-20 on the CPU plugin through the C++ API: a bad stream (truncated JPEG, PNG with a corrupt
// chunk, a format the plugin does not decode) is an error that names the problem, not a crash, and the
// same session decodes a good image afterwards. The decoded values of every pixel format are checked by
// the generated cases (tests/conformance/generate_opset_tests.py, image_decoder_cases).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ephost/ephost_cxx_api.h"
#include "test_support.h"

namespace {

using ephost_test::ModelBuilder;

// 2x2 RGB PNG (png_bytes in the generator): red, green / blue, (10, 20, 30).
const std::vector<uint8_t> kPng = {
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00,
    0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x02, 0x08, 0x02, 0x00, 0x00, 0x00, 0xfd, 0xd4, 0x9a, 0x73, 0x00,
    0x00, 0x00, 0x13, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xc0, 0x00, 0xc2, 0x0c,
    0xff, 0xb9, 0x44, 0xe4, 0x00, 0x1a, 0x58, 0x03, 0x3a, 0x56, 0x63, 0xa2, 0x3c, 0x00, 0x00, 0x00, 0x00,
    0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82};

// 16x8 baseline JPEG (jpeg_bytes in the generator): two flat 8x8 blocks, grey 100 then grey 200.
std::vector<uint8_t> jpeg() {
  std::vector<uint8_t> b = {0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00,
                            0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0xff, 0xdb, 0x00, 0x43, 0x00};
  b.insert(b.end(), 64, 0x01);  // quantisation table: all ones
  const std::vector<uint8_t> rest = {
      0xff, 0xc0, 0x00, 0x11, 0x08, 0x00, 0x08, 0x00, 0x10, 0x03, 0x01, 0x11, 0x00, 0x02, 0x11, 0x00, 0x03,
      0x11, 0x00, 0xff, 0xc4, 0x00, 0x1f, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
      0x0b, 0xff, 0xc4, 0x00, 0x14, 0x10, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xda, 0x00, 0x0c, 0x03, 0x01, 0x00, 0x02, 0x00, 0x03, 0x00,
      0x00, 0x3f, 0x00, 0x81, 0xf0, 0x01, 0x59, 0x00, 0x00, 0xff, 0xd9};
  b.insert(b.end(), rest.begin(), rest.end());
  return b;
}

Ephost::Env& env() {
  static Ephost::Env e(EPHOST_LOG_ERROR, std::vector<std::string>{});
  return e;
}

std::string decoder_model() {
  ModelBuilder m(20);
  m.input("s", onnx::TensorProto::UINT8, {-1});
  m.node("ImageDecoder", {"s"}, {"y"}, "decode");
  m.output("y", onnx::TensorProto::UINT8, {-1, -1, 3});
  return m.bytes();
}

Ephost::Tensor decode(Ephost::Session& s, std::vector<uint8_t>& stream) {
  auto out = s.run({"s"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_UINT8, {static_cast<int64_t>(stream.size())},
                                                stream.data(), stream.size())},
                   {"y"});
  return std::move(out[0]);
}

// Runs `stream` and returns the error's message ("" when it decoded).
std::string decode_error(Ephost::Session& s, std::vector<uint8_t> stream) {
  try {
    decode(s, stream);
  } catch (const Ephost::Exception& e) {
    EXPECT_NE(e.code(), EPHOST_OK);
    return e.message();
  }
  return "";
}

void expect_good_png(Ephost::Session& s) {
  std::vector<uint8_t> png = kPng;
  Ephost::Tensor y = decode(s, png);
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{2, 2, 3}));
  EXPECT_EQ(y.to_vector<uint8_t>(), (std::vector<uint8_t>{255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30}));
}

TEST(ImageDecoder, DecodesPngAndJpeg) {
  const std::string bytes = decoder_model();
  Ephost::Session s(env(), bytes.data(), bytes.size());
  expect_good_png(s);
  std::vector<uint8_t> j = jpeg();
  Ephost::Tensor y = decode(s, j);
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{8, 16, 3}));
  const std::vector<uint8_t> v = y.to_vector<uint8_t>();
  EXPECT_EQ(v[0], 100);
  EXPECT_EQ(v[(7 * 16 + 15) * 3 + 2], 200);
}

TEST(ImageDecoder, TruncatedJpegIsAnErrorAndTheSessionGoesOn) {
  const std::string bytes = decoder_model();
  Ephost::Session s(env(), bytes.data(), bytes.size());
  std::vector<uint8_t> truncated = jpeg();
  truncated.resize(truncated.size() - 6);  // the entropy-coded data and EOI cut off
  EXPECT_NE(decode_error(s, truncated).find("truncated JPEG"), std::string::npos) << decode_error(s, truncated);
  std::vector<uint8_t> header_only = jpeg();
  header_only.resize(30);  // inside the quantisation table
  EXPECT_NE(decode_error(s, header_only).find("JPEG"), std::string::npos);
  expect_good_png(s);
}

TEST(ImageDecoder, CorruptPngIsAnErrorAndTheSessionGoesOn) {
  const std::string bytes = decoder_model();
  Ephost::Session s(env(), bytes.data(), bytes.size());
  std::vector<uint8_t> corrupt = kPng;
  corrupt[45] ^= 0x5a;  // a byte of the IDAT data: its CRC no longer matches
  EXPECT_NE(decode_error(s, corrupt).find("PNG"), std::string::npos) << decode_error(s, corrupt);
  std::vector<uint8_t> truncated = kPng;
  truncated.resize(50);  // inside IDAT
  EXPECT_NE(decode_error(s, truncated).find("PNG"), std::string::npos) << decode_error(s, truncated);
  expect_good_png(s);
}

TEST(ImageDecoder, OtherFormatsAreRefusedByName) {
  const std::string bytes = decoder_model();
  Ephost::Session s(env(), bytes.data(), bytes.size());
  const std::string gif = decode_error(s, {'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0, 0, 0, 0});
  EXPECT_NE(gif.find("GIF"), std::string::npos) << gif;
  EXPECT_NE(decode_error(s, {1, 2, 3}).find("not an image format"), std::string::npos);
  expect_good_png(s);
}

}  // namespace
