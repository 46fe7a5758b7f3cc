// Writing files so that a crash or a concurrent reader never sees half of one: the bytes go to a
// unique temporary file in the destination folder, are flushed, and the temporary is renamed over
// the destination (atomic on POSIX file systems).
#pragma once

#include <cstddef>
#include <string>

namespace ephost {

// Temporary files are named ".<file>.tmp-<pid>-XXXXXX"; one whose writer process is gone (killed
// mid-write) is removed the next time the same file is written.
//
// Writes `size` bytes to `path` atomically. With overwrite=false an existing `path` is an
// EPHOST_FAIL error that names it (and nothing is written). Missing parent folders are created.
// Errors: EPHOST_FAIL with the path and the system's reason.
void write_file_atomically(const std::string& path, const void* data, size_t size, bool overwrite);

// Reads a whole file. EPHOST_NO_SUCHFILE when it does not exist, EPHOST_FAIL when it cannot be read.
std::string read_whole_file(const std::string& path, const std::string& what);

}  // namespace ephost
