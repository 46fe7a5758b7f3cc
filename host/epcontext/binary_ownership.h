// Which ctx model a context binary belongs to. A compile killed between renaming the binary into place
// and renaming its ctx model leaves a binary that no model uses; the next compile of the same model
// may replace it without --force. A binary a ctx model still uses is never replaced without it: each
// ctx model ephost writes records the XXH64 of every binary it refers to (metadata_props
// "ephost.context_binary_xxh64:<file>"), so a model whose recorded checksum differs from the file's
// does not use that file any more (it was replaced since), and a model that records none (written
// elsewhere, or a weight-sharing group's earlier member) counts as using it.
#pragma once

#include <string>
#include <vector>

#include "epcontext/context_binary.h"

namespace ephost {

// The metadata_props key under which a ctx model records the checksum of binary `reference` (as
// ep_cache_context names it).
std::string binary_checksum_key(const std::string& reference);

// XXH64 of `bytes` in 16 lowercase hex digits.
std::string binary_checksum(const Bytes& bytes);

// The file name of a model in `folder` (*.onnx) that uses the binary at `binary_path`, or "" when none
// does: the binary is an orphan. Models that cannot be read are skipped.
std::string model_using_binary(const std::string& binary_path, const std::string& folder);

}  // namespace ephost
