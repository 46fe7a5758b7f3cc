#include "epcontext/context_binary.h"

#include <xxhash.h>

#include <cstring>
#include <limits>

#include "core/error.h"

namespace ephost {
namespace {

constexpr char kMagic[8] = {'E', 'P', 'H', 'O', 'S', 'T', 'C', 'B'};
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kHeaderBytes = 64;
constexpr uint64_t kAlign = 64;

uint64_t align_up(uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

void put_u32(Bytes& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put_u64(Bytes& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// Bounds-checked little-endian reads over the container.
class Reader {
 public:
  Reader(const uint8_t* data, uint64_t size, const std::string& what) : data_(data), size_(size), what_(what) {}
  uint64_t pos() const { return pos_; }
  void seek(uint64_t p) { pos_ = p; }
  uint32_t u32() { return static_cast<uint32_t>(read(4)); }
  uint64_t u64() { return read(8); }
  std::string str(uint64_t n) {
    need(n);
    std::string s(reinterpret_cast<const char*>(data_ + pos_), static_cast<size_t>(n));
    pos_ += n;
    return s;
  }

 private:
  uint64_t read(int n) {
    need(static_cast<uint64_t>(n));
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(data_[pos_ + i]) << (8 * i);
    pos_ += static_cast<uint64_t>(n);
    return v;
  }
  void need(uint64_t n) {
    if (n > size_ || pos_ > size_ - n)
      fail(EPHOST_INVALID_GRAPH, "{} is truncated: its tables need more than its {} bytes", what_, size_);
  }
  const uint8_t* data_;
  uint64_t size_;
  uint64_t pos_ = 0;
  const std::string& what_;
};

}  // namespace

bool is_context_container(const uint8_t* data, size_t size) {
  return size >= sizeof(kMagic) && std::memcmp(data, kMagic, sizeof(kMagic)) == 0;
}

void ContextBinaryBuilder::add_graph(const std::string& name, const std::vector<Bytes>& pieces) {
  if (graph_index_.count(name))
    fail(EPHOST_INVALID_ARGUMENT,
         "two compiled partitions are both named '{}' in one context binary; set ep.context_node_name_prefix to "
         "tell the models of a weight-sharing group apart",
         name);
  GraphEntry entry;
  entry.name = name;
  for (const Bytes& piece : pieces) {
    handed_bytes_ += piece.size();
    const uint64_t hash = XXH64(piece.data(), piece.size(), 0);
    size_t index = pieces_.size();
    auto range = by_hash_.equal_range(hash);
    for (auto it = range.first; it != range.second; ++it)
      if (pieces_[it->second].data == piece) {
        index = it->second;
        break;
      }
    if (index == pieces_.size()) {
      pieces_.push_back({piece, hash});
      by_hash_.emplace(hash, index);
      stored_bytes_ += piece.size();
    }
    entry.pieces.push_back(index);
  }
  graph_index_[name] = graphs_.size();
  graphs_.push_back(std::move(entry));
}

Bytes ContextBinaryBuilder::serialize() const {
  Bytes tables;
  uint64_t offset = 0;
  for (const Piece& p : pieces_) {
    put_u64(tables, offset);
    put_u64(tables, p.data.size());
    put_u64(tables, p.hash);
    offset = align_up(offset + p.data.size());
  }
  for (const GraphEntry& g : graphs_) {
    put_u32(tables, static_cast<uint32_t>(g.name.size()));
    put_u32(tables, static_cast<uint32_t>(g.pieces.size()));
    tables.insert(tables.end(), g.name.begin(), g.name.end());
    for (uint64_t i : g.pieces) put_u64(tables, i);
  }
  const uint64_t data_offset = align_up(kHeaderBytes + tables.size());
  const uint64_t total = data_offset + offset;

  Bytes out;
  out.reserve(static_cast<size_t>(total));
  for (char c : kMagic) out.push_back(static_cast<uint8_t>(c));
  put_u32(out, kFormatVersion);
  put_u32(out, 0);
  put_u64(out, pieces_.size());
  put_u64(out, graphs_.size());
  put_u64(out, tables.size());
  put_u64(out, data_offset);
  put_u64(out, XXH64(tables.data(), tables.size(), 0));
  put_u64(out, total);
  out.insert(out.end(), tables.begin(), tables.end());
  out.resize(static_cast<size_t>(data_offset), 0);
  for (const Piece& p : pieces_) {
    out.insert(out.end(), p.data.begin(), p.data.end());
    out.resize(static_cast<size_t>(align_up(out.size() - data_offset) + data_offset), 0);
  }
  out.resize(static_cast<size_t>(total), 0);
  return out;
}

ContextBinary ContextBinary::parse(std::shared_ptr<const Bytes> data, const std::string& what) {
  ContextBinary b;
  b.what_ = what;
  b.data_ = std::move(data);
  const Bytes& d = *b.data_;
  if (d.empty()) fail(EPHOST_INVALID_GRAPH, "{} is empty (truncated when it was copied?)", what);
  if (!is_context_container(d.data(), d.size())) {
    b.raw_ = true;
    return b;
  }
  Reader r(d.data(), d.size(), what);
  r.seek(sizeof(kMagic));
  const uint32_t version = r.u32();
  r.u32();
  if (version != kFormatVersion)
    fail(EPHOST_INVALID_GRAPH, "{} has container format version {}; this host reads version {}", what, version,
         kFormatVersion);
  const uint64_t num_pieces = r.u64(), num_graphs = r.u64(), table_bytes = r.u64(), data_offset = r.u64();
  const uint64_t tables_hash = r.u64(), total = r.u64();
  if (total != d.size())
    fail(EPHOST_INVALID_GRAPH, "{} is {}: it should have {} bytes and has {}", what,
         d.size() < total ? "truncated" : "corrupt (trailing bytes)", total, d.size());
  if (table_bytes > d.size() - kHeaderBytes || data_offset < kHeaderBytes + table_bytes || data_offset > d.size())
    fail(EPHOST_INVALID_GRAPH, "{} is corrupt: its header describes tables outside the file", what);
  if (XXH64(d.data() + kHeaderBytes, static_cast<size_t>(table_bytes), 0) != tables_hash)
    fail(EPHOST_INVALID_GRAPH, "{} is corrupt: checksum mismatch in its tables", what);
  // Each piece needs 24 table bytes, each graph at least 8: counts beyond that are corrupt.
  if (num_pieces > table_bytes / 24 || num_graphs > table_bytes / 8)
    fail(EPHOST_INVALID_GRAPH, "{} is corrupt: {} pieces and {} graphs do not fit its tables", what, num_pieces,
         num_graphs);
  Reader t(d.data(), kHeaderBytes + table_bytes, what);
  t.seek(kHeaderBytes);
  const uint64_t data_bytes = d.size() - data_offset;
  for (uint64_t i = 0; i < num_pieces; ++i) {
    PieceRef p;
    p.offset = t.u64();
    p.size = t.u64();
    const uint64_t hash = t.u64();
    if (p.offset > data_bytes || p.size > data_bytes - p.offset)
      fail(EPHOST_INVALID_GRAPH, "{} is truncated: piece {} lies outside the file", what, i);
    if (XXH64(d.data() + data_offset + p.offset, static_cast<size_t>(p.size), 0) != hash)
      fail(EPHOST_INVALID_GRAPH, "{} is corrupt: checksum mismatch in piece {} ({} bytes)", what, i, p.size);
    p.offset += data_offset;
    b.pieces_.push_back(p);
  }
  for (uint64_t g = 0; g < num_graphs; ++g) {
    const uint32_t name_len = t.u32(), count = t.u32();
    std::string name = t.str(name_len);
    std::vector<uint64_t> refs;
    for (uint32_t k = 0; k < count; ++k) {
      uint64_t ref = t.u64();
      if (ref >= num_pieces) fail(EPHOST_INVALID_GRAPH, "{} is corrupt: graph '{}' names piece {}", what, name, ref);
      refs.push_back(ref);
    }
    if (!b.graphs_.emplace(std::move(name), std::move(refs)).second)
      fail(EPHOST_INVALID_GRAPH, "{} is corrupt: a graph name appears twice", what);
  }
  return b;
}

std::vector<std::string> ContextBinary::graph_names() const {
  std::vector<std::string> names;
  for (const auto& g : graphs_) names.push_back(g.first);
  return names;
}

bool ContextBinary::has_graph(const std::string& name) const { return raw_ || graphs_.count(name) != 0; }

std::string ContextBinary::resolve(const std::string& partition_name) const {
  if (raw_) return partition_name;
  // Never a guess: a container whose only graph has another name belongs to another model (a .bin
  // replaced by another model's binary would otherwise load and compute wrong outputs silently).
  if (graphs_.count(partition_name)) return partition_name;
  return "";
}

Bytes ContextBinary::assemble(const std::string& name) const {
  if (raw_) return *data_;
  auto it = graphs_.find(name);
  if (it == graphs_.end()) {
    std::string names;
    for (const auto& g : graphs_) names += (names.empty() ? "'" : ", '") + g.first + "'";
    fail(EPHOST_INVALID_GRAPH, "{} holds no graph '{}' (it holds {})", what_, name, names.empty() ? std::string("none") : names);
  }
  uint64_t total = 0;
  for (uint64_t i : it->second) total += pieces_[i].size;
  Bytes out;
  out.reserve(static_cast<size_t>(total));
  for (uint64_t i : it->second) {
    const PieceRef& p = pieces_[i];
    out.insert(out.end(), data_->begin() + static_cast<std::ptrdiff_t>(p.offset),
               data_->begin() + static_cast<std::ptrdiff_t>(p.offset + p.size));
  }
  return out;
}

}  // namespace ephost
