// Restores an environment variable when a test ends, for tests that set the variables discovery reads.
#pragma once

#include <stdlib.h>

#include <string>

namespace ephost {

class SavedEnv {
 public:
  explicit SavedEnv(const char* name) : name_(name) {
    const char* v = getenv(name);
    had_ = v != nullptr;
    if (had_) value_ = v;
  }
  ~SavedEnv() {
    if (had_) setenv(name_, value_.c_str(), 1);
    else unsetenv(name_);
  }
  SavedEnv(const SavedEnv&) = delete;
  SavedEnv& operator=(const SavedEnv&) = delete;

 private:
  const char* name_;
  bool had_ = false;
  std::string value_;
};

}  // namespace ephost
