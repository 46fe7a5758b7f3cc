// Objects the host hands a plugin that live as long as the plugin call they were asked for in (type
// infos of graph values, initializer values): ONNX Runtime's graph handles are valid only during
// GetCapability or Compile, and so is what the host makes for them. The adapter opens a CallArena
// around each such call; what is made inside belongs to the innermost open arena of the thread, or,
// outside any (a plugin calling from a thread of its own), to a process-wide one that is never freed.
#pragma once

#include <memory>
#include <vector>

namespace ephost::ort_ep {

class CallArena {
 public:
  CallArena();
  ~CallArena();
  CallArena(const CallArena&) = delete;
  CallArena& operator=(const CallArena&) = delete;

  // Keeps `object` until the innermost open arena closes; returns it.
  template <typename T>
  static T* keep(std::unique_ptr<T> object) {
    T* raw = object.get();
    current().held_.push_back(std::shared_ptr<void>(std::move(object)));
    return raw;
  }

 private:
  static CallArena& current();
  std::vector<std::shared_ptr<void>> held_;
  CallArena* outer_ = nullptr;
};

}  // namespace ephost::ort_ep
