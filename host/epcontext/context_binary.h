// The EPContext binary container: how the host stores plugins' compiled contexts in a
// `<model>_<ep>.bin` file (embed_mode 0) or an `ep_cache_context` payload (embed_mode 1).
//
// A container holds named graphs (one per compiled partition, named by its `partition_name`). A
// graph is the concatenation of the pieces the plugin handed to context_set_blob; each distinct
// piece is stored once, found by content (XXH64 and a byte comparison), so identical weights of
// several partitions, or of several models of a weight-sharing group, take their space once.
// Every piece and the tables carry a checksum: a truncated or bit-flipped file is detected before a
// plugin sees a byte of it.
//
// Layout (little endian):
//   0  "EPHOSTCB"                      magic
//   8  u32 format version (1)          u32 reserved (0)
//   16 u64 piece count                 u64 graph count
//   32 u64 table bytes                 u64 data offset (from the start, 64-byte aligned)
//   48 u64 XXH64 of the tables         u64 total size of the container
//   64 tables: per piece {u64 offset from data offset, u64 size, u64 XXH64};
//              per graph {u32 name length, u32 piece count, name bytes, u64 piece index per piece}
//   data: the pieces, each 64-byte aligned
// A payload that does not start with the magic is a raw context (one unnamed graph), so contexts
// written by other tools in a plugin's own format still load.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace ephost {

using Bytes = std::vector<uint8_t>;

// Collects graphs and serializes them. Not thread-safe (a session, or a sharing workspace under its
// lock, owns one).
class ContextBinaryBuilder {
 public:
  // Adds graph `name` made of `pieces` (concatenated in order). Throws INVALID_ARGUMENT when a graph
  // of that name exists already.
  void add_graph(const std::string& name, const std::vector<Bytes>& pieces);
  bool has_graph(const std::string& name) const { return graph_index_.count(name) != 0; }
  bool empty() const { return graphs_.empty(); }
  size_t graph_count() const { return graphs_.size(); }
  // Bytes the pieces take once deduplicated, and as handed over (before deduplication).
  uint64_t stored_piece_bytes() const { return stored_bytes_; }
  uint64_t handed_piece_bytes() const { return handed_bytes_; }
  Bytes serialize() const;

 private:
  struct Piece {
    Bytes data;
    uint64_t hash = 0;
  };
  struct GraphEntry {
    std::string name;
    std::vector<uint64_t> pieces;
  };
  std::vector<Piece> pieces_;
  std::unordered_multimap<uint64_t, size_t> by_hash_;
  std::vector<GraphEntry> graphs_;
  std::map<std::string, size_t> graph_index_;
  uint64_t stored_bytes_ = 0, handed_bytes_ = 0;
};

// A parsed container. Parsing checks the structure, the bounds and every checksum; assemble()
// concatenates one graph's pieces.
class ContextBinary {
 public:
  // Parses `data` (kept alive by the shared pointer). `what` names the source in errors, e.g.
  // "context binary 'model_example.bin'". Throws INVALID_GRAPH saying what is wrong ("truncated:
  // ...", "checksum mismatch in piece 3", "bad magic" is not an error: a raw context).
  static ContextBinary parse(std::shared_ptr<const Bytes> data, const std::string& what);

  bool raw() const { return raw_; }
  std::vector<std::string> graph_names() const;
  bool has_graph(const std::string& name) const;
  // The bytes of graph `name` (the whole payload of a raw context). Throws INVALID_GRAPH when absent;
  // use resolve() first to pick the name.
  Bytes assemble(const std::string& name) const;
  // The graph a node with `partition_name` uses: that name when the container holds it (or the whole
  // payload of a raw context). "" when it does not: names must match, even when the container holds
  // a single graph.
  std::string resolve(const std::string& partition_name) const;
  uint64_t size() const { return data_ ? data_->size() : 0; }

 private:
  struct PieceRef {
    uint64_t offset = 0, size = 0;
  };
  std::shared_ptr<const Bytes> data_;
  bool raw_ = false;
  std::vector<PieceRef> pieces_;
  std::map<std::string, std::vector<uint64_t>> graphs_;
  std::string what_;
};

// True when `data` starts with the container magic.
bool is_context_container(const uint8_t* data, size_t size);

}  // namespace ephost
