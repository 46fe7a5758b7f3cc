#include "text_table.h"

#include <algorithm>

namespace ephost_cli {

void TextTable::print(std::ostream& os, const std::string& indent, size_t max_cell) const {
  auto cut = [&](const std::string& s) {
    std::string one_line = s;
    std::replace(one_line.begin(), one_line.end(), '\n', ' ');
    if (one_line.size() <= max_cell || max_cell < 4) return one_line;
    return one_line.substr(0, max_cell - 3) + "...";
  };
  size_t ncols = header_.size();
  for (const auto& r : rows_) ncols = std::max(ncols, r.size());
  std::vector<size_t> width(ncols, 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], cut(row[c]).size());
  };
  measure(header_);
  for (const auto& r : rows_) measure(r);
  auto line = [&](const std::vector<std::string>& row) {
    std::string out = indent;
    for (size_t c = 0; c < ncols; ++c) {
      std::string cell = c < row.size() ? cut(row[c]) : "";
      if (c + 1 < ncols) cell.resize(width[c], ' ');
      out += cell;
      if (c + 1 < ncols) out += "  ";
    }
    out.erase(out.find_last_not_of(' ') + 1);
    os << out << "\n";
  };
  line(header_);
  std::string rule = indent;
  for (size_t c = 0; c < ncols; ++c) rule += std::string(width[c], '-') + (c + 1 < ncols ? "  " : "");
  os << rule << "\n";
  for (const auto& r : rows_) line(r);
}

}  // namespace ephost_cli
