// Makes "compute may be called from several threads at once" observable. With the provider option
// `rendezvous=<n>`, each compute of the provider waits until <n> of its computes have been in flight at
// the same time (once that happened, nobody waits any more). A host that serialized the computes would
// leave the first one waiting: after the timeout it fails, naming the rule, instead of a test passing
// because the threads happened never to meet.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>

#include "ephost/sdk/plugin.hpp"

namespace ephost_test {

class Rendezvous {
 public:
  explicit Rendezvous(size_t count) : count_(count) {}

  // One compute inside: constructed when it starts, destroyed when it returns.
  class Visit {
   public:
    explicit Visit(Rendezvous* r) : r_(r) {
      if (r_) r_->arrive();
    }
    ~Visit() {
      if (r_) r_->leave();
    }
    Visit(const Visit&) = delete;
    Visit& operator=(const Visit&) = delete;

   private:
    Rendezvous* r_;
  };

 private:
  void arrive() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (++inside_ >= count_) met_ = true;
    met_changed_.notify_all();
    if (met_changed_.wait_for(lock, std::chrono::seconds(20), [&] { return met_; })) return;
    --inside_;
    ephost::sdk::fail(EPHOST_EP_FAIL, "rendezvous: " + std::to_string(count_) +
                                          " computes were never in flight at once within 20 s (is compute "
                                          "called from one thread at a time?)");
  }
  void leave() {
    std::lock_guard<std::mutex> lock(mutex_);
    --inside_;
  }

  const size_t count_;
  std::mutex mutex_;
  std::condition_variable met_changed_;
  size_t inside_ = 0;
  bool met_ = false;
};

// The provider option `rendezvous` (a count of computes; absent or 0: none).
inline std::shared_ptr<Rendezvous> rendezvous_option(const ephost::sdk::Options& options) {
  const std::string text = ephost::sdk::option(options, "rendezvous", "0");
  size_t used = 0;
  unsigned long count = 0;
  try {
    count = std::stoul(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty())
    ephost::sdk::fail(EPHOST_INVALID_ARGUMENT, "option rendezvous must be a count, got '" + text + "'");
  return count ? std::make_shared<Rendezvous>(count) : nullptr;
}

}  // namespace ephost_test
