// Text ops: StringNormalizer (stop-word removal and case change over UTF-8 strings) and
// TfIdfVectorizer (n-gram counting with skips over int or string tokens).
#include <clocale>
#include <cstring>
#include <cwctype>
#include <locale.h>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kernel_registry.h"
#include "math/parallel.h"

namespace ephost::cpu {

namespace {

// ---- UTF-8 case mapping ---------------------------------------------------------------------------

// Decodes UTF-8 into code points; false on malformed input.
bool decode_utf8(std::string_view s, std::u32string* out) {
  out->clear();
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = 0;
    char32_t cp = 0;
    if (c < 0x80) { len = 1; cp = c; }
    else if ((c & 0xe0) == 0xc0) { len = 2; cp = c & 0x1f; }
    else if ((c & 0xf0) == 0xe0) { len = 3; cp = c & 0x0f; }
    else if ((c & 0xf8) == 0xf0) { len = 4; cp = c & 0x07; }
    else return false;
    if (i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      const unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    out->push_back(cp);
    i += len;
  }
  return true;
}

void encode_utf8(const std::u32string& cps, std::string* out) {
  out->clear();
  for (char32_t cp : cps) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else {
      out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    }
  }
}

// Case mapping by the Unicode tables of a C library locale (wchar_t is UTF-32 with glibc). The node's
// `locale` is tried first (as given and with ".UTF-8"), then C.UTF-8, which glibc always provides.
class CaseMapper {
 public:
  explicit CaseMapper(const std::string& name) {
    std::vector<std::string> candidates;
    if (!name.empty()) candidates = {name + ".UTF-8", name};
    candidates.push_back("C.UTF-8");
    for (const std::string& c : candidates)
      if ((loc_ = newlocale(LC_CTYPE_MASK, c.c_str(), static_cast<locale_t>(nullptr))) != nullptr) break;
  }
  ~CaseMapper() {
    if (loc_) freelocale(loc_);
  }
  CaseMapper(const CaseMapper&) = delete;
  CaseMapper& operator=(const CaseMapper&) = delete;
  bool valid() const { return loc_ != nullptr; }

  // False when s is not valid UTF-8.
  bool map(std::string_view s, bool upper, std::string* out) const {
    std::u32string cps;
    if (!decode_utf8(s, &cps)) return false;
    for (char32_t& cp : cps) {
      const wint_t w = static_cast<wint_t>(cp);
      cp = static_cast<char32_t>(upper ? towupper_l(w, loc_) : towlower_l(w, loc_));
    }
    encode_utf8(cps, out);
    return true;
  }

 private:
  locale_t loc_ = nullptr;
};

// ---- StringNormalizer -----------------------------------------------------------------------------

enum class CaseChange { kNone, kLower, kUpper };

class StringNormalizerKernel : public CpuKernel {
 public:
  StringNormalizerKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), case_sensitive_(node.attr_int("is_case_sensitive", 0) != 0),
        mapper_(node.attr_string("locale", "")) {
    const std::string action = node.attr_string("case_change_action", "NONE");
    if (action == "NONE") change_ = CaseChange::kNone;
    else if (action == "LOWER") change_ = CaseChange::kLower;
    else if (action == "UPPER") change_ = CaseChange::kUpper;
    else fail_node(node, "case_change_action must be NONE, LOWER or UPPER, found '" + action + "'");
    if (!mapper_.valid()) fail_node(node, "no UTF-8 locale is available for case mapping");
    // Case-insensitive matching compares lowercased forms.
    for (const std::string& w : node.attr_strings("stopwords")) {
      std::string key = w;
      if (!case_sensitive_ && !mapper_.map(w, false, &key)) fail_node(node, "stop word '" + w + "' is not valid UTF-8");
      stopwords_.insert(std::move(key));
    }
  }

 protected:
  void run(sdk::KernelContext& ctx, int) override {
    const sdk::Tensor x = required(ctx, 0, "X");
    expect_type(x, {EPHOST_ELEMENT_STRING}, "X");
    const Shape xs = x.shape();
    if (!(xs.size() == 1 || (xs.size() == 2 && xs[0] == 1)))
      fail("X must have shape [C] or [1, C], found " + math::to_string(xs));
    const char* const* in = x.data<const char*>();
    std::vector<std::string> kept;
    std::string key, mapped;
    for (int64_t i = 0; i < x.size(); ++i) {
      const std::string_view s(in[i]);
      if (!stopwords_.empty()) {
        key.assign(s);
        if (!case_sensitive_ && !mapper_.map(s, false, &key)) fail("X[" + std::to_string(i) + "] is not valid UTF-8");
        if (stopwords_.count(key)) continue;
      }
      if (change_ == CaseChange::kNone) {
        kept.emplace_back(s);
      } else {
        if (!mapper_.map(s, change_ == CaseChange::kUpper, &mapped)) fail("X[" + std::to_string(i) + "] is not valid UTF-8");
        kept.push_back(mapped);
      }
    }
    // With every element dropped the result is one empty string, [1] or [1, 1].
    const bool empty = kept.empty();
    if (empty) kept.emplace_back();
    const int64_t n = static_cast<int64_t>(kept.size());
    const Shape ys = xs.size() == 1 ? Shape{n} : Shape{1, n};
    const char** y = ctx.output<const char*>(0, ys);
    for (int64_t i = 0; i < n; ++i) y[i] = ctx.output_string(0, kept[i]);
  }

 private:
  bool case_sensitive_;
  CaseChange change_ = CaseChange::kNone;
  CaseMapper mapper_;
  std::unordered_set<std::string> stopwords_;
};

// ---- TfIdfVectorizer ------------------------------------------------------------------------------

// The pool's n-grams as a trie over tokens: walking a candidate n-gram token by token stops at the
// first token no pool n-gram continues with.
template <typename Token>
class NgramTrie {
 public:
  NgramTrie() : nodes_(1) {}
  void insert(const std::vector<Token>& ngram, int64_t id) {
    size_t at = 0;
    for (const Token& t : ngram) {
      auto it = nodes_[at].next.find(t);
      if (it == nodes_[at].next.end()) {
        nodes_.emplace_back();
        it = nodes_[at].next.emplace(t, nodes_.size() - 1).first;
      }
      at = it->second;
    }
    nodes_[at].id = id;
  }
  static constexpr size_t kNone = static_cast<size_t>(-1);
  size_t root() const { return 0; }
  size_t child(size_t node, const Token& t) const {
    auto it = nodes_[node].next.find(t);
    return it == nodes_[node].next.end() ? kNone : it->second;
  }
  int64_t id(size_t node) const { return nodes_[node].id; }

 private:
  struct Node {
    std::unordered_map<Token, size_t> next;
    int64_t id = -1;  // index of the pool n-gram ending here
  };
  std::vector<Node> nodes_;
};

enum class TfIdfMode { kTf, kIdf, kTfIdf };

class TfIdfKernel : public CpuKernel {
 public:
  TfIdfKernel(const sdk::Node& node, const KernelConfig& c)
      : CpuKernel(node, c), min_n_(node.attr_int("min_gram_length", 0)), max_n_(node.attr_int("max_gram_length", 0)),
        max_skip_(node.attr_int("max_skip_count", 0)), indexes_(node.attr_ints("ngram_indexes")),
        weights_(node.attr_floats("weights")) {
    const std::string mode = node.attr_string("mode", "");
    if (mode == "TF") mode_ = TfIdfMode::kTf;
    else if (mode == "IDF") mode_ = TfIdfMode::kIdf;
    else if (mode == "TFIDF") mode_ = TfIdfMode::kTfIdf;
    else fail_node(node, "mode must be TF, IDF or TFIDF, found '" + mode + "'");
    if (min_n_ < 1 || max_n_ < min_n_)
      fail_node(node, "need 1 <= min_gram_length <= max_gram_length, found " + std::to_string(min_n_) + " and " +
                          std::to_string(max_n_));
    if (max_skip_ < 0) fail_node(node, "max_skip_count must not be negative");
    const std::vector<int64_t> counts = node.attr_ints("ngram_counts");
    strings_ = node.attr_strings("pool_strings");
    const std::vector<int64_t> ints = node.attr_ints("pool_int64s");
    if (strings_.empty() == ints.empty()) fail_node(node, "exactly one of pool_strings and pool_int64s must be set");
    string_pool_ = !strings_.empty();
    const int64_t pool_size = static_cast<int64_t>(string_pool_ ? strings_.size() : ints.size());

    // ngram_counts[n - 1] is where the n-grams start in the pool; each run holds whole n-grams.
    int64_t id = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
      const int64_t n = static_cast<int64_t>(i) + 1, begin = counts[i];
      const int64_t end = i + 1 < counts.size() ? counts[i + 1] : pool_size;
      if (begin < 0 || end < begin || end > pool_size || (end - begin) % n != 0)
        fail_node(node, "ngram_counts " + math::to_string(counts) + " do not split a pool of " +
                            std::to_string(pool_size) + " into whole n-grams");
      for (int64_t at = begin; at < end; at += n, ++id) {
        if (string_pool_) {
          std::vector<std::string_view> g;
          for (int64_t k = 0; k < n; ++k) g.emplace_back(strings_[at + k]);
          string_trie_.insert(g, id);
        } else {
          int_trie_.insert(std::vector<int64_t>(ints.begin() + at, ints.begin() + at + n), id);
        }
      }
    }
    num_ngrams_ = id;
    if (static_cast<int64_t>(indexes_.size()) != num_ngrams_)
      fail_node(node, "ngram_indexes has " + std::to_string(indexes_.size()) + " entries for " +
                          std::to_string(num_ngrams_) + " pool n-grams");
    if (!weights_.empty() && static_cast<int64_t>(weights_.size()) != num_ngrams_)
      fail_node(node, "weights has " + std::to_string(weights_.size()) + " entries for " + std::to_string(num_ngrams_) +
                          " pool n-grams");
    for (int64_t i : indexes_) {
      if (i < 0) fail_node(node, "ngram_indexes must not be negative");
      out_size_ = std::max(out_size_, i + 1);
    }
  }

 protected:
  void run(sdk::KernelContext& ctx, int threads) override {
    const sdk::Tensor x = required(ctx, 0, "X");
    const int32_t t = x.elem_type();
    if (string_pool_ ? t != EPHOST_ELEMENT_STRING : (t != EPHOST_ELEMENT_INT32 && t != EPHOST_ELEMENT_INT64))
      fail(std::string("X must be ") + (string_pool_ ? "string (pool_strings is set)" : "int32 or int64 (pool_int64s is set)") +
           ", found " + type_name(t));
    const Shape xs = x.shape();
    if (xs.empty() || xs.size() > 2) fail("X must have shape [C] or [N, C], found " + math::to_string(xs));
    const int64_t rows = xs.size() == 1 ? 1 : xs[0], cols = xs.back();
    float* y = ctx.output<float>(0, xs.size() == 1 ? Shape{out_size_} : Shape{rows, out_size_});
    math::parallel_for(rows, threads, std::max<int64_t>(1, 4096 / std::max<int64_t>(cols, 1)), [&](int64_t r0, int64_t r1) {
      std::vector<int64_t> counts(static_cast<size_t>(num_ngrams_));
      for (int64_t r = r0; r < r1; ++r) {
        std::fill(counts.begin(), counts.end(), 0);
        if (t == EPHOST_ELEMENT_STRING) {
          const char* const* row = x.data<const char*>() + r * cols;
          count_row(string_trie_, [&](int64_t i) { return std::string_view(row[i]); }, cols, counts);
        } else if (t == EPHOST_ELEMENT_INT64) {
          const int64_t* row = x.data<int64_t>() + r * cols;
          count_row(int_trie_, [&](int64_t i) { return row[i]; }, cols, counts);
        } else {
          const int32_t* row = x.data<int32_t>() + r * cols;
          count_row(int_trie_, [&](int64_t i) { return static_cast<int64_t>(row[i]); }, cols, counts);
        }
        float* yr = y + r * out_size_;
        std::fill(yr, yr + out_size_, 0.f);
        for (int64_t i = 0; i < num_ngrams_; ++i) {
          const float w = weights_.empty() ? 1.f : weights_[i];
          const float c = static_cast<float>(counts[i]);
          switch (mode_) {
            case TfIdfMode::kTf: yr[indexes_[i]] += c; break;
            case TfIdfMode::kIdf: yr[indexes_[i]] += counts[i] > 0 ? w : 0.f; break;
            case TfIdfMode::kTfIdf: yr[indexes_[i]] += c * w; break;
          }
        }
      }
    });
  }

 private:
  // Counts, for every start position and every skip s <= max_skip_count, the n-grams made of the
  // tokens at start, start + (s + 1), start + 2 (s + 1), ... Unigrams do not depend on the skip and
  // are counted in the first pass only.
  template <typename Token, typename Get>
  void count_row(const NgramTrie<Token>& trie, Get token, int64_t cols, std::vector<int64_t>& counts) const {
    for (int64_t skip = 0; skip <= max_skip_; ++skip) {
      const int64_t step = skip + 1;
      const int64_t first_n = skip == 0 ? min_n_ : std::max<int64_t>(min_n_, 2);
      if (first_n > max_n_) break;
      for (int64_t start = 0; start < cols; ++start) {
        if (start + (first_n - 1) * step >= cols) break;  // no n-gram long enough fits any more
        size_t node = trie.root();
        for (int64_t n = 1, at = start; n <= max_n_ && at < cols; ++n, at += step) {
          node = trie.child(node, token(at));
          if (node == NgramTrie<Token>::kNone) break;
          if (n >= first_n && trie.id(node) >= 0) ++counts[trie.id(node)];
        }
      }
    }
  }

  int64_t min_n_, max_n_, max_skip_;
  TfIdfMode mode_ = TfIdfMode::kTf;
  std::vector<int64_t> indexes_;
  std::vector<float> weights_;
  std::vector<std::string> strings_;  // owns the pool strings the string trie points into
  bool string_pool_ = false;
  NgramTrie<int64_t> int_trie_;
  NgramTrie<std::string_view> string_trie_;
  int64_t num_ngrams_ = 0, out_size_ = 0;
};

}  // namespace

void register_string_kernels(KernelRegistry& r) {
  r.add("StringNormalizer", 10, 17, inputs_of({EPHOST_ELEMENT_STRING}), make_factory<StringNormalizerKernel>());
  r.add("TfIdfVectorizer", 9, 17, inputs_of({EPHOST_ELEMENT_STRING, EPHOST_ELEMENT_INT32, EPHOST_ELEMENT_INT64}),
        make_factory<TfIdfKernel>());
}

}  // namespace ephost::cpu
