// Relative paths that a model names (external data locations, EPContext binaries, the source model
// of an EPContext model) resolved inside one folder: absolute paths, `..` components and symlinks
// that lead outside are refused, so a model can never make the host read or write elsewhere.
#pragma once

#include <string>

namespace ephost {

// Resolves `relative` (as written in the model; '\' is taken as '/') against `base_dir` and returns
// the canonical path (which need not exist). Throws EPHOST_INVALID_GRAPH naming `what` (e.g.
// "tensor 'w' external data location") when the path is empty, absolute, contains a NUL or `..`, or
// resolves (through symlinks) outside `base_dir`.
std::string confine_path(const std::string& base_dir, const std::string& relative, const std::string& what);

}  // namespace ephost
