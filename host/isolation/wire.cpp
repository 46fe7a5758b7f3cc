#include "isolation/wire.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "core/error.h"

namespace ephost::isolation {
namespace {

constexpr uint64_t kMaxFrameBytes = uint64_t{1} << 34;  // 16 GiB: a model with large weights, never more
constexpr int kPollSliceMs = 5;

// Reads exactly `n` bytes unless the peer closes, the deadline passes or the caller stops waiting.
ReadResult read_exactly(int fd, char* out, size_t n, std::chrono::steady_clock::time_point deadline,
                        bool (*should_stop)(const void*), const void* stop_arg) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::recv(fd, out + got, n - got, MSG_DONTWAIT);
    if (r > 0) {
      got += static_cast<size_t>(r);
      continue;
    }
    if (r == 0) return ReadResult::kClosed;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return ReadResult::kClosed;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return ReadResult::kTimedOut;
    if (should_stop && should_stop(stop_arg)) return ReadResult::kStopped;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    pollfd p{fd, POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left + 1, should_stop ? kPollSliceMs : 1000)));
  }
  return ReadResult::kFrame;
}

}  // namespace

std::string_view MessageReader::bytes() {
  const uint64_t n = u64();
  if (n > data_.size() - pos_) fail(EPHOST_EP_FAIL, "provider host protocol: a field runs past its frame");
  std::string_view s = data_.substr(pos_, n);
  pos_ += n;
  return s;
}

void MessageReader::take(void* out, size_t n) {
  if (n > data_.size() - pos_) fail(EPHOST_EP_FAIL, "provider host protocol: a frame ends early");
  std::memcpy(out, data_.data() + pos_, n);
  pos_ += n;
}

bool write_frame(int fd, const std::string& payload) {
  const uint64_t size = payload.size();
  std::string frame(reinterpret_cast<const char*>(&size), sizeof size);
  frame += payload;
  size_t sent = 0;
  while (sent < frame.size()) {
    // MSG_NOSIGNAL: a dead peer is an EPIPE answer, never a SIGPIPE that ends the application.
    const ssize_t w = ::send(fd, frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, 100);
      continue;
    }
    if (w <= 0) return false;
    sent += static_cast<size_t>(w);
  }
  return true;
}

ReadResult read_frame_until(int fd, std::chrono::steady_clock::time_point deadline, std::string& payload,
                            bool (*should_stop)(const void*), const void* stop_arg) {
  uint64_t size = 0;
  ReadResult r = read_exactly(fd, reinterpret_cast<char*>(&size), sizeof size, deadline, should_stop, stop_arg);
  if (r != ReadResult::kFrame) return r;
  if (size > kMaxFrameBytes) return ReadResult::kClosed;
  payload.resize(size);
  return read_exactly(fd, payload.data(), size, deadline, should_stop, stop_arg);
}

}  // namespace ephost::isolation
