// The files an EPContext generation writes, named as libephost (and ONNX Runtime) names them: the ctx
// model `<model>_ctx.onnx` beside the source model, and one `<model>_<provider>.bin` per provider beside
// the ctx model, `<model>` being the source file name without ".onnx". The compile tools use the names
// to refuse existing outputs before compiling anything and to say afterwards what was written.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace ephost_cli {

// "dir/model.onnx" -> "model"; a name without ".onnx" loses its last extension ("dir/net.pb" -> "net").
std::string model_stem(const std::string& model_path);
// "dir/model.onnx" -> "dir/model_ctx.onnx".
std::string default_ctx_path(const std::string& model_path);
// The binary of `provider` for a ctx model at `ctx_path` generated from `model_path` (embed mode 0).
std::string context_binary_path(const std::string& ctx_path, const std::string& model_path,
                                const std::string& provider);

// "512 B", "1.5 KiB", "12.0 MiB".
std::string size_string(uintmax_t bytes);

// Which of some paths a step wrote. libephost writes through a temp file and a rename, so a written
// file is new, or differs from before in size or modification time.
class WrittenFiles {
 public:
  explicit WrittenFiles(const std::vector<std::string>& candidates);
  // The candidates written since construction, in the order given, with their sizes.
  std::vector<std::pair<std::string, uintmax_t>> written() const;

 private:
  struct Stamp {
    bool exists = false;
    uintmax_t size = 0;
    std::filesystem::file_time_type mtime;
  };
  static Stamp stamp(const std::string& path);
  std::vector<std::string> candidates_;
  std::map<std::string, Stamp> before_;
};

}  // namespace ephost_cli
