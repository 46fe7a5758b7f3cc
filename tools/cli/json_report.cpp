#include "json_report.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "ephost/ephost_cxx_api.h"
#include "text_table.h"

namespace ephost_cli {

namespace {

using Json = nlohmann::ordered_json;

bool is_scalar_array(const Json& v) {
  if (!v.is_array()) return false;
  for (const auto& e : v)
    if (e.is_structured()) return false;
  return true;
}

// An object whose members are all scalars or arrays of scalars: one table row.
bool is_flat_object(const Json& v) {
  if (!v.is_object()) return false;
  for (const auto& [k, m] : v.items())
    if (m.is_structured() && !is_scalar_array(m)) return false;
  return true;
}

std::string scalar_text(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "-";
  if (v.is_array()) {
    std::string s;
    for (const auto& e : v) s += (s.empty() ? "" : ", ") + scalar_text(e);
    return s.empty() ? "-" : s;
  }
  return v.dump();
}

// What to call element `i` of an array named `title`: its own "name"-like member when it has one.
std::string element_title(const Json& e, const std::string& title, size_t i) {
  for (const char* key : {"name", "graph", "provider", "id"}) {
    if (e.is_object() && e.contains(key) && e[key].is_string()) return title + " '" + e[key].get<std::string>() + "'";
  }
  return title + " [" + std::to_string(i) + "]";
}

void render(std::ostream& os, const Json& v, const std::string& title, const std::string& indent);

void render_array(std::ostream& os, const Json& arr, const std::string& title, const std::string& indent) {
  if (arr.empty()) {
    os << indent << title << ": (none)\n";
    return;
  }
  if (is_scalar_array(arr)) {
    os << indent << title << ": " << scalar_text(arr) << "\n";
    return;
  }
  bool flat = true;
  for (const auto& e : arr) flat = flat && is_flat_object(e);
  if (flat) {
    std::vector<std::string> columns;
    for (const auto& e : arr)
      for (const auto& [k, m] : e.items())
        if (std::find(columns.begin(), columns.end(), k) == columns.end()) columns.push_back(k);
    // Identifying columns first, whatever order the library's JSON object keeps.
    static const std::vector<std::string> kFirst = {"name", "node", "graph", "op_type", "provider"};
    auto rank = [](const std::string& k) {
      return static_cast<size_t>(std::find(kFirst.begin(), kFirst.end(), k) - kFirst.begin());
    };
    std::stable_sort(columns.begin(), columns.end(),
                     [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
    TextTable table(columns);
    for (const auto& e : arr) {
      std::vector<std::string> row;
      for (const auto& c : columns) row.push_back(e.contains(c) ? scalar_text(e[c]) : "");
      table.add_row(std::move(row));
    }
    os << indent << title << " (" << arr.size() << "):\n";
    table.print(os, indent + "  ");
    return;
  }
  for (size_t i = 0; i < arr.size(); ++i) render(os, arr[i], element_title(arr[i], title, i), indent);
}

void render(std::ostream& os, const Json& v, const std::string& title, const std::string& indent) {
  if (v.is_array()) {
    render_array(os, v, title, indent);
    return;
  }
  if (!v.is_object()) {
    os << indent << title << ": " << scalar_text(v) << "\n";
    return;
  }
  os << indent << title << ":\n";
  const std::string inner = indent + "  ";
  // Scalars first, then summaries (flat objects and tables), then nested structures; each group in
  // the library's order.
  auto flat_table = [](const Json& m) {
    if (!m.is_array()) return false;
    for (const auto& e : m)
      if (!is_flat_object(e)) return false;
    return true;
  };
  for (const auto& [k, m] : v.items())
    if (!m.is_structured() || is_scalar_array(m))
      os << inner << k << ": " << (m.is_array() && m.empty() ? "(none)" : scalar_text(m)) << "\n";
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& [k, m] : v.items()) {
      if (!m.is_structured() || is_scalar_array(m)) continue;
      const bool summary = is_flat_object(m) || flat_table(m);
      if (summary != (pass == 0)) continue;
      if (m.is_object()) render(os, m, k, inner);
      else render_array(os, m, k, inner);
    }
  }
}

}  // namespace

void print_json_report(std::ostream& os, const std::string& json_text, const std::string& title) {
  Json j;
  try {
    j = Json::parse(json_text);
  } catch (const std::exception& e) {
    throw Ephost::Exception(EPHOST_FAIL, title + " is not valid JSON: " + e.what());
  }
  render(os, j, title, "");
}

}  // namespace ephost_cli
