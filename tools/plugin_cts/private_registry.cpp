#include "private_registry.h"

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace fs = std::filesystem;

namespace ephost_cts {
namespace {

// Set once by the PrivateRegistry in main, before any child is forked or env created.
std::string g_file;

}  // namespace

PrivateRegistry::PrivateRegistry() {
  std::error_code ec;
  fs::path base = fs::temp_directory_path(ec);
  if (ec) base = "/tmp";
  std::string pattern = (base / "ephost-plugin-cts-registry-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr)
    throw std::runtime_error("cannot create a private plugin registry folder " + pattern + ": " +
                             std::strerror(errno) + " (set TMPDIR to a writable folder)");
  folder_ = pattern;
  file_ = (fs::path(folder_) / "plugin-registry.json").string();
  // For libephost in this process and in every child (the children fork from here and exec nothing but
  // the plugin scanner, which inherits it too).
  setenv("EPHOST_PLUGIN_REGISTRY", file_.c_str(), 1);
  g_file = file_;
}

PrivateRegistry::~PrivateRegistry() {
  g_file.clear();
  std::error_code ec;
  fs::remove_all(folder_, ec);
}

const std::string& private_registry_file() { return g_file; }

}  // namespace ephost_cts
