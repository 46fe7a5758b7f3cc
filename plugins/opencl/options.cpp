#include "options.h"

namespace ephost_opencl {
namespace {

std::string trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

ProviderOptions ProviderOptions::parse(const ephost::sdk::Options& options) {
  ProviderOptions parsed;
  for (const auto& [key, value] : options) {
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
          ephost::sdk::fail(EPHOST_INVALID_ARGUMENT, "ep.opencl.device_types: '" + word +
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
