// The isolation layer's pieces, tested directly: the options (session, provider, environment), the wire
// format's frames over a socketpair (a dead peer is an answer, never SIGPIPE; a silent one a timeout),
// and the shared arena seen by two mappings (sealed against shrinking, never mapped past its end).
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "core/error.h"
#include "isolation/isolation_options.h"
#include "isolation/shared_arena.h"
#include "isolation/shared_region.h"
#include "isolation/shared_region_pool.h"
#include "isolation/wire.h"
#include "saved_env.h"

namespace ephost {
namespace {

using Options = std::vector<std::pair<std::string, std::string>>;

TEST(IsolationOptions, ProviderEntriesWinAndAreTakenOutOfThePluginsOptions) {
  SavedEnv saved(kProviderIsolationEnv);
  unsetenv(kProviderIsolationEnv);
  Options options = {{"isolation", "process"}, {"claim", "all"}, {"isolation_timeout_ms", "250"}};
  const IsolationSettings s = take_isolation_settings(options, "in_process", "beta");
  EXPECT_EQ(s.mode, IsolationMode::kProcess);
  EXPECT_EQ(s.call_timeout, std::chrono::milliseconds(250));
  EXPECT_EQ(options, (Options{{"claim", "all"}}));
}

TEST(IsolationOptions, SessionModeThenEnvironmentThenAuto) {
  SavedEnv saved(kProviderIsolationEnv);
  unsetenv(kProviderIsolationEnv);
  Options none;
  EXPECT_EQ(take_isolation_settings(none, "", "x").mode, IsolationMode::kAuto);
  setenv(kProviderIsolationEnv, "process", 1);
  EXPECT_EQ(take_isolation_settings(none, "", "x").mode, IsolationMode::kProcess);
  EXPECT_EQ(take_isolation_settings(none, "in_process", "x").mode, IsolationMode::kInProcess);
}

TEST(IsolationOptions, BadValuesNameTheirSourceAndTheChoices) {
  SavedEnv saved(kProviderIsolationEnv);
  setenv(kProviderIsolationEnv, "always", 1);
  Options none;
  try {
    take_isolation_settings(none, "", "x");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), EPHOST_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("EPHOST_PROVIDER_ISOLATION"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("in_process"), std::string::npos) << e.what();
  }
  unsetenv(kProviderIsolationEnv);
  Options bad_timeout = {{"isolation_compile_timeout_ms", "soon"}};
  EXPECT_THROW(take_isolation_settings(bad_timeout, "", "x"), Error);
  Options shared_outputs = {{"isolation_shared_outputs", "0"}, {"kept", "1"}};
  EXPECT_TRUE(take_isolation_settings(none, "", "x").shared_outputs) << "on by default";
  EXPECT_FALSE(take_isolation_settings(shared_outputs, "", "x").shared_outputs);
  EXPECT_EQ(shared_outputs, (Options{{"kept", "1"}})) << "taken out of the plugin's options";
  Options bad_switch = {{"isolation_shared_outputs", "yes"}};
  EXPECT_THROW(take_isolation_settings(bad_switch, "", "x"), Error);
}

TEST(IsolationWire, FramesCrossAndADeadPeerIsAnAnswer) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  isolation::MessageWriter w;
  w.u32(7).i64(-3).bytes("hello");
  ASSERT_TRUE(isolation::write_frame(fds[0], w.data()));
  std::string payload;
  const auto soon = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  ASSERT_EQ(isolation::read_frame_until(fds[1], soon, payload, nullptr, nullptr), isolation::ReadResult::kFrame);
  isolation::MessageReader r(payload);
  EXPECT_EQ(r.u32(), 7u);
  EXPECT_EQ(r.i64(), -3);
  EXPECT_EQ(r.str(), "hello");
  EXPECT_THROW(r.u32(), Error);  // past the end of the frame

  // Nothing comes: a timeout, not a hang.
  const auto brief = std::chrono::steady_clock::now() + std::chrono::milliseconds(30);
  EXPECT_EQ(isolation::read_frame_until(fds[1], brief, payload, nullptr, nullptr), isolation::ReadResult::kTimedOut);
  // The peer is gone: reads see it closed, writes fail without SIGPIPE.
  close(fds[1]);
  EXPECT_FALSE(isolation::write_frame(fds[0], w.data()));
  close(fds[0]);
}

// Requests sent one after the other without waiting for each reply (a copy in chunks) arrive together:
// each read takes exactly one frame, never a byte of the next.
TEST(IsolationWire, FramesSentBackToBackAreReadOneByOne) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  const std::vector<std::string> sent = {"a", std::string(10000, 'b'), "", "dd"};
  for (const std::string& s : sent) {
    isolation::MessageWriter w;
    w.bytes(s);
    ASSERT_TRUE(isolation::write_frame(fds[0], w.data()));
  }
  const auto soon = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (const std::string& s : sent) {
    std::string payload;
    ASSERT_EQ(isolation::read_frame_until(fds[1], soon, payload, nullptr, nullptr), isolation::ReadResult::kFrame);
    isolation::MessageReader r(payload);
    EXPECT_EQ(r.str(), s);
  }
  close(fds[0]);
  close(fds[1]);
}

// A shared region's memfd goes with a frame (SCM_RIGHTS) to a reader that asks for descriptors; a reader
// that does not (the host reading a provider host's replies) never gets one.
TEST(IsolationWire, DescriptorPassedWithAFrameArrivesWithIt) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  auto region = isolation::SharedRegion::create(100);
  std::strcpy(region->base(), "passed");
  const auto soon = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  ASSERT_TRUE(isolation::write_frame(fds[0], "first", region->fd()));
  ASSERT_TRUE(isolation::write_frame(fds[0], "second"));
  ASSERT_TRUE(isolation::write_frame(fds[0], "third", region->fd()));
  std::string payload;
  int received = -1;
  ASSERT_EQ(isolation::read_frame_until(fds[1], soon, payload, nullptr, nullptr, &received), isolation::ReadResult::kFrame);
  EXPECT_EQ(payload, "first");
  ASSERT_GE(received, 0);
  isolation::ServedRegions served;
  served.attach(7, received, region->size());
  EXPECT_STREQ(served.span(7, 0, 7), "passed");
  received = -1;
  ASSERT_EQ(isolation::read_frame_until(fds[1], soon, payload, nullptr, nullptr, &received), isolation::ReadResult::kFrame);
  EXPECT_EQ(payload, "second");
  EXPECT_EQ(received, -1) << "no descriptor came with the second frame";
  ASSERT_EQ(isolation::read_frame_until(fds[1], soon, payload, nullptr, nullptr), isolation::ReadResult::kFrame);
  EXPECT_EQ(payload, "third") << "a reader that takes no descriptor reads the frame, the descriptor dropped";
  close(fds[0]);
  close(fds[1]);
}

// Shared tensor memory: found by any pointer into it, sealed at its size, spans checked on both sides.
TEST(IsolationSharedRegion, FoundByPointersIntoItAndSealedAtItsSize) {
  auto region = isolation::SharedRegion::create(5000);
  EXPECT_EQ(region->size(), 8192u) << "whole pages";
  auto found = isolation::find_shared_region(region->base() + 100, 400);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->region.get(), region.get());
  EXPECT_EQ(found->offset, 100u);
  EXPECT_FALSE(isolation::find_shared_region(&found, sizeof found).has_value()) << "ordinary memory";
  EXPECT_FALSE(isolation::find_shared_region(region->base(), 0).has_value());
  try {
    isolation::find_shared_region(region->base() + 8000, 400);
    FAIL() << "a span past the region's end was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), EPHOST_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("runs past its end"), std::string::npos) << e.what();
  }
  // Neither side can shrink or grow it: a mapping here never reaches past its end.
  EXPECT_NE(ftruncate(region->fd(), 4096), 0);
  EXPECT_NE(ftruncate(region->fd(), 1 << 20), 0);
  const uint64_t id = region->id();
  EXPECT_TRUE(isolation::SharedRegion::alive(id));
  isolation::ServedRegions served;
  served.attach(id, dup(region->fd()), region->size());
  EXPECT_THROW(served.span(id, 8000, 400), Error);
  EXPECT_THROW(served.span(id + 1, 0, 1), Error);
  EXPECT_THROW(served.attach(id + 1, dup(region->fd()), region->size() * 2), Error) << "larger than the memfd";
  char* base = region->base();
  found.reset();  // it holds the region too
  region.reset();
  EXPECT_FALSE(isolation::SharedRegion::alive(id));
  EXPECT_FALSE(isolation::find_shared_region(base, 1).has_value()) << "released";
}

// A region is handed out again only once nothing but the pool holds it, of a fitting size, and the pool
// never holds more than its maximum.
TEST(IsolationSharedRegionPool, ReusesOnlyRegionsNobodyHoldsAndStopsAtItsMaximum) {
  isolation::SharedRegionPool pool(2);
  std::shared_ptr<isolation::SharedRegion> a = pool.take(8192);
  ASSERT_TRUE(a);
  EXPECT_GE(a->size(), 8192u);
  std::shared_ptr<isolation::SharedRegion> b = pool.take(8192);
  ASSERT_TRUE(b);
  EXPECT_NE(a, b) << "a is still held";
  EXPECT_FALSE(pool.take(8192)) << "both held, and the pool is at its maximum";
  const uint64_t a_id = a->id();
  a.reset();
  std::shared_ptr<isolation::SharedRegion> again = pool.take(8000);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->id(), a_id) << "released: handed out again";
  again.reset();
  std::shared_ptr<isolation::SharedRegion> larger = pool.take(3 * 8192);
  ASSERT_TRUE(larger);
  EXPECT_NE(larger->id(), a_id) << "too small: let go, and a new one made";
  EXPECT_FALSE(isolation::SharedRegion::alive(a_id));
  EXPECT_GE(larger->size(), 3 * 8192u);
  larger.reset();
  std::shared_ptr<isolation::SharedRegion> smaller = pool.take(4096);
  ASSERT_TRUE(smaller);
  EXPECT_LT(smaller->size(), 3 * 8192u) << "far too large for the value: let go too";
}

TEST(IsolationArena, TwoMappingsSeeOneMemoryAndFollowItsGrowth) {
  isolation::SharedArena host = isolation::SharedArena::create(100);
  isolation::SharedArena other = isolation::SharedArena::adopt(dup(host.fd()), host.size());
  std::strcpy(host.base(), "shared");
  EXPECT_STREQ(other.base(), "shared");
  host.reserve(host.size() * 3);
  other.follow(host.size());
  EXPECT_EQ(other.size(), host.size());
  host.base()[host.size() - 1] = 'z';
  EXPECT_EQ(other.base()[other.size() - 1], 'z');
  EXPECT_EQ(isolation::SharedArena::align(1), 64u);
}

// A hostile or confused provider host can neither shrink the memory under the host's mapping nor make
// the host map past its end: either would fault (SIGBUS) in the host when it reads the bytes.
TEST(IsolationArena, TheOtherSideCanNeitherShrinkItNorSayItIsLarger) {
  isolation::SharedArena host = isolation::SharedArena::create(100);
  isolation::SharedArena other = isolation::SharedArena::adopt(dup(host.fd()), host.size());
  EXPECT_NE(::ftruncate(other.fd(), 4096), 0) << "the memfd is sealed against shrinking";
  other.reserve(host.size() * 2);  // growing stays allowed
  try {
    host.follow(other.size() * 4);
    FAIL() << "mapped past the memfd's end";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), EPHOST_EP_FAIL);
    EXPECT_NE(std::string(e.what()).find("hostile provider host"), std::string::npos) << e.what();
  }
  host.follow(other.size());
  host.base()[host.size() - 1] = 'q';
  EXPECT_EQ(other.base()[other.size() - 1], 'q');
}

}  // namespace
}  // namespace ephost
