// The example EP's serialized program (samples/example_ep/program_format.h) and its compatibility
// judge (compatibility.h): round trip, the version and architecture policy, and robustness against
// truncated, bit-flipped and random blobs (no crash, never judged loadable unless intact).
#include <gtest/gtest.h>

#include <random>

#include "compatibility.h"
#include "ephost/sdk/byte_io.hpp"
#include "interpreter/ops.h"
#include "interpreter/runner.h"
#include "program_format.h"

namespace {

using namespace example_ep;

const BuildIdentity kSelf{"1.0.0", "x86_64"};

// x [1,2,5,5] -> depthwise Conv (w, b) -> Relu -> Add(c) -> y
Program sample_program() {
  Program p;
  p.input_names = {"x"};
  p.weights.push_back(Weight{{2, 1, 3, 3}, {1, 0, -1, 2, 0, -2, 1, 0, -1, 0.5f, 0.5f, 0.5f, 0, 1, 0, -0.5f, -0.5f, -0.5f}});
  p.weights.push_back(Weight{{2}, {0.25f, -0.75f}});
  p.weights.push_back(Weight{{2, 1, 1}, {1.5f, -2.0f}});
  Op conv{OpKind::kConv, "conv", {0, 1, 2}, {2, 1, 1, 1, 1, 1, 1, 1, 1}, {}};
  Op relu{OpKind::kRelu, "relu", {4}, {}, {}};
  Op add{OpKind::kAdd, "add", {5, 3}, {}, {}};
  p.ops = {conv, relu, add};
  p.outputs = {6};
  p.output_names = {"y"};
  return p;
}

ContextNodeFacts facts_for(const Program& p) {
  ContextNodeFacts f;
  f.name = "ctx";
  f.num_inputs = p.input_names.size();
  f.num_outputs = p.outputs.size();
  return f;
}

ephost::sdk::ContextJudgement judge_bytes(const std::vector<uint8_t>& bytes, size_t size = SIZE_MAX,
                                          const BuildIdentity& self = kSelf) {
  return judge(bytes.data(), std::min(size, bytes.size()), facts_for(sample_program()), self);
}

bool loadable(const ephost::sdk::ContextJudgement& j) {
  return j.verdict == EPHOST_CONTEXT_OPTIMAL || j.verdict == EPHOST_CONTEXT_PREFER_RECOMPILE;
}

// Rewrites the header's body size and checksum for `bytes`, as if a producer had written this body.
void reseal(std::vector<uint8_t>& bytes, size_t header_size) {
  const size_t body = bytes.size() - header_size;
  const uint64_t sum = ephost::sdk::fnv1a64(bytes.data() + header_size, body);
  for (int i = 0; i < 8; ++i) {
    bytes[header_size - 16 + i] = static_cast<uint8_t>(static_cast<uint64_t>(body) >> (8 * i));
    bytes[header_size - 8 + i] = static_cast<uint8_t>(sum >> (8 * i));
  }
}

// Runs `p` on a ramp input of the sample's shape; a bad program may fail only with an sdk::Error.
// Programs whose intermediate tensors would be huge (a changed pad or stride can ask for gigabytes,
// which is legal) are only shape-checked, not run.
void run_on_sample_input(const Program& p) {
  std::vector<float> x(50);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.1f * static_cast<float>(i) - 2.0f;
  std::vector<ConstTensor> inputs(p.input_names.size(), ConstTensor{x.data(), {1, 2, 5, 5}});
  try {
    std::vector<Shape> shapes(p.num_slots());
    for (size_t i = 0; i < inputs.size(); ++i) shapes[i] = inputs[i].shape;
    for (size_t i = 0; i < p.weights.size(); ++i) shapes[p.first_weight_slot() + i] = p.weights[i].shape;
    for (size_t i = 0; i < p.ops.size(); ++i) {
      std::vector<ConstTensor> args;
      for (uint32_t slot : p.ops[i].inputs) args.push_back(ConstTensor{nullptr, shapes[slot]});
      Shape shape = output_shape(p.ops[i], args);
      if (numel(shape) > (1 << 20)) return;
      shapes[p.first_op_slot() + i] = shape;
    }
  } catch (const ephost::sdk::Error&) {
    return;
  }
  Runner runner(p);
  std::vector<std::vector<float>> outputs(p.outputs.size());
  try {
    runner.run(inputs, [&](size_t i, const Shape& shape) {
      outputs[i].resize(static_cast<size_t>(numel(shape)));
      return outputs[i].data();
    });
  } catch (const ephost::sdk::Error&) {
  }
}

TEST(ExampleEpProgram, RoundTripKeepsEverything) {
  const Program p = sample_program();
  EncodedProgram e = encode(p, kSelf);
  // The pieces handed to the host cover the blob exactly: header and ops, then each weight.
  size_t covered = e.weights_offset;
  for (size_t s : e.weight_sizes) covered += s;
  EXPECT_EQ(covered, e.bytes.size());
  ASSERT_EQ(e.weight_sizes.size(), 3u);
  EXPECT_EQ(e.weight_sizes[0], 18 * sizeof(float));

  Inspection in = inspect(e.bytes.data(), e.bytes.size());
  ASSERT_EQ(in.result, Inspection::Result::kIntact) << in.reason;
  EXPECT_EQ(in.header.format_version, kFormatVersion);
  EXPECT_EQ(in.header.built_by.sdk_version, "1.0.0");
  EXPECT_EQ(in.header.built_by.hardware_architecture, "x86_64");
  Program d = decode(e.bytes.data(), e.bytes.size(), in.header);
  EXPECT_EQ(d.input_names, p.input_names);
  EXPECT_EQ(d.outputs, p.outputs);
  EXPECT_EQ(d.output_names, p.output_names);
  ASSERT_EQ(d.weights.size(), p.weights.size());
  for (size_t i = 0; i < p.weights.size(); ++i) {
    EXPECT_EQ(d.weights[i].shape, p.weights[i].shape);
    EXPECT_EQ(d.weights[i].data, p.weights[i].data);
  }
  ASSERT_EQ(d.ops.size(), p.ops.size());
  for (size_t i = 0; i < p.ops.size(); ++i) {
    EXPECT_EQ(d.ops[i].kind, p.ops[i].kind);
    EXPECT_EQ(d.ops[i].name, p.ops[i].name);
    EXPECT_EQ(d.ops[i].inputs, p.ops[i].inputs);
    EXPECT_EQ(d.ops[i].ints, p.ops[i].ints);
    EXPECT_EQ(d.ops[i].floats, p.ops[i].floats);
  }
}

TEST(ExampleEpProgram, ValidateRefusesMalformedPrograms) {
  Program p = sample_program();
  p.ops[1].inputs = {6};  // reads its own result
  EXPECT_THROW(encode(p, kSelf), ephost::sdk::Error);
  p = sample_program();
  p.ops[0].inputs = {0, 0, 2};  // the filter must be a weight
  EXPECT_THROW(encode(p, kSelf), ephost::sdk::Error);
  p = sample_program();
  p.weights[0].data.pop_back();
  EXPECT_THROW(encode(p, kSelf), ephost::sdk::Error);
  p = sample_program();
  p.ops[2].kind = static_cast<OpKind>(999);
  EXPECT_THROW(encode(p, kSelf), ephost::sdk::Error);
  p = sample_program();
  p.outputs = {1};  // a weight is not an op result
  EXPECT_THROW(encode(p, kSelf), ephost::sdk::Error);
}

TEST(ExampleEpJudge, SameBuildIsOptimal) {
  EncodedProgram e = encode(sample_program(), kSelf);
  auto j = judge_bytes(e.bytes);
  EXPECT_EQ(j.verdict, EPHOST_CONTEXT_OPTIMAL) << j.reason;
  Program loaded;
  j = judge(e.bytes.data(), e.bytes.size(), facts_for(sample_program()), kSelf, &loaded);
  EXPECT_EQ(loaded.ops.size(), 3u);
}

TEST(ExampleEpJudge, OtherMajorSdkVersionIsUnsupported) {
  EncodedProgram e = encode(sample_program(), BuildIdentity{"2.0.0", "x86_64"});
  auto j = judge_bytes(e.bytes);
  EXPECT_EQ(j.verdict, EPHOST_CONTEXT_UNSUPPORTED);
  EXPECT_NE(j.reason.find("ep_sdk_version 2.0.0 != 1.0.0"), std::string::npos) << j.reason;
}

TEST(ExampleEpJudge, OtherMinorSdkVersionPrefersRecompile) {
  EncodedProgram e = encode(sample_program(), BuildIdentity{"1.3.0", "x86_64"});
  auto j = judge_bytes(e.bytes);
  EXPECT_EQ(j.verdict, EPHOST_CONTEXT_PREFER_RECOMPILE);
  EXPECT_NE(j.reason.find("ep_sdk_version 1.3.0 != 1.0.0"), std::string::npos) << j.reason;
  EncodedProgram odd = encode(sample_program(), BuildIdentity{"1.x", "x86_64"});
  EXPECT_EQ(judge_bytes(odd.bytes).verdict, EPHOST_CONTEXT_UNSUPPORTED);
}

TEST(ExampleEpJudge, OtherHardwareArchitectureIsUnsupported) {
  EncodedProgram e = encode(sample_program(), BuildIdentity{"1.0.0", "aarch64"});
  auto j = judge_bytes(e.bytes);
  EXPECT_EQ(j.verdict, EPHOST_CONTEXT_UNSUPPORTED);
  EXPECT_NE(j.reason.find("hardware_architecture aarch64 != x86_64"), std::string::npos) << j.reason;
}

TEST(ExampleEpJudge, NodeAttributesMustDescribeTheBlob) {
  EncodedProgram e = encode(sample_program(), kSelf);
  ContextNodeFacts f = facts_for(sample_program());
  f.has_sdk_version = true;
  f.sdk_version = "1.0.1";
  auto j = judge(e.bytes.data(), e.bytes.size(), f, kSelf);
  EXPECT_EQ(j.verdict, EPHOST_CONTEXT_UNSUPPORTED);
  EXPECT_NE(j.reason.find("ep_sdk_version attribute"), std::string::npos) << j.reason;

  f = facts_for(sample_program());
  f.has_hardware_architecture = true;
  f.hardware_architecture = "sm_90";
  j = judge(e.bytes.data(), e.bytes.size(), f, kSelf);
  EXPECT_EQ(j.verdict, EPHOST_CONTEXT_UNSUPPORTED);
  EXPECT_NE(j.reason.find("hardware_architecture attribute"), std::string::npos) << j.reason;

  f = facts_for(sample_program());
  f.num_inputs = 2;
  j = judge(e.bytes.data(), e.bytes.size(), f, kSelf);
  EXPECT_EQ(j.verdict, EPHOST_CONTEXT_UNSUPPORTED);
  EXPECT_NE(j.reason.find("2 inputs"), std::string::npos) << j.reason;
}

TEST(ExampleEpJudge, ForeignBytesAreNotMine) {
  std::vector<uint8_t> onnx_like = {0x08, 0x07, 0x12, 0x04, 't', 'e', 's', 't', 0, 0, 0, 0};
  EXPECT_EQ(judge_bytes(onnx_like).verdict, EPHOST_CONTEXT_NOT_MINE);
  EXPECT_EQ(judge(nullptr, 0, facts_for(sample_program()), kSelf).verdict, EPHOST_CONTEXT_NOT_MINE);
}

TEST(ExampleEpJudge, OtherFormatVersionIsUnsupported) {
  EncodedProgram e = encode(sample_program(), kSelf);
  e.bytes[8] = static_cast<uint8_t>(kFormatVersion + 1);
  auto j = judge_bytes(e.bytes);
  EXPECT_EQ(j.verdict, EPHOST_CONTEXT_UNSUPPORTED);
  EXPECT_NE(j.reason.find("format_version 2 != 1"), std::string::npos) << j.reason;
}

TEST(ExampleEpJudge, EveryTruncationIsRefused) {
  EncodedProgram e = encode(sample_program(), kSelf);
  for (size_t len = 0; len < e.bytes.size(); ++len) {
    auto j = judge_bytes(e.bytes, len);
    ASSERT_FALSE(loadable(j)) << "truncated to " << len << " bytes";
    if (len >= sizeof(kMagic)) {
      EXPECT_EQ(j.verdict, EPHOST_CONTEXT_UNSUPPORTED) << len;
      EXPECT_NE(j.reason.find("truncated"), std::string::npos) << len << ": " << j.reason;
    }
  }
  std::vector<uint8_t> longer = e.bytes;
  longer.push_back(0);
  EXPECT_EQ(judge_bytes(longer).verdict, EPHOST_CONTEXT_UNSUPPORTED);
}

TEST(ExampleEpJudge, EveryBitFlipIsCaught) {
  EncodedProgram e = encode(sample_program(), kSelf);
  const size_t header_size = inspect(e.bytes.data(), e.bytes.size()).header.size;
  for (size_t bit = 0; bit < e.bytes.size() * 8; ++bit) {
    std::vector<uint8_t> flipped = e.bytes;
    flipped[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    auto j = judge_bytes(flipped);
    // A flip in the SDK version string may still name a compatible version ("1.1.0"): it then loads
    // with a warning. Every other flip is refused.
    ASSERT_NE(j.verdict, EPHOST_CONTEXT_OPTIMAL) << "bit " << bit;
    if (bit / 8 >= header_size) {
      EXPECT_EQ(j.verdict, EPHOST_CONTEXT_UNSUPPORTED) << bit;
      EXPECT_NE(j.reason.find("checksum"), std::string::npos) << bit << ": " << j.reason;
    }
  }
}

TEST(ExampleEpJudge, RandomBytesNeverCrash) {
  std::mt19937 rng(1234);
  EncodedProgram e = encode(sample_program(), kSelf);
  for (int round = 0; round < 2000; ++round) {
    std::vector<uint8_t> bytes(rng() % 400);
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    if (round % 2 == 0 && bytes.size() >= 12) {  // get past the magic and format version
      std::copy(e.bytes.begin(), e.bytes.begin() + 12, bytes.begin());
    }
    auto j = judge_bytes(bytes);
    EXPECT_FALSE(loadable(j)) << "round " << round;
  }
}

// The checksum stops accidents; a producer that writes a wrong program with a right checksum must
// still be refused cleanly (or, when the change is harmless, run without reading out of bounds).
TEST(ExampleEpJudge, ResealedGarbageIsRefusedOrRunsSafely) {
  std::mt19937 rng(99);
  EncodedProgram e = encode(sample_program(), kSelf);
  const size_t header_size = inspect(e.bytes.data(), e.bytes.size()).header.size;
  int accepted = 0;
  for (int round = 0; round < 3000; ++round) {
    std::vector<uint8_t> bytes = e.bytes;
    if (round % 3 == 0) {  // a random body
      bytes.resize(header_size + rng() % 300);
      for (size_t i = header_size; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(rng());
    } else {  // a few bytes of the real body changed
      for (int k = 0, n = 1 + static_cast<int>(rng() % 4); k < n; ++k)
        bytes[header_size + rng() % (bytes.size() - header_size)] = static_cast<uint8_t>(rng());
    }
    reseal(bytes, header_size);
    Program program;
    auto j = judge(bytes.data(), bytes.size(), facts_for(sample_program()), kSelf, &program);
    if (j.verdict == EPHOST_CONTEXT_UNSUPPORTED) {
      EXPECT_FALSE(j.reason.empty());
      continue;
    }
    ASSERT_EQ(j.verdict, EPHOST_CONTEXT_OPTIMAL) << j.reason;
    ++accepted;
    run_on_sample_input(program);
  }
  EXPECT_GT(accepted, 0);  // some changes (weight values, names) are harmless
}

}  // namespace
