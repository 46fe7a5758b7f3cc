// The EPContext binary container (host/epcontext/context_binary.h): graphs round-trip, identical pieces
// are stored once, and every truncation and every single-bit flip of a container is refused with
// INVALID_GRAPH (never a crash, never wrong bytes).
#include <gtest/gtest.h>

#include <random>

#include "core/error.h"
#include "epcontext/context_binary.h"

namespace {

using ephost::Bytes;
using ephost::ContextBinary;
using ephost::ContextBinaryBuilder;

Bytes bytes_of(size_t n, uint8_t seed) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(seed + i * 31);
  return b;
}

Bytes concat(const std::vector<Bytes>& pieces) {
  Bytes out;
  for (const auto& p : pieces) out.insert(out.end(), p.begin(), p.end());
  return out;
}

std::shared_ptr<const Bytes> share(Bytes b) { return std::make_shared<const Bytes>(std::move(b)); }

TEST(ContextBinary, GraphsRoundTripAndSharedPiecesAreStoredOnce) {
  const Bytes header1 = bytes_of(40, 1), header2 = bytes_of(56, 2), weight = bytes_of(4000, 3), other = bytes_of(900, 4);
  ContextBinaryBuilder b;
  b.add_graph("g1", {header1, weight});
  b.add_graph("g2", {header2, weight, other});
  EXPECT_EQ(b.handed_piece_bytes(), 40u + 4000u + 56u + 4000u + 900u);
  EXPECT_EQ(b.stored_piece_bytes(), 40u + 56u + 4000u + 900u);
  ContextBinary parsed = ContextBinary::parse(share(b.serialize()), "test container");
  EXPECT_FALSE(parsed.raw());
  EXPECT_EQ(parsed.graph_names(), (std::vector<std::string>{"g1", "g2"}));
  EXPECT_EQ(parsed.assemble("g1"), concat({header1, weight}));
  EXPECT_EQ(parsed.assemble("g2"), concat({header2, weight, other}));
  EXPECT_EQ(parsed.resolve("g2"), "g2");
  EXPECT_EQ(parsed.resolve("absent"), "");  // two graphs: a name is needed
  EXPECT_THROW(parsed.assemble("absent"), ephost::Error);
}

TEST(ContextBinary, NamesMustMatchEvenForOneGraphAndRawPayloadsPassThrough) {
  ContextBinaryBuilder b;
  b.add_graph("only", {bytes_of(10, 5)});
  ContextBinary one = ContextBinary::parse(share(b.serialize()), "one");
  EXPECT_EQ(one.resolve("only"), "only");
  EXPECT_EQ(one.resolve("renamed"), "") << "another model's single-graph binary is never taken for this one";
  Bytes raw = bytes_of(100, 6);
  ContextBinary r = ContextBinary::parse(share(raw), "raw");
  EXPECT_TRUE(r.raw());
  EXPECT_EQ(r.assemble(r.resolve("x")), raw);
}

TEST(ContextBinary, DuplicateGraphNamesAreRefused) {
  ContextBinaryBuilder b;
  b.add_graph("g", {bytes_of(3, 1)});
  EXPECT_THROW(b.add_graph("g", {bytes_of(3, 2)}), ephost::Error);
}

TEST(ContextBinary, EveryTruncationAndEveryBitFlipIsRefused) {
  ContextBinaryBuilder b;
  b.add_graph("g1", {bytes_of(70, 1), bytes_of(300, 2)});
  b.add_graph("g2", {bytes_of(70, 1), bytes_of(33, 3)});
  const Bytes good = b.serialize();
  for (size_t n = 0; n < good.size(); ++n) {
    Bytes cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n));
    try {
      ContextBinary c = ContextBinary::parse(share(cut), "cut");
      // Shorter than the magic: a raw payload, which the plugin then judges. Otherwise refused.
      EXPECT_TRUE(c.raw()) << n;
      EXPECT_LT(n, 8u);
    } catch (const ephost::Error& e) {
      EXPECT_EQ(e.code(), EPHOST_INVALID_GRAPH);
    }
  }
  size_t refused = 0, harmless = 0;
  for (size_t byte = 0; byte < good.size(); ++byte)
    for (int bit = 0; bit < 8; ++bit) {
      Bytes flipped = good;
      flipped[byte] ^= static_cast<uint8_t>(1u << bit);
      try {
        ContextBinary c = ContextBinary::parse(share(flipped), "flipped");
        // Only padding, reserved fields or the magic (then raw) may change without notice, and then
        // what a graph assembles to must be unchanged (or the whole thing is raw).
        if (!c.raw()) {
          EXPECT_EQ(c.assemble("g1"), ContextBinary::parse(share(good), "good").assemble("g1")) << byte;
          EXPECT_EQ(c.assemble("g2"), ContextBinary::parse(share(good), "good").assemble("g2")) << byte;
        }
        ++harmless;
      } catch (const ephost::Error& e) {
        EXPECT_EQ(e.code(), EPHOST_INVALID_GRAPH);
        ++refused;
      }
    }
  EXPECT_GT(refused, harmless);
}

TEST(ContextBinary, RandomBytesNeverCrash) {
  std::mt19937 gen(7);
  ContextBinaryBuilder b;
  b.add_graph("g", {bytes_of(50, 1)});
  const Bytes good = b.serialize();
  for (int round = 0; round < 2000; ++round) {
    Bytes mutated = good;
    const int edits = 1 + static_cast<int>(gen() % 8);
    for (int e = 0; e < edits; ++e) mutated[gen() % mutated.size()] = static_cast<uint8_t>(gen());
    try {
      ContextBinary c = ContextBinary::parse(share(mutated), "mutated");
      for (const auto& name : c.graph_names()) c.assemble(name);
    } catch (const ephost::Error&) {
    }
  }
}

}  // namespace
