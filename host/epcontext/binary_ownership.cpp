#include "epcontext/binary_ownership.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>
#include <xxhash.h>

#include <boost/filesystem.hpp>
#include <climits>

#include "core/atomic_file.h"
#include "core/confined_path.h"
#include "core/error.h"
#include "epcontext/context_schema.h"

namespace ephost {
namespace fs = boost::filesystem;
namespace {

std::string string_attribute(const onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.s();
  return {};
}

int64_t int_attribute(const onnx::NodeProto& n, const char* name, int64_t fallback) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.i();
  return fallback;
}

// Whether `model` (in `folder`) refers to `binary` (canonical) and, as far as it recorded, to these bytes.
bool uses(const onnx::ModelProto& model, const std::string& folder, const std::string& binary,
          const std::string& checksum) {
  for (const auto& n : model.graph().node()) {
    if (n.op_type() != epctx::kOpType || n.domain() != epctx::kDomain) continue;
    if (int_attribute(n, epctx::kEmbedMode, 1) != 0) continue;
    const std::string reference = string_attribute(n, epctx::kCacheContext);
    std::string resolved;
    try {
      resolved = confine_path(folder, reference, "ep_cache_context");
    } catch (const Error&) {
      continue;
    }
    if (resolved != binary) continue;
    for (const auto& kv : model.metadata_props())
      if (kv.key() == binary_checksum_key(reference)) return kv.value() == checksum;
    return true;  // no checksum recorded: assume it is still this model's
  }
  return false;
}

}  // namespace

std::string binary_checksum_key(const std::string& reference) { return "ephost.context_binary_xxh64:" + reference; }

std::string binary_checksum(const Bytes& bytes) { return fmt::format("{:016x}", XXH64(bytes.data(), bytes.size(), 0)); }

std::string model_using_binary(const std::string& binary_path, const std::string& folder) {
  boost::system::error_code ec;
  const std::string binary = fs::weakly_canonical(fs::path(binary_path), ec).string();
  std::string checksum;
  try {
    const std::string bytes = read_whole_file(binary_path, "context binary");
    checksum = binary_checksum(Bytes(bytes.begin(), bytes.end()));
  } catch (const Error&) {
    return {};
  }
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.extension() != ".onnx" || !fs::is_regular_file(p, ec) || fs::file_size(p, ec) > static_cast<uintmax_t>(INT_MAX))
      continue;
    onnx::ModelProto model;
    try {
      if (!model.ParseFromString(read_whole_file(p.string(), "model"))) continue;
    } catch (const Error&) {
      continue;
    }
    if (uses(model, folder, binary, checksum)) return p.filename().string();
  }
  return {};
}

}  // namespace ephost
