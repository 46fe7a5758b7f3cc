// A main for the fuzz harnesses when they are not built with libFuzzer (the ordinary build): runs
// the harness over each file given, or every file in each folder given (the seed corpus and the
// regression inputs of tests/fuzz/regressions/), so that CTest replays them with any compiler.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_support.h"

namespace fs = std::filesystem;

namespace {

int replay(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  int count = 0;
  for (int i = 1; i < argc; ++i) {
    const fs::path p(argv[i]);
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<fs::path> files;
      for (const auto& e : fs::recursive_directory_iterator(p, ec))
        if (e.is_regular_file()) files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const auto& f : files) count += replay(f);
    } else if (fs::exists(p, ec)) {
      count += replay(p);
    }
  }
  if (count == 0) {
    // A replay of nothing proves nothing: a missing or empty folder is a broken checkout or test setup.
    std::fprintf(stderr, "no inputs to replay in the paths given: each harness keeps its regression inputs in "
                         "tests/fuzz/regressions/<harness>/\n");
    return 1;
  }
  std::printf("replayed %d inputs without a crash\n", count);
  return 0;
}
