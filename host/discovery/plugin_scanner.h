// Crash-isolated probing: the plugin scanner (host/scanner/, installed as
// <libdir>/ephost/ephost-plugin-scanner) probes libraries in a child process, as GStreamer's
// gst-plugin-scanner does, and reports back through a pipe. A library that crashes, aborts, exits or
// hangs there costs the child, never the host: it is recorded with that reason (which signal, which
// stage), the child is killed if it hangs, and a new child goes on with the libraries after it.
//
// Protocol (version kScannerProtocolVersion), one JSON object per line on the result pipe, child to
// parent; the plugins' own stdout and stderr go to a second pipe, never into the protocol:
//   {"hello": <protocol version>, "plugin_abi": [<min>, <max>]}       once, first
//   {"path": <path>, "stage": "load" | "negotiate" | "describe" | "devices"}  before each stage
//   {"path": <path>, "result": <probe result, plugin_probe_json.h>}    when a library is done
// The parent passes the libraries on the command line:
//   ephost-plugin-scanner --protocol <version> --result-fd <fd> -- <path>...
// and kills the child when one library takes longer than the timeout.
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "discovery/plugin_probe.h"

namespace ephost {

// 2: a device in a probe result carries host_memory_usable and memory_kinds.
// 3: a probe result lists the library's further providers (siblings: an ONNX Runtime plugin EP
// library's factories after the first).
inline constexpr int kScannerProtocolVersion = 3;
// File name of the scanner executable, installed in <directory of libephost>/ephost/.
inline constexpr const char* kScannerFileName = "ephost-plugin-scanner";
// Environment variable naming the scanner executable (overrides the installed one).
inline constexpr const char* kScannerEnv = "EPHOST_PLUGIN_SCANNER";

// The scanner the host uses: $EPHOST_PLUGIN_SCANNER when set, else the installed one beside libephost.
std::string default_scanner_path();

// The scanner cannot be used at all (missing, not executable): says nothing about any library.
class ScannerUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ScannerOptions {
  std::string scanner;                       // executable to run
  std::chrono::milliseconds timeout{10000};  // per library
};

// Probes each of `paths` in scanner child processes; one result per path, in order. Throws
// ScannerUnavailable when the scanner cannot be started; a scanner that starts but then fails in a
// way no library explains (a bad handshake, say) yields kScannerFailed results with the reason.
std::vector<ProbeResult> probe_in_scanner(const std::vector<std::string>& paths, const ScannerOptions& options);

// The child's side: the scanner executable's whole job, writing the protocol to `result_fd`.
// Returns the process exit code.
int run_scanner_child(const std::vector<std::string>& paths, int result_fd);

}  // namespace ephost
