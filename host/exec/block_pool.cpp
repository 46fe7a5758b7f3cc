#include "exec/block_pool.h"

#include <cstdlib>
#include <new>

namespace ephost {

BlockPool::BlockPool(size_t max_free_blocks) : state_(std::make_shared<State>()) { state_->max_free = max_free_blocks; }

BlockPool::State::~State() {
  for (auto& [p, size] : free) std::free(p);
}

std::shared_ptr<void> BlockPool::take(size_t bytes) {
  size_t capacity = (bytes + 63) / 64 * 64;
  if (capacity == 0) capacity = 64;
  void* block = nullptr;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    // The smallest free block that fits.
    size_t best = state_->free.size();
    for (size_t i = 0; i < state_->free.size(); ++i)
      if (state_->free[i].second >= capacity && (best == state_->free.size() || state_->free[i].second < state_->free[best].second))
        best = i;
    if (best < state_->free.size()) {
      block = state_->free[best].first;
      capacity = state_->free[best].second;
      state_->free.erase(state_->free.begin() + static_cast<std::ptrdiff_t>(best));
    }
  }
  if (!block) {
    block = std::aligned_alloc(64, capacity);
    if (!block) throw std::bad_alloc();
  }
  // The deleter holds the pool's state, so a block outliving the executor is still freed correctly.
  std::weak_ptr<State> weak = state_;
  return std::shared_ptr<void>(block, [weak, capacity](void* p) {
    if (auto state = weak.lock()) {
      std::lock_guard<std::mutex> lock(state->mutex);
      if (state->free.size() < state->max_free) {
        state->free.emplace_back(p, capacity);
        return;
      }
    }
    std::free(p);
  });
}

size_t BlockPool::free_blocks() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->free.size();
}

}  // namespace ephost
