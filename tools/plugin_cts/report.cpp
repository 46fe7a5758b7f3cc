#include "report.h"

#include <ostream>

namespace ephost_cts {

const char* outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPass: return "PASS";
    case Outcome::kFail: return "FAIL";
    default: return "SKIP";
  }
}

nlohmann::json to_json(const Check& c) {
  return {{"section", c.section}, {"name", c.name}, {"outcome", outcome_name(c.outcome)}, {"detail", c.detail}};
}

Check check_from_json(const nlohmann::json& j) {
  Check c;
  c.section = j.at("section").get<std::string>();
  c.name = j.at("name").get<std::string>();
  const std::string o = j.at("outcome").get<std::string>();
  c.outcome = o == "PASS" ? Outcome::kPass : o == "FAIL" ? Outcome::kFail : Outcome::kSkip;
  c.detail = j.value("detail", "");
  return c;
}

bool Report::failed() const {
  for (const Check& c : checks_)
    if (c.outcome == Outcome::kFail) return true;
  return false;
}

namespace {
struct Tally {
  size_t passed = 0, failed = 0, skipped = 0;
};
Tally tally(const std::vector<Check>& checks, const std::string& section) {
  Tally t;
  for (const Check& c : checks) {
    if (c.section != section) continue;
    (c.outcome == Outcome::kPass ? t.passed : c.outcome == Outcome::kFail ? t.failed : t.skipped)++;
  }
  return t;
}
}  // namespace

void Report::print(std::ostream& out, const std::vector<std::string>& sections, bool verbose) const {
  for (const std::string& section : sections) {
    for (const Check& c : checks_)
      if (c.section == section && (verbose || c.outcome == Outcome::kFail))
        out << outcome_name(c.outcome) << " " << section << "/" << c.name << (c.detail.empty() ? "" : ": ")
            << c.detail << "\n";
  }
  size_t passed = 0, failed = 0, skipped = 0;
  for (const std::string& section : sections) {
    const Tally t = tally(checks_, section);
    out << section << ": " << t.passed << " passed, " << t.failed << " failed, " << t.skipped << " skipped\n";
    passed += t.passed;
    failed += t.failed;
    skipped += t.skipped;
  }
  out << "verdict: " << (failed ? "FAIL" : "PASS") << "\n" << passed << " passed, " << failed << " failed, " << skipped
      << " skipped" << std::endl;
}

nlohmann::json Report::to_json(const std::string& plugin, const std::vector<std::string>& sections) const {
  nlohmann::json summary = nlohmann::json::object();
  for (const std::string& section : sections) {
    const Tally t = tally(checks_, section);
    summary[section] = {{"passed", t.passed}, {"failed", t.failed}, {"skipped", t.skipped}};
  }
  nlohmann::json checks = nlohmann::json::array();
  for (const Check& c : checks_) checks.push_back(ephost_cts::to_json(c));
  return {{"plugin", plugin}, {"verdict", failed() ? "FAIL" : "PASS"}, {"sections", summary}, {"checks", checks}};
}

}  // namespace ephost_cts
