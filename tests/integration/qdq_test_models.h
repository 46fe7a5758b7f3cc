// What the int8 (QDQ) model tests share (cpu_qdq_fusion_test.cpp, cpu_plan_at_compile_test.cpp,
// tests/threads/int8_teams_test.cpp): typed initializers, quantization parameters and the
// QuantizeLinear -> DequantizeLinear pairs a QDQ quantizer writes, and per-channel weight scales.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

#include "test_support.h"

namespace ephost_test {

// An initializer of element type `type` (onnx::TensorProto) holding `values` as raw bytes.
template <typename T>
void typed_initializer(ModelBuilder& m, const std::string& name, int32_t type, const std::vector<int64_t>& dims,
                       const std::vector<T>& values) {
  auto* t = m.proto().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T)));
}

// One tensor's quantization: scale, zero point, and whether it is int8 (else uint8).
struct Quant {
  float scale;
  int zero_point;
  bool is_signed;
};

// The initializers prefix_s (scale) and prefix_z (zero point, of q's type).
inline void add_quant_params(ModelBuilder& m, const std::string& prefix, const Quant& q) {
  m.initializer(prefix + "_s", {}, {q.scale});
  if (q.is_signed)
    typed_initializer<int8_t>(m, prefix + "_z", onnx::TensorProto::INT8, {}, {static_cast<int8_t>(q.zero_point)});
  else
    typed_initializer<uint8_t>(m, prefix + "_z", onnx::TensorProto::UINT8, {}, {static_cast<uint8_t>(q.zero_point)});
}

// x -> QuantizeLinear -> prefix_q -> DequantizeLinear -> y, with q's parameters.
inline void add_quant_pair(ModelBuilder& m, const std::string& x, const Quant& q, const std::string& prefix,
                           const std::string& y) {
  add_quant_params(m, prefix, q);
  m.node("QuantizeLinear", {x, prefix + "_s", prefix + "_z"}, {prefix + "_q"}, prefix + "_quantize");
  m.node("DequantizeLinear", {prefix + "_q", prefix + "_s", prefix + "_z"}, {y}, prefix + "_dequantize");
}

// Per-channel weight scales around 0.004, differing between channels.
inline std::vector<float> channel_scales(int64_t channels) {
  std::vector<float> s(static_cast<size_t>(channels));
  for (size_t i = 0; i < s.size(); ++i) s[i] = 0.004f * (1.f + 0.1f * static_cast<float>(i % 7));
  return s;
}

}  // namespace ephost_test
