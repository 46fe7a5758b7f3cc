// Packed sub-byte types (int4, uint4, int2, uint2, float4e2m1) through the data-movement operators
// whose ONNX versions take them (Transpose-21/23/25, Pad-21/23/25), with odd element counts (a final
// half-filled byte), and constant folding of such tensors by the host (through the CPU plugin's kernels),
// or with the host's optimisations off run op by op. Expected results are the
// codes moved by hand, packed as ONNX packs them (first element in the low bits, the rest of a final
// byte zero).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "ephost/ephost_cxx_api.h"
#include "ephost/ephost_narrow.h"
#include "test_support.h"

using ephost_test::ModelBuilder;

namespace {

Ephost::Env& cpu_env() {
  static Ephost::Env env(EPHOST_LOG_ERROR, std::vector<std::string>{});
  return env;
}

int bits_of(int32_t type) { return static_cast<int>(EphostElementBits(type)); }

std::vector<uint8_t> pack(int32_t type, const std::vector<uint8_t>& codes) {
  const int bits = bits_of(type), per = 8 / bits;
  std::vector<uint8_t> out(EphostTensorDataSize(type, codes.size()), 0);
  for (size_t i = 0; i < codes.size(); ++i) out[i / per] |= static_cast<uint8_t>(codes[i] << (bits * (i % per)));
  return out;
}

std::vector<uint8_t> random_codes(int32_t type, size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> d(0, (1 << bits_of(type)) - 1);
  std::vector<uint8_t> c(n);
  for (uint8_t& v : c) v = static_cast<uint8_t>(d(gen));
  return c;
}

std::vector<uint8_t> bytes_of(const Ephost::Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(Ephost::api().TensorGetData(t.get()));
  return std::vector<uint8_t>(p, p + EphostTensorDataSize(t.type(), t.size()));
}

// The opset that first lets Transpose and Pad take `type`.
int64_t opset_for(int32_t type) {
  if (type == EPHOST_ELEMENT_INT2 || type == EPHOST_ELEMENT_UINT2) return 25;
  return type == EPHOST_ELEMENT_FLOAT4E2M1 ? 23 : 21;
}

void int64_initializer(ModelBuilder& m, const std::string& name, const std::vector<int64_t>& values) {
  auto* t = m.proto().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
}

const int32_t kPacked[] = {EPHOST_ELEMENT_INT4, EPHOST_ELEMENT_UINT4, EPHOST_ELEMENT_INT2, EPHOST_ELEMENT_UINT2,
                           EPHOST_ELEMENT_FLOAT4E2M1};

}  // namespace

TEST(CpuPackedMovement, TransposeOddShapes) {
  for (int32_t type : kPacked) {
    const int64_t A = 3, B = 5, C = 3;  // 45 elements: the last byte is partly filled for every width
    ModelBuilder m(opset_for(type));
    m.input("x", type, {A, B, C}).output("y", type, {C, A, B});
    auto& t = m.node("Transpose", {"x"}, {"y"}, "transpose");
    ephost_test::attr_ints(t, "perm", {2, 0, 1});
    const std::string model = m.bytes();
    Ephost::Session s(cpu_env(), model.data(), model.size());
    const std::vector<uint8_t> codes = random_codes(type, A * B * C, static_cast<uint32_t>(type));
    std::vector<uint8_t> packed = pack(type, codes);
    auto x = Ephost::Tensor::wrap(static_cast<EphostElementType>(type), {A, B, C}, packed.data(), packed.size());
    auto out = s.run({"x"}, {x}, {"y"});
    std::vector<uint8_t> want(codes.size());
    for (int64_t a = 0; a < A; ++a)
      for (int64_t b = 0; b < B; ++b)
        for (int64_t c = 0; c < C; ++c) want[(c * A + a) * B + b] = codes[(a * B + b) * C + c];
    EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{C, A, B}));
    EXPECT_EQ(bytes_of(out[0]), pack(type, want)) << "type " << type;
  }
}

TEST(CpuPackedMovement, PadConstantAndEdge) {
  for (int32_t type : kPacked) {
    for (const char* mode : {"constant", "edge"}) {
      const int64_t R = 2, C = 3;
      ModelBuilder m(opset_for(type));
      m.input("x", type, {R, C}).output("y", type, {R + 1, C + 2});
      int64_initializer(m, "pads", {1, 0, 0, 2});  // one row before, two columns after
      std::vector<std::string> inputs = {"x", "pads"};
      const uint8_t fill = static_cast<uint8_t>((1 << bits_of(type)) - 1);
      if (std::string(mode) == "constant") {
        auto* v = m.proto().mutable_graph()->add_initializer();
        v->set_name("v");
        v->set_data_type(type);
        v->set_raw_data(std::string(1, static_cast<char>(fill)));
        inputs.push_back("v");
      }
      auto& pad = m.node("Pad", inputs, {"y"}, "pad");
      ephost_test::attr_string(pad, "mode", mode);
      const std::string model = m.bytes();
      Ephost::Session s(cpu_env(), model.data(), model.size());
      const std::vector<uint8_t> codes = random_codes(type, R * C, 3);
      std::vector<uint8_t> packed = pack(type, codes);
      auto out = s.run({"x"}, {Ephost::Tensor::wrap(static_cast<EphostElementType>(type), {R, C}, packed.data(), packed.size())}, {"y"});
      std::vector<uint8_t> want;
      for (int64_t r = -1; r < R; ++r)
        for (int64_t c = 0; c < C + 2; ++c) {
          const bool outside = r < 0 || c >= C;
          if (outside && std::string(mode) == "constant")
            want.push_back(fill);
          else
            want.push_back(codes[std::max<int64_t>(r, 0) * C + std::min<int64_t>(c, C - 1)]);
        }
      EXPECT_EQ(bytes_of(out[0]), pack(type, want)) << "type " << type << " mode " << mode;
    }
  }
}

// int4 initializer [3, 5] -> Transpose -> Reshape [15] -> Unsqueeze -> Cast(float): folded by the host
// (through the plugin's kernels), or (optimisations off) run op by op, with and without pattern fusion:
// the same 15 values each way.
TEST(CpuPackedMovement, ConstantFoldingOfInt4) {
  const std::vector<uint8_t> codes = random_codes(EPHOST_ELEMENT_INT4, 15, 9);
  std::vector<float> want;
  for (int64_t i = 0; i < 15; ++i) {
    const int64_t col = i / 3, row = i % 3;  // transposed [5, 3] flattened
    const int c = codes[row * 5 + col];
    want.push_back(static_cast<float>(c >= 8 ? c - 16 : c));
  }
  ModelBuilder m(21);
  m.output("y", onnx::TensorProto::FLOAT, {1, 15});
  auto* w = m.proto().mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(EPHOST_ELEMENT_INT4);
  w->add_dims(3);
  w->add_dims(5);
  const std::vector<uint8_t> packed = pack(EPHOST_ELEMENT_INT4, codes);
  w->set_raw_data(std::string(packed.begin(), packed.end()));
  int64_initializer(m, "shape", {15});
  int64_initializer(m, "axes", {0});
  auto& t = m.node("Transpose", {"w"}, {"wt"}, "transpose");
  ephost_test::attr_ints(t, "perm", {1, 0});
  m.node("Reshape", {"wt", "shape"}, {"flat"}, "reshape");
  m.node("Unsqueeze", {"flat", "axes"}, {"row"}, "unsqueeze");
  auto& cast = m.node("Cast", {"row"}, {"y"}, "cast");
  ephost_test::attr_int(cast, "to", EPHOST_ELEMENT_FLOAT);
  const std::string model = m.bytes();
  for (int variant = 0; variant < 3; ++variant) {
    Ephost::SessionOptions o;
    if (variant > 0) o.set_optimization_level(EPHOST_OPT_DISABLE_ALL);
    o.append_provider("cpu", {{"fuse_patterns", variant == 2 ? "0" : "1"}});
    Ephost::Session s(cpu_env(), model.data(), model.size(), o);
    auto out = s.run({}, {}, {"y"});
    EXPECT_EQ(out[0].to_vector<float>(), want) << "variant " << variant;
  }
}

// float8e4m3fn and float8e5m2 initializers [2, 3] -> Transpose -> Cast(float): folded by the host, or
// (optimisations off) run op by op, with and without pattern fusion; every code but NaN's, each way the
// same values.
TEST(CpuPackedMovement, ConstantFoldingOfFloat8) {
  for (int32_t type : {EPHOST_ELEMENT_FLOAT8E4M3FN, EPHOST_ELEMENT_FLOAT8E5M2}) {
    std::vector<uint8_t> codes;
    for (int c = 0; c < 256 && codes.size() < 6; c += 37)
      if (!std::isnan(EphostNarrowCodeToDouble(type, static_cast<uint32_t>(c)))) codes.push_back(static_cast<uint8_t>(c));
    ASSERT_EQ(codes.size(), 6u);
    std::vector<float> want;
    for (int64_t i = 0; i < 6; ++i) {
      const int64_t col = i / 2, row = i % 2;  // transposed [3, 2]
      want.push_back(static_cast<float>(EphostNarrowCodeToDouble(type, codes[static_cast<size_t>(row * 3 + col)])));
    }
    ModelBuilder m(19);
    m.output("y", onnx::TensorProto::FLOAT, {3, 2});
    auto* w = m.proto().mutable_graph()->add_initializer();
    w->set_name("w");
    w->set_data_type(type);
    w->add_dims(2);
    w->add_dims(3);
    w->set_raw_data(std::string(codes.begin(), codes.end()));
    ephost_test::attr_ints(m.node("Transpose", {"w"}, {"wt"}, "transpose"), "perm", {1, 0});
    ephost_test::attr_int(m.node("Cast", {"wt"}, {"y"}, "cast"), "to", EPHOST_ELEMENT_FLOAT);
    const std::string model = m.bytes();
    for (int variant = 0; variant < 3; ++variant) {
      Ephost::SessionOptions o;
      if (variant > 0) o.set_optimization_level(EPHOST_OPT_DISABLE_ALL);
      o.append_provider("cpu", {{"fuse_patterns", variant == 2 ? "0" : "1"}});
      Ephost::Session s(cpu_env(), model.data(), model.size(), o);
      auto out = s.run({}, {}, {"y"});
      EXPECT_EQ(out[0].to_vector<float>(), want) << "type " << type << " variant " << variant;
    }
  }
}
