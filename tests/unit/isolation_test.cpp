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
