#include "model/initializer_release.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <unordered_set>

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include "core/error.h"

namespace ephost {
namespace {

thread_local const void* g_current_reader = nullptr;
thread_local const void* g_current_step = nullptr;

bool contains(const std::vector<const void*>& list, const void* p) {
  return std::find(list.begin(), list.end(), p) != list.end();
}
// Whether `done` covers `reader`: that step said so, or its provider did for all its steps.
bool covers(const std::vector<InitializerReader>& done, const InitializerReader& reader) {
  for (const InitializerReader& d : done)
    if (d.provider == reader.provider && (d.step == nullptr || d.step == reader.step)) return true;
  return false;
}
bool done_with_something(const std::vector<InitializerReader>& done, const void* provider) {
  for (const InitializerReader& d : done)
    if (d.provider == provider) return true;
  return false;
}

std::mutex& live_readers_mutex() {
  static std::mutex m;
  return m;
}
std::unordered_set<const void*>& live_readers() {
  static std::unordered_set<const void*> s;
  return s;
}

std::string absolute_path(const std::string& path) {
  if (path.empty()) return path;
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(path, ec);
  return ec ? path : p.string();
}

}  // namespace

void add_live_initializer_reader(const void* provider) {
  std::lock_guard<std::mutex> lock(live_readers_mutex());
  live_readers().insert(provider);
}
void remove_live_initializer_reader(const void* provider) {
  std::lock_guard<std::mutex> lock(live_readers_mutex());
  live_readers().erase(provider);
}
bool is_live_initializer_reader(const void* provider) {
  std::lock_guard<std::mutex> lock(live_readers_mutex());
  return live_readers().count(provider) > 0;
}

InitializerReaderScope::InitializerReaderScope(const void* reader) : outer_(g_current_reader) {
  g_current_reader = reader;
}
InitializerReaderScope::~InitializerReaderScope() { g_current_reader = outer_; }
const void* current_initializer_reader() { return g_current_reader; }

InitializerStepScope::InitializerStepScope(const void* step) : outer_(g_current_step) { g_current_step = step; }
InitializerStepScope::~InitializerStepScope() { g_current_step = outer_; }
const void* current_initializer_step() { return g_current_step; }

uint64_t initializer_hash(const void* data, size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = 0x9E3779B97F4A7C15ull ^ bytes;
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 0xFF51AFD7ED558CCDull;
    h ^= h >> 29;
  }
  for (; i < bytes; ++i) h = (h ^ p[i]) * 0x100000001B3ull;
  return h ^ (h >> 32);
}

InitializerRelease::InitializerRelease(std::string path, LoadOptions options)
    : path_(absolute_path(path)), options_(std::move(options)) {
  options_.run_checker = false;
  options_.infer_shapes = false;
}

void InitializerRelease::add_from_file(const std::string& name, const std::shared_ptr<Tensor>& tensor) {
  if (path_.empty() || !tensor || tensor->on_device() || tensor->elem_type() == EPHOST_ELEMENT_STRING) return;
  std::lock_guard<std::mutex> lock(mu_);
  Entry& e = entries_[tensor.get()];
  e.name = name;
  e.tensor = tensor;
}

InitializerRelease::Entry* InitializerRelease::live_entry(const Tensor* tensor) {
  auto it = entries_.find(tensor);
  if (it == entries_.end()) return nullptr;
  // A tensor that died may leave its address to a new one (a transform replaced it): not the same.
  if (it->second.tensor.lock().get() != tensor) {
    entries_.erase(it);
    return nullptr;
  }
  return &it->second;
}

void InitializerRelease::note_handout(const Tensor* tensor, InitializerReader reader) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry* found = live_entry(tensor);
  if (!found) return;
  Entry& e = *found;
  if (!contains(e.handed_to, reader.provider)) e.handed_to.push_back(reader.provider);
  e.done_by.erase(std::remove_if(e.done_by.begin(), e.done_by.end(),
                                 [&](const InitializerReader& d) {
                                   return d.provider == reader.provider &&
                                          (reader.step == nullptr || d.step == nullptr || d.step == reader.step);
                                 }),
                  e.done_by.end());
}

bool InitializerRelease::note_done(const Tensor* tensor, InitializerReader reader) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry* e = live_entry(tensor);
  if (!e || !reader.provider) return false;
  if (std::find(e->done_by.begin(), e->done_by.end(), reader) == e->done_by.end()) e->done_by.push_back(reader);
  return true;
}

size_t InitializerRelease::release_if_done(const Tensor* tensor, const std::vector<InitializerReader>& step_readers) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry* found = live_entry(tensor);
  if (!found) return 0;
  Entry& e = *found;
  std::shared_ptr<Tensor> t = e.tensor.lock();
  if (!t || e.released || t->data_released() || e.done_by.empty() || !t->data()) return 0;
  for (const InitializerReader& r : step_readers)
    if (!r.provider || !covers(e.done_by, r) || !contains(e.handed_to, r.provider)) return 0;
  for (const void* provider : e.handed_to)
    if (!provider || !done_with_something(e.done_by, provider)) return 0;
  e.bytes = t->byte_size();
  e.hash = initializer_hash(t->data(), e.bytes);
  t->release_data(shared_from_this());
  e.released = true;
  return e.bytes;
}

Tensor InitializerRelease::copy_if_held(const Tensor& tensor) const {
  std::lock_guard<std::mutex> lock(mu_);
  return tensor.data_released() ? Tensor() : tensor;
}

void InitializerRelease::restore_all() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<Entry*, std::shared_ptr<Tensor>>> freed;
  for (auto& [key, e] : entries_)
    if (e.released)
      if (std::shared_ptr<Tensor> t = e.tensor.lock()) freed.emplace_back(&e, std::move(t));
  if (freed.empty()) return;
  const std::string first = freed.front().first->name;
  std::unique_ptr<Model> model;
  try {
    model = load_model_from_file(path_, options_);
  } catch (const std::exception& ex) {
    fail(EPHOST_FAIL,
         "initializer '{}' was freed once every provider reading it had packed it, and reading it back from '{}' "
         "failed: {}. Create the session again",
         first, path_, ex.what());
  }
  std::unordered_map<std::string, const onnx::TensorProto*> in_file;
  for (const auto& init : model->proto->graph().initializer()) in_file[init.name()] = &init;
  std::string problems;
  for (auto& [e, t] : freed) {
    auto found = in_file.find(e->name);
    std::string problem;
    if (found == in_file.end()) {
      problem = "the model file no longer has it";
    } else {
      Tensor again = tensor_from_proto(*found->second);
      if (again.elem_type() != t->elem_type() || again.shape() != t->shape() || again.byte_size() != e->bytes ||
          initializer_hash(again.data(), e->bytes) != e->hash) {
        problem = "the model file no longer holds the same bytes (changed since the session was created?)";
      } else {
        t->adopt_data(std::move(again));
        e->released = false;
        continue;
      }
    }
    problems += fmt::format("{}initializer '{}': {}", problems.empty() ? "" : "; ", e->name, problem);
  }
  ++restores_;
  if (!problems.empty())
    fail(EPHOST_FAIL,
         "initializers freed once every provider reading them had packed them cannot be read back from '{}': {}. "
         "Create the session again",
         path_, problems);
}

size_t InitializerRelease::released_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const auto& [key, e] : entries_) n += e.released ? 1 : 0;
  return n;
}

size_t InitializerRelease::released_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const auto& [key, e] : entries_) n += e.released ? e.bytes : 0;
  return n;
}

size_t InitializerRelease::restores() const {
  std::lock_guard<std::mutex> lock(mu_);
  return restores_;
}

}  // namespace ephost
