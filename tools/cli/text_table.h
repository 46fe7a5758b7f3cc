// A plain-text table: columns padded to their widest cell, a header line and a rule.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace ephost_cli {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void add_row(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  bool empty() const { return rows_.empty(); }
  // Each line starts with `indent`. Cells longer than `max_cell` are cut with "...".
  void print(std::ostream& os, const std::string& indent = "", size_t max_cell = 80) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace ephost_cli
