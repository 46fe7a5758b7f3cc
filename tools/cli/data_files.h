// Reading the files that --inputs and `ephost test` name as carefully as libephost reads a model:
// only regular files (a FIFO or a device is refused, and the open never blocks on one), and external
// data confined to the folder of the .pb file that names it: no absolute paths, no `..`, no symlink
// that leads outside. A test case can never read /etc/passwd into its outputs.
#pragma once

#include <cstdint>
#include <string>

namespace ephost_cli {

// The whole file. Throws Ephost::Exception: NO_SUCHFILE when it does not exist, INVALID_ARGUMENT when
// it is not a regular file, FAIL when it cannot be read. `what` names it in errors.
std::string read_regular_file(const std::string& path, const std::string& what);

// `length` bytes at `offset` (length < 0: to the end). Throws like read_regular_file, and
// INVALID_PROTOBUF when the range lies outside the file.
std::string read_regular_file_range(const std::string& path, int64_t offset, int64_t length, const std::string& what);

// `location` (as a TensorProto's external data names it) resolved inside `base_dir`. Throws
// INVALID_PROTOBUF when it is empty, absolute, contains `..` or a NUL, or resolves outside `base_dir`.
std::string confined_data_path(const std::string& base_dir, const std::string& location, const std::string& what);

}  // namespace ephost_cli
