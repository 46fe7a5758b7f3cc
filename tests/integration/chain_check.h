// The check every integration test makes of the chain model (test_support.h's chain_model): run it once
// on a ramp and compare y with chain_expected, whichever providers took its nodes.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "ephost/ephost_cxx_api.h"
#include "test_support.h"

namespace ephost_test {

// Runs `session` (made from chain_model(rows, cols)) once and expects the chain's output, element by element.
inline void expect_chain_output(const Ephost::Session& session, int64_t rows, int64_t cols) {
  std::vector<float> x = ramp(static_cast<size_t>(rows * cols));
  const Ephost::Tensor in = Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {rows, cols}, x.data(), x.size());
  auto out = session.run({"x"}, {in}, {"y"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{rows, cols}));
  const std::vector<float> y = out[0].to_vector<float>(), expected = chain_expected(x, cols);
  ASSERT_EQ(y.size(), expected.size());
  for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], expected[i], 1e-5f) << "element " << i;
}

}  // namespace ephost_test
