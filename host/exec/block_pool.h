// Memory-pattern blocks kept across runs. A run with a recorded pattern needs one block of the
// pattern's peak size; allocating it fresh each run costs page faults on every page (a quarter of
// PP-OCR det's run time), so blocks return here when the run ends and the next run takes one.
// Concurrent runs each hold their own block. Thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace ephost {

class BlockPool {
 public:
  explicit BlockPool(size_t max_free_blocks = 4);
  // A 64-byte aligned block of at least `bytes`. When the last reference drops it goes back to the
  // pool (or is freed when the pool is full or gone).
  std::shared_ptr<void> take(size_t bytes);
  size_t free_blocks() const;

 private:
  struct State {
    std::mutex mutex;
    size_t max_free;
    std::vector<std::pair<void*, size_t>> free;  // (block, capacity)
    ~State();
  };
  std::shared_ptr<State> state_;
};

}  // namespace ephost
