#include "epcontext_files.h"

#include <fmt/format.h>

namespace fs = std::filesystem;

namespace ephost_cli {

std::string model_stem(const std::string& model_path) {
  const std::string name = fs::path(model_path).filename().string();
  const std::string suffix = ".onnx";
  if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
    return name.substr(0, name.size() - suffix.size());
  return fs::path(model_path).stem().string();
}

std::string default_ctx_path(const std::string& model_path) {
  return (fs::path(model_path).parent_path() / (model_stem(model_path) + "_ctx.onnx")).string();
}

std::string context_binary_path(const std::string& ctx_path, const std::string& model_path,
                                const std::string& provider) {
  return (fs::path(ctx_path).parent_path() / (model_stem(model_path) + "_" + provider + ".bin")).string();
}

std::string size_string(uintmax_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (bytes < 1024 * 1024) return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / 1024.0);
  if (bytes < 1024ull * 1024 * 1024) return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
}

WrittenFiles::WrittenFiles(const std::vector<std::string>& candidates) {
  for (const std::string& path : candidates)
    if (before_.emplace(path, stamp(path)).second) candidates_.push_back(path);
}

WrittenFiles::Stamp WrittenFiles::stamp(const std::string& path) {
  Stamp s;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return s;
  s.size = fs::file_size(path, ec);
  if (ec) return s;
  s.mtime = fs::last_write_time(path, ec);
  s.exists = !ec;
  return s;
}

std::vector<std::pair<std::string, uintmax_t>> WrittenFiles::written() const {
  std::vector<std::pair<std::string, uintmax_t>> out;
  for (const std::string& path : candidates_) {
    const Stamp now = stamp(path);
    if (!now.exists) continue;
    const Stamp& then = before_.at(path);
    if (!then.exists || then.size != now.size || then.mtime != now.mtime) out.emplace_back(path, now.size);
  }
  return out;
}

}  // namespace ephost_cli
