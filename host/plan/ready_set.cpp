#include "plan/ready_set.h"

namespace ephost::plan {

namespace {

size_t words_for(size_t bits) { return (bits + 63) / 64; }

int lowest_bit(uint64_t word) { return __builtin_ctzll(word); }

}  // namespace

ReadySet::ReadySet(int capacity) {
  size_t words = words_for(capacity > 0 ? static_cast<size_t>(capacity) : 1);
  levels_.emplace_back(words, 0);
  while (words > 1) {
    words = words_for(words);
    levels_.emplace_back(words, 0);
  }
}

void ReadySet::insert(int id) {
  auto index = static_cast<size_t>(id);
  for (auto& level : levels_) {
    uint64_t& word = level[index / 64];
    const bool was_empty = word == 0;
    word |= uint64_t{1} << (index % 64);
    if (!was_empty) return;  // the levels above already know this word is occupied
    index /= 64;
  }
}

int ReadySet::pop_min() {
  size_t index = 0;
  for (size_t k = levels_.size(); k-- > 0;) index = index * 64 + lowest_bit(levels_[k][index]);
  const auto id = static_cast<int>(index);
  for (auto& level : levels_) {
    uint64_t& word = level[index / 64];
    word &= ~(uint64_t{1} << (index % 64));
    if (word != 0) break;  // still occupied: the levels above stay as they are
    index /= 64;
  }
  return id;
}

}  // namespace ephost::plan
