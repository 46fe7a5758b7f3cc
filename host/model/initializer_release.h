// Freeing initializers every reader is done with, and reading them back when they are needed again.
//
// A provider that packs a weight into its own form (the CPU plugin's reordered int8 and f32 GEMM and
// conv weights) no longer reads the host's bytes: it says so through plugin ABI 5's
// value_initializer_done, as ONNX Runtime's kernels say PrePack's is_packed. The session then frees an
// initializer's bytes (session/initializer_freeing.h decides when) if they can be had again: only
// main-graph initializers read from a model file are candidates, since the file can be read again (a
// model from a buffer keeps its bytes: the application's buffer may be gone). A later need (the session
// planning again after a provider fell back, a provider asking for the data again, EPContext writing)
// reads the model file once and puts back every freed initializer, each checked against a hash taken
// when it was freed: a changed file is a clear error, never other bytes.
//
// Who read what: the provider door (host/provider/) names the provider whose call runs on a thread
// (InitializerReaderScope), and value_initializer_data notes each handout; an initializer handed to a
// reader the host cannot name (a call from a thread of the plugin's own, an ONNX Runtime plugin EP's
// graph view) is never freed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/tensor.h"
#include "model/loader.h"

namespace ephost {

// The provider whose call runs on this thread, as initializer readers are named (the plugin's
// EphostProvider handle for a native provider), for the scope's lifetime.
class InitializerReaderScope {
 public:
  explicit InitializerReaderScope(const void* reader);
  ~InitializerReaderScope();
  InitializerReaderScope(const InitializerReaderScope&) = delete;
  InitializerReaderScope& operator=(const InitializerReaderScope&) = delete;

 private:
  const void* outer_;
};
// Null when no provider call runs on this thread.
const void* current_initializer_reader();

// The step being made on this thread (the fused group's view in compile, the node in kernel_create),
// for the scope's lifetime: a provider that says it is done during that call is done for that step.
class InitializerStepScope {
 public:
  explicit InitializerStepScope(const void* step);
  ~InitializerStepScope();
  InitializerStepScope(const InitializerStepScope&) = delete;
  InitializerStepScope& operator=(const InitializerStepScope&) = delete;

 private:
  const void* outer_;
};
// Null when no step is being made on this thread.
const void* current_initializer_step();

// The providers that may name themselves in value_initializer_done: a native provider is one from
// its creation until just before its plugin releases it. A handle the host never made, or one of a
// provider already released (a plugin calling after its session ended), is refused without reading
// anything through it.
void add_live_initializer_reader(const void* provider);
void remove_live_initializer_reader(const void* provider);
bool is_live_initializer_reader(const void* provider);

// A reader of an initializer: a provider, and the step of that provider (null: all of its steps).
struct InitializerReader {
  const void* provider = nullptr;
  const void* step = nullptr;
  bool operator==(const InitializerReader& o) const { return provider == o.provider && step == o.step; }
};

// A 64-bit hash of `bytes` bytes at `data` (what a freed initializer is checked against).
uint64_t initializer_hash(const void* data, size_t bytes);

class InitializerRelease : public TensorRestorer, public std::enable_shared_from_this<InitializerRelease> {
 public:
  // For the model file at `path` (made absolute now: the application may change its working folder),
  // read again with `options` (checker and inference off). An empty path (a model from a buffer) frees
  // nothing.
  InitializerRelease(std::string path, LoadOptions options);

  // Main-graph initializer `name` holds the bytes the model file gives it: a candidate.
  void add_from_file(const std::string& name, const std::shared_ptr<Tensor>& tensor);
  // `reader` (its provider null: one the host cannot name) was handed `tensor`'s data: that provider
  // must be done before the bytes go, and what it said it was done with for that step (every step,
  // when the step is null) no longer counts: it holds a view again.
  void note_handout(const Tensor* tensor, InitializerReader reader);
  // `reader` (a step of a provider, or with a null step all of them) will not read `tensor`'s data
  // again. False when `tensor` is no candidate (nothing to do).
  bool note_done(const Tensor* tensor, InitializerReader reader);
  // Frees `tensor`'s bytes when it is a candidate still holding them, something is done with it,
  // every reader in `step_readers` (the steps that read it; a null provider: a reader that cannot say)
  // is done and was handed its data (a provider that says it is done with bytes it never asked for
  // reads them through its step's inputs, if at all: they stay), and every provider it was handed to
  // is done with something. Returns the bytes freed (0: kept).
  size_t release_if_done(const Tensor* tensor, const std::vector<InitializerReader>& step_readers);

  // A copy of `tensor` sharing its bytes, made under the lock that restoring takes (so never torn by a
  // restore on another thread); an empty Tensor when its bytes are freed now.
  Tensor copy_if_held(const Tensor& tensor) const;

  // Reads the model file once and gives every freed initializer its bytes back. Throws FAIL naming the
  // initializer when the file cannot be read or no longer holds the same bytes (that one stays freed).
  void restore_all() override;

  // Diagnostics (tests, the log): what is freed now, and how often bytes were read back.
  size_t released_count() const;
  size_t released_bytes() const;
  size_t restores() const;

 private:
  struct Entry {
    std::string name;
    std::weak_ptr<Tensor> tensor;
    std::vector<const void*> handed_to;  // providers
    std::vector<InitializerReader> done_by;
    bool released = false;
    uint64_t hash = 0;
    size_t bytes = 0;
  };

  // The entry of `tensor` while that tensor lives (under mu_); a dead tensor's entry is dropped.
  Entry* live_entry(const Tensor* tensor);

  std::string path_;
  LoadOptions options_;
  mutable std::mutex mu_;
  std::unordered_map<const Tensor*, Entry> entries_;
  size_t restores_ = 0;
};

}  // namespace ephost
