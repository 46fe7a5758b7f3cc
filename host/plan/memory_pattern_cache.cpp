#include "plan/memory_pattern_cache.h"

namespace ephost::plan {

MemoryPatternCache::MemoryPatternCache(size_t capacity) : capacity_(capacity > 0 ? capacity : 1) {}

std::string MemoryPatternCache::signature(const std::vector<std::vector<int64_t>>& input_shapes) {
  std::string text;
  for (const auto& shape : input_shapes) {
    text += '[';
    for (size_t i = 0; i < shape.size(); ++i) {
      if (i > 0) text += ',';
      text += std::to_string(shape[i]);
    }
    text += ']';
  }
  return text;
}

std::shared_ptr<const MemoryPattern> MemoryPatternCache::find(const std::string& signature) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = entries_.find(signature);
  if (it == entries_.end()) return nullptr;
  recency_.splice(recency_.begin(), recency_, it->second);
  return it->second->second;
}

std::shared_ptr<const MemoryPattern> MemoryPatternCache::insert(const std::string& signature,
                                                                std::shared_ptr<const MemoryPattern> pattern) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = entries_.find(signature);
  if (it != entries_.end() || pattern == nullptr) {
    if (it == entries_.end()) return nullptr;
    recency_.splice(recency_.begin(), recency_, it->second);
    return it->second->second;
  }
  if (entries_.size() >= capacity_) {
    entries_.erase(recency_.back().first);
    recency_.pop_back();
  }
  recency_.emplace_front(signature, std::move(pattern));
  entries_.emplace(signature, recency_.begin());
  return recency_.front().second;
}

size_t MemoryPatternCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

std::vector<MemoryPatternCache::Entry> MemoryPatternCache::entries() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return {recency_.begin(), recency_.end()};
}

}  // namespace ephost::plan
