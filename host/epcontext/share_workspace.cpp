#include "epcontext/share_workspace.h"

#include <vector>

namespace ephost {

ContextShareRegistry::Generation* ContextShareRegistry::generation(const std::string& plugin) {
  auto it = generations_.find(plugin);
  return it == generations_.end() ? nullptr : &it->second;
}

ContextShareRegistry::Generation& ContextShareRegistry::open_generation(const std::string& plugin,
                                                                       const std::string& bin_path,
                                                                       const std::string& model) {
  Generation& g = generations_[plugin];
  g.bin_path = bin_path;
  g.first_model = model;
  return g;
}

std::vector<std::string> ContextShareRegistry::open_generations() const {
  std::vector<std::string> out;
  for (const auto& kv : generations_) out.push_back(kv.first);
  return out;
}

std::optional<Bytes> ContextShareRegistry::take(const std::string& bin_path, const std::string& name) {
  auto file = loaded_.find(bin_path);
  if (file == loaded_.end()) return std::nullopt;
  auto it = file->second.find(name);
  if (it == file->second.end()) return std::nullopt;
  Bytes bytes = std::move(it->second);
  file->second.erase(it);
  if (file->second.empty()) loaded_.erase(file);
  return bytes;
}

void ContextShareRegistry::put(const std::string& bin_path, const std::string& name, Bytes bytes) {
  loaded_[bin_path][name] = std::move(bytes);
}

size_t ContextShareRegistry::waiting_graphs(const std::string& bin_path) const {
  auto it = loaded_.find(bin_path);
  return it == loaded_.end() ? 0 : it->second.size();
}

}  // namespace ephost
