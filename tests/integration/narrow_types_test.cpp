// The element types of opsets 19 to 25 through the application API: a session reports them as its
// inputs' and outputs' types, CreateTensorWithData sizes packed tensors as ONNX packs them, and
// initializers of them load from raw_data, from int32_data and from external data.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "ephost/ephost_cxx_api.h"
#include "ephost/ephost_narrow.h"
#include "test_support.h"

using ephost_test::TempDir;

namespace {

Ephost::Env& cpu_env() {
  static Ephost::Env env(EPHOST_LOG_ERROR, std::vector<std::string>{});
  return env;
}

// Cast(w) to float, where w is an initializer of int4 [2, 3] holding -8, -1, 0, 1, 6, 7, packed: the
// proto is left to `store` (raw_data, int32_data or external data).
template <typename Store>
std::string int4_initializer_model(Store&& store) {
  ephost_test::ModelBuilder m(21);
  m.proto().set_ir_version(8);
  m.output("y", onnx::TensorProto::FLOAT, {2, 3});
  auto* w = m.proto().mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(EPHOST_ELEMENT_INT4);
  w->add_dims(2);
  w->add_dims(3);
  store(*w, std::string{"\xF8\x10\x76", 3});  // (-8, -1), (0, 1), (6, 7): first element low
  auto& cast = m.node("Cast", {"w"}, {"y"}, "cast");
  auto* to = cast.add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(EPHOST_ELEMENT_FLOAT);
  return m.bytes();
}

void expect_int4_values(Ephost::Session& session) {
  auto out = session.run({}, {}, {"y"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{-8, -1, 0, 1, 6, 7}));
}

TEST(NarrowTypes, SessionReportsTheTypesOfItsInputsAndOutputs) {
  ephost_test::ModelBuilder m(21);
  m.proto().set_ir_version(8);
  m.input("q", EPHOST_ELEMENT_INT4, {5}).output("f8", EPHOST_ELEMENT_FLOAT8E5M2, {5});
  auto& cast = m.node("Cast", {"q"}, {"f8"}, "cast");
  auto* to = cast.add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(EPHOST_ELEMENT_FLOAT8E5M2);
  const std::string bytes = m.bytes();
  Ephost::Session session(cpu_env(), bytes.data(), bytes.size());
  EXPECT_EQ(session.input_tensor_type(0).elem_type, EPHOST_ELEMENT_INT4);
  EXPECT_EQ(session.output_tensor_type(0).elem_type, EPHOST_ELEMENT_FLOAT8E5M2);

  // Five int4 values take three bytes; four or four hundred are refused.
  uint8_t packed[3] = {0x21, 0x8F, 0x07};  // 1, 2, -1, -8, 7
  EXPECT_THROW(Ephost::Tensor::wrap(EPHOST_ELEMENT_INT4, {5}, packed, 2), Ephost::Exception);
  auto q = Ephost::Tensor::wrap(EPHOST_ELEMENT_INT4, {5}, packed, 3);
  EXPECT_EQ(q.type(), EPHOST_ELEMENT_INT4);
  EXPECT_EQ(q.size(), 5u);
  auto out = session.run({"q"}, {q}, {"f8"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type(), EPHOST_ELEMENT_FLOAT8E5M2);
  const auto* codes = out[0].data<uint8_t>();
  const double expected[] = {1, 2, -1, -8, 7};  // every int4 value is a float8e5m2 value
  for (int i = 0; i < 5; ++i) EXPECT_EQ(EphostNarrowCodeToDouble(EPHOST_ELEMENT_FLOAT8E5M2, codes[i]), expected[i]) << i;
  EXPECT_EQ(Ephost::api().GetElementSize(EPHOST_ELEMENT_FLOAT8E5M2), 1u);
  EXPECT_EQ(Ephost::api().GetElementSize(EPHOST_ELEMENT_INT4), 0u);  // packed: EphostTensorDataSize
}

TEST(NarrowTypes, InitializerInRawData) {
  const std::string bytes = int4_initializer_model([](onnx::TensorProto& w, const std::string& packed) {
    w.set_raw_data(packed);
  });
  Ephost::Session session(cpu_env(), bytes.data(), bytes.size());
  expect_int4_values(session);
}

TEST(NarrowTypes, InitializerInInt32DataHoldsOnePackedBytePerEntry) {
  const std::string bytes = int4_initializer_model([](onnx::TensorProto& w, const std::string& packed) {
    for (char c : packed) w.add_int32_data(static_cast<uint8_t>(c));
  });
  Ephost::Session session(cpu_env(), bytes.data(), bytes.size());
  expect_int4_values(session);

  const std::string short_by_one = int4_initializer_model([](onnx::TensorProto& w, const std::string& packed) {
    for (char c : packed.substr(1)) w.add_int32_data(static_cast<uint8_t>(c));
  });
  EXPECT_THROW(Ephost::Session(cpu_env(), short_by_one.data(), short_by_one.size()), Ephost::Exception);
}

TEST(NarrowTypes, InitializerInExternalData) {
  TempDir dir;
  {
    std::ofstream data(dir.file("w.bin"), std::ios::binary);
    data << "pad" << std::string{"\xF8\x10\x76", 3};
  }
  const std::string bytes = int4_initializer_model([](onnx::TensorProto& w, const std::string&) {
    w.set_data_location(onnx::TensorProto::EXTERNAL);
    for (auto [k, v] : {std::pair<const char*, const char*>{"location", "w.bin"}, {"offset", "3"}, {"length", "3"}}) {
      auto* e = w.add_external_data();
      e->set_key(k);
      e->set_value(v);
    }
  });
  {
    std::ofstream model(dir.file("model.onnx"), std::ios::binary);
    model << bytes;
  }
  Ephost::Session session(cpu_env(), dir.file("model.onnx"));
  expect_int4_values(session);
}

}  // namespace
