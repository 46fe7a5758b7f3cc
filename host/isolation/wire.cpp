#include "isolation/wire.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "core/error.h"

namespace ephost::isolation {
namespace {

constexpr uint64_t kMaxFrameBytes = uint64_t{1} << 34;  // 16 GiB: a model with large weights, never more
constexpr int kPollSliceMs = 5;

// Waits until `fd` is readable (or closed), the deadline passes or the caller stops waiting.
ReadResult wait_readable(int fd, std::chrono::steady_clock::time_point deadline, bool (*should_stop)(const void*),
                         const void* stop_arg) {
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return ReadResult::kTimedOut;
    if (should_stop && should_stop(stop_arg)) return ReadResult::kStopped;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left + 1, should_stop ? kPollSliceMs : 1000)));
    if (ready > 0) return ReadResult::kFrame;
    if (ready < 0 && errno != EINTR) return ReadResult::kClosed;
  }
}

// Reads up to `n` bytes (at least one) unless the peer closes, the deadline passes or the caller stops
// waiting; says how many in `got`. With `wait_first` it waits before the first recv: an answer is rarely
// there already, and a recv that only says EAGAIN is a system call spent on every frame. Without, it
// tries first (the rest of a frame whose length just came).
ReadResult read_some(int fd, char* out, size_t n, std::chrono::steady_clock::time_point deadline,
                     bool (*should_stop)(const void*), const void* stop_arg, size_t& got, bool wait_first) {
  for (bool wait = wait_first;; wait = true) {
    if (wait) {
      const ReadResult w = wait_readable(fd, deadline, should_stop, stop_arg);
      if (w != ReadResult::kFrame) return w;
    }
    const ssize_t r = ::recv(fd, out, n, MSG_DONTWAIT);
    if (r > 0) {
      got = static_cast<size_t>(r);
      return ReadResult::kFrame;
    }
    if (r == 0) return ReadResult::kClosed;
    if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) return ReadResult::kClosed;
  }
}

// Reads exactly `n` bytes (see read_some).
ReadResult read_exact(int fd, char* out, size_t n, std::chrono::steady_clock::time_point deadline,
                      bool (*should_stop)(const void*), const void* stop_arg, bool wait_first) {
  size_t filled = 0;
  while (filled < n) {
    size_t got = 0;
    const ReadResult r = read_some(fd, out + filled, n - filled, deadline, should_stop, stop_arg, got,
                                   wait_first || filled > 0);
    if (r != ReadResult::kFrame) return r;
    filled += got;
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
  // The length and the payload go in one sendmsg, without copying the payload into a frame first.
  iovec parts[2] = {{const_cast<uint64_t*>(&size), sizeof size}, {const_cast<char*>(payload.data()), payload.size()}};
  size_t sent = 0;
  const size_t total = sizeof size + payload.size();
  while (sent < total) {
    iovec left[2];
    msghdr message{};
    if (sent < sizeof size) {
      left[0] = {reinterpret_cast<char*>(parts[0].iov_base) + sent, sizeof size - sent};
      left[1] = parts[1];
      message.msg_iovlen = 2;
    } else {
      left[0] = {const_cast<char*>(payload.data()) + (sent - sizeof size), total - sent};
      message.msg_iovlen = 1;
    }
    message.msg_iov = left;
    // MSG_NOSIGNAL: a dead peer is an EPIPE answer, never a SIGPIPE that ends the application.
    const ssize_t w = ::sendmsg(fd, &message, MSG_NOSIGNAL);
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
  // Exactly one frame is read, never a byte of the next: requests may be sent several at a time without
  // waiting for each reply (a copy in chunks), and their replies come back as many frames.
  uint64_t size = 0;
  ReadResult r = read_exact(fd, reinterpret_cast<char*>(&size), sizeof size, deadline, should_stop, stop_arg, true);
  if (r != ReadResult::kFrame) return r;
  if (size > kMaxFrameBytes) return ReadResult::kClosed;
  payload.resize(size);
  return read_exact(fd, payload.data(), size, deadline, should_stop, stop_arg, false);
}

}  // namespace ephost::isolation
