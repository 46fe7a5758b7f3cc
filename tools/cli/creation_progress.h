// A progress line on stderr while a session compiles (SetSessionProgressCallback): partitions' groups
// done of total, a bar and the time left, estimated from the pace so far. Drawn in place on a terminal
// once creation has taken a moment; with --progress also on a pipe, a line per tenth.
#pragma once

#include "ephost/ephost_cxx_api.h"

namespace ephost_cli {

enum class ProgressMode { kAuto, kAlways, kNever };

// Installs the progress line on `options` (kAuto: only when stderr is a terminal).
void attach_creation_progress(Ephost::SessionOptions& options, ProgressMode mode);

}  // namespace ephost_cli
