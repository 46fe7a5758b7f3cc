// The verdict: checks grouped by section, each PASS, FAIL or SKIP with what decided it; printed as a
// human summary ("N passed, N failed, N skipped" per section) or as JSON.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ephost_cts {

enum class Outcome { kPass, kFail, kSkip };
const char* outcome_name(Outcome outcome);  // "PASS", "FAIL", "SKIP"

struct Check {
  std::string section;  // "abi", "numerical", "epcontext"
  std::string name;     // e.g. "negotiation/future host [2,9]", "test_add"
  Outcome outcome = Outcome::kPass;
  std::string detail;   // why it failed or was skipped; for a pass, what was seen
};
nlohmann::json to_json(const Check& check);
Check check_from_json(const nlohmann::json& j);

class Report {
 public:
  void add(Check check) { checks_.push_back(std::move(check)); }
  const std::vector<Check>& checks() const { return checks_; }
  bool failed() const;
  // FAIL lines (every line with `verbose`), then per section "N passed, N failed, N skipped".
  void print(std::ostream& out, const std::vector<std::string>& sections, bool verbose) const;
  nlohmann::json to_json(const std::string& plugin, const std::vector<std::string>& sections) const;

 private:
  std::vector<Check> checks_;
};

}  // namespace ephost_cts
