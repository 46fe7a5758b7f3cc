#include "core/confined_path.h"

#include <algorithm>
#include <boost/filesystem.hpp>
#include <vector>

#include "core/error.h"

namespace ephost {
namespace fs = boost::filesystem;
namespace {

std::vector<std::string> components(const fs::path& p) {
  std::vector<std::string> parts;
  for (const auto& part : p) {
    std::string s = part.string();
    if (!s.empty() && s != ".") parts.push_back(std::move(s));  // weakly_canonical may keep a trailing "."
  }
  return parts;
}

// Whether `p` lies inside folder `base` (both canonical).
bool is_within(const fs::path& base, const fs::path& p) {
  std::vector<std::string> b = components(base), q = components(p);
  return q.size() > b.size() && std::equal(b.begin(), b.end(), q.begin());
}

}  // namespace

std::string confine_path(const std::string& base_dir, const std::string& relative, const std::string& what) {
  std::string generic = relative;
  std::replace(generic.begin(), generic.end(), '\\', '/');  // a Windows-written model
  if (generic.empty()) fail(EPHOST_INVALID_GRAPH, "{} is empty", what);
  if (generic.find('\0') != std::string::npos) fail(EPHOST_INVALID_GRAPH, "{} contains a NUL byte", what);
  fs::path loc(generic);
  if (loc.is_absolute() || loc.has_root_directory() || loc.has_root_name() || generic[0] == '/' ||
      (generic.size() > 1 && generic[1] == ':'))
    fail(EPHOST_INVALID_GRAPH, "{} '{}' is an absolute path; it must be relative to the model's folder", what,
         relative);
  for (const auto& part : loc)
    if (part == "..")
      fail(EPHOST_INVALID_GRAPH, "{} '{}' leaves the model's folder ('..' is not allowed)", what, relative);
  try {
    fs::path base = fs::weakly_canonical(fs::absolute(base_dir.empty() ? fs::path(".") : fs::path(base_dir)));
    fs::path full = fs::weakly_canonical(base / loc);
    if (!is_within(base, full))
      fail(EPHOST_INVALID_GRAPH, "{} '{}' resolves to '{}', outside the model's folder '{}'", what, relative,
           full.string(), base.string());
    return full.string();
  } catch (const fs::filesystem_error& e) {
    fail(EPHOST_INVALID_GRAPH, "{} '{}': {}", what, relative, e.what());
  }
}

}  // namespace ephost
