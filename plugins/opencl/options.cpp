#include "options.h"

#include <cstdlib>
#include <utility>
#include <vector>

namespace ephost_opencl {
namespace {

std::string trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

ProviderOptions ProviderOptions::parse(const ephost::sdk::Options& options) {
  ProviderOptions parsed;
  std::vector<std::pair<std::string, std::string>> entries(options.begin(), options.end());
  bool given = false;
  for (const auto& entry : entries) given = given || entry.first == "device_types";
  // The environment's default comes first, so that a session's option overrides it.
  const char* env = std::getenv("EPHOST_OPENCL_DEVICE_TYPES");
  if (!given && env != nullptr && *env != '\0') entries.insert(entries.begin(), {"device_types", env});
  for (const auto& [key, value] : entries) {
    if (key == "device_types") {
      parsed.device_types.clear();
      parsed.device_types_text = value;
      size_t start = 0;
      while (start <= value.size()) {
        size_t comma = value.find(',', start);
        if (comma == std::string::npos) comma = value.size();
        const std::string word = trimmed(value.substr(start, comma - start));
        start = comma + 1;
        if (word.empty()) continue;
        if (word == "all") {
          parsed.device_types = {"cpu", "gpu", "accelerator"};
        } else if (word == "cpu" || word == "gpu" || word == "accelerator") {
          parsed.device_types.insert(word);
        } else {
          ephost::sdk::fail(EPHOST_INVALID_ARGUMENT, std::string(given ? "ep.opencl.device_types" : "EPHOST_OPENCL_DEVICE_TYPES") + ": '" + word +
                                                         "' is not a device type; use cpu, gpu, accelerator or all, "
                                                         "comma-separated");
        }
      }
    } else if (key != "intra_op_num_threads") {
      ephost::sdk::log(EPHOST_LOG_WARNING, "the OpenCL plugin ignores the unknown option ep.opencl." + key);
    }
  }
  return parsed;
}

}  // namespace ephost_opencl
