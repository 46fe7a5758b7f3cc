#include "ort_ep/prepacked_weights.h"

#include <cstring>
#include <map>
#include <mutex>

void OrtSharedPrePackedWeightCache::free_buffers() noexcept {
  for (void* p : buffers)
    if (p && allocator && allocator->Free) allocator->Free(allocator, p);
  buffers.clear();
  sizes.clear();
}

namespace ephost::ort_ep {
namespace {

// FNV-1a over the buffers' sizes and bytes: the container's key beside the operator type.
uint64_t hash_of(const std::vector<void*>& buffers, const std::vector<size_t>& sizes) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](const unsigned char* p, size_t n) {
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  };
  for (size_t i = 0; i < buffers.size(); ++i) {
    mix(reinterpret_cast<const unsigned char*>(&sizes[i]), sizeof sizes[i]);
    mix(static_cast<const unsigned char*>(buffers[i]), sizes[i]);
  }
  return h;
}

bool same_bytes(const SharedPrePackedWeight& w, const OrtSharedPrePackedWeightCache& c) {
  if (w.sizes != c.sizes) return false;
  for (size_t i = 0; i < w.buffers.size(); ++i)
    if (w.sizes[i] && std::memcmp(w.buffers[i], c.buffers[i], w.sizes[i]) != 0) return false;
  return true;
}

struct Container {
  std::mutex mutex;
  // (operator type, hash) -> the weights with that key (several only when bytes differ under one hash).
  std::multimap<std::pair<std::string, uint64_t>, std::weak_ptr<SharedPrePackedWeight>> weights;
};

Container& container() {
  static auto* c = new Container();  // never destroyed: kernels may outlive static destruction order
  return *c;
}

}  // namespace

SharedPrePackedWeight::~SharedPrePackedWeight() {
  {
    Container& c = container();
    std::lock_guard<std::mutex> lock(c.mutex);
    auto range = c.weights.equal_range({op_type, hash});
    for (auto it = range.first; it != range.second;) it = it->second.expired() ? c.weights.erase(it) : std::next(it);
  }
  for (void* p : buffers)
    if (p && allocator && allocator->Free) allocator->Free(allocator, p);
}

std::shared_ptr<const SharedPrePackedWeight> share_prepacked_weight(const std::string& op_type,
                                                                    OrtSharedPrePackedWeightCache& filled) {
  const uint64_t hash = hash_of(filled.buffers, filled.sizes);
  Container& c = container();
  // Candidates looked at are released after the lock: the last reference's destructor takes the lock.
  std::vector<std::shared_ptr<SharedPrePackedWeight>> looked_at;
  std::lock_guard<std::mutex> lock(c.mutex);
  auto range = c.weights.equal_range({op_type, hash});
  for (auto it = range.first; it != range.second; ++it) {
    std::shared_ptr<SharedPrePackedWeight> existing = it->second.lock();
    if (!existing) continue;
    if (same_bytes(*existing, filled)) {
      filled.free_buffers();
      return existing;
    }
    looked_at.push_back(std::move(existing));
  }
  auto weight = std::make_shared<SharedPrePackedWeight>();
  weight->op_type = op_type;
  weight->hash = hash;
  weight->allocator = filled.allocator;
  weight->buffers = std::move(filled.buffers);
  weight->sizes = std::move(filled.sizes);
  filled.buffers.clear();
  filled.sizes.clear();
  c.weights.emplace(std::make_pair(op_type, hash), weight);
  return weight;
}

size_t shared_prepacked_weight_count() {
  Container& c = container();
  std::lock_guard<std::mutex> lock(c.mutex);
  size_t n = 0;
  for (const auto& [key, weak] : c.weights) n += weak.expired() ? 0 : 1;
  return n;
}

}  // namespace ephost::ort_ep
