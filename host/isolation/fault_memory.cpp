#include "isolation/fault_memory.h"

#include <sys/stat.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <vector>

#include <fmt/format.h>

#include "core/atomic_file.h"

namespace ephost {
namespace {

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (size_t tab; (tab = line.find('\t', start)) != std::string::npos; start = tab + 1)
    fields.push_back(line.substr(start, tab - start));
  fields.push_back(line.substr(start));
  return fields;
}

std::string canonical_or_empty(const std::string& path) {
  std::error_code ec;
  std::filesystem::path canonical = std::filesystem::canonical(path, ec);
  return ec ? std::string() : canonical.string();
}

// Whether a journal line (fields `f`) is about one of `plugins`: any line when no plugins are named or
// the line names none (a journal older than the plugin field).
bool about_plugins(const std::vector<std::string>& f, const std::vector<std::string>& plugins) {
  if (plugins.empty() || f.size() < 6 || f[5].empty()) return true;
  return std::find(plugins.begin(), plugins.end(), f[5]) != plugins.end();
}

}  // namespace

std::optional<RememberedFault> remembered_fault(const std::string& journal, const std::string& canonical_library,
                                                const std::vector<std::string>& plugins) {
  if (journal.empty() || canonical_library.empty()) return std::nullopt;
  trim_fault_journal(journal);
  std::ifstream in(journal);
  if (!in) return std::nullopt;
  std::optional<RememberedFault> last;
  std::string line;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = split_tabs(line);
    if ((f.size() != 5 && f.size() != 6) || (f[0] != "crashed" && f[0] != "hung" && f[0] != "returned")) continue;
    if (!about_plugins(f, plugins)) continue;
    if (f[3] != canonical_library && canonical_or_empty(f[3]) != canonical_library) continue;
    if (f[0] == "returned") {  // the hang journaled before it was a slow call that came back
      if (last && last->kind == "hung" && last->call == f[4]) last.reset();
      continue;
    }
    RememberedFault fault{f[0], std::strtoll(f[1].c_str(), nullptr, 10), f[2], f[4]};
    if (!last || fault.at >= last->at) last = std::move(fault);
  }
  struct stat st {};
  if (last && ::stat(canonical_library.c_str(), &st) == 0 && st.st_mtime > last->at) return std::nullopt;
  return last;
}

void trim_fault_journal(const std::string& journal, size_t max_bytes) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(journal, ec);
  if (ec || size <= max_bytes) return;
  try {
    const std::string text = read_whole_file(journal, "the fault journal");
    // The newest lines, from the first whole line of the last half.
    size_t from = text.size() > max_bytes / 2 ? text.size() - max_bytes / 2 : 0;
    if (from > 0) {
      const size_t newline = text.find('\n', from - 1);
      from = newline == std::string::npos ? text.size() : newline + 1;
    }
    write_file_atomically(journal, text.data() + from, text.size() - from, true);
  } catch (const std::exception&) {
    // Left as it is: the next reader tries again.
  }
}

std::string describe_remembered_fault(const RememberedFault& fault) {
  const std::time_t at = static_cast<std::time_t>(fault.at);
  std::tm utc{};
  gmtime_r(&at, &utc);
  char when[32];
  std::strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &utc);
  if (fault.kind == "hung")
    return fmt::format("hung in process at {} in {} (no return after {})", when, fault.call, fault.detail);
  return fmt::format("crashed in process at {} in {} ({})", when, fault.call, fault.detail);
}

}  // namespace ephost
