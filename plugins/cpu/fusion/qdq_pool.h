// The quantized MaxPool pattern (qdq_pool.cpp), shared with the int8 convolution chains
// (qdq_conv.cpp) that end with one and pool their NHWC bytes.
#pragma once

#include <array>
#include <cstdint>

#include "graph_match.h"
#include "math/pool.h"
#include "qdq_common.h"

namespace ephost::cpu::fusion {

struct QdqMaxPoolMatch {
  sdk::Node dq, pool, q;
  ScalarQuant x, y;
  math::PoolParams params;
};

// DequantizeLinear `anchor` → MaxPool → QuantizeLinear, each read by the next alone, with windows
// that always hold an input element.
bool match_qdq_max_pool(const sdk::Node& anchor, const Available& ok, QdqMaxPoolMatch* m);

// Y's byte by X's byte: Q(DQ(b)) (the maximum commutes with both). Returns whether it is the identity.
bool max_pool_byte_table(const ScalarQuant& x, const ScalarQuant& y, std::array<uint8_t, 256>* table);

}  // namespace ephost::cpu::fusion
