// ephost-plugin-scanner: the child process of crash-isolated plugin probing (discovery/plugin_scanner.h).
// Not meant to be run by hand: libephost starts it with the libraries to probe, reads its answers from
// the pipe on --result-fd, and kills it when a library hangs.
//
//   ephost-plugin-scanner --protocol <version> --result-fd <fd> -- <library>...
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "discovery/plugin_scanner.h"

namespace {

int usage(const char* why) {
  std::fprintf(stderr,
               "ephost-plugin-scanner: %s\n"
               "usage: ephost-plugin-scanner --protocol %d --result-fd FD -- LIBRARY...\n"
               "(a helper of libephost: it probes plugin libraries in a process of their own)\n",
               why, ephost::kScannerProtocolVersion);
  return 64;
}

}  // namespace

int main(int argc, char** argv) {
  // When the host goes away, so does the probing it asked for (a hung plugin included).
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // A plugin that crashes while probed is reported, not dumped: no core files in the user's folder and
  // no time spent writing them.
  const struct rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  int protocol = -1, fd = -1;
  std::vector<std::string> paths;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (i + 1 >= argc) return usage(("missing value after " + arg).c_str());
    if (arg == "--protocol") protocol = std::atoi(argv[++i]);
    else if (arg == "--result-fd") fd = std::atoi(argv[++i]);
    else return usage(("unknown argument " + arg).c_str());
  }
  for (; i < argc; ++i) paths.emplace_back(argv[i]);
  if (protocol != ephost::kScannerProtocolVersion)
    return usage(("protocol " + std::to_string(protocol) + " asked for").c_str());
  if (fd < 3 || ::fcntl(fd, F_GETFD) < 0) return usage("--result-fd must name an open descriptor above 2");
  // Processes a plugin starts do not inherit the protocol pipe.
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  return ephost::run_scanner_child(paths, fd);
}
