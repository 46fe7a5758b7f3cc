#include "memory_picture.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <sstream>

#include "ephost/ephost_cxx_api.h"

namespace ephost_cli {

namespace {

using json = nlohmann::json;

constexpr double kWidth = 960, kPanelHeight = 320, kLeft = 90, kRight = 20, kTop = 46, kBottom = 40;

std::string escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string bytes_text(int64_t b) {
  char buf[48];
  if (b >= (int64_t{1} << 20)) std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(b) / (1 << 20));
  else if (b >= 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(b) / 1024);
  else std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(b));
  return buf;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// A stable pastel colour per value name.
std::string color_of(const std::string& name) {
  const size_t h = std::hash<std::string>{}(name);
  char buf[32];
  std::snprintf(buf, sizeof buf, "hsl(%zu,60%%,%zu%%)", h % 360, 62 + (h / 360) % 16);
  return buf;
}

struct Panel {
  std::string title;
  std::string device;
  int64_t bytes = 0;
  int64_t min_bytes = 0;
  const json* pattern = nullptr;
};

void draw_panel(std::ostream& svg, const Panel& p, double y0) {
  const json& steps = (*p.pattern)["steps"];
  const double n = static_cast<double>(std::max<size_t>(steps.size(), 1));
  const double plot_w = kWidth - kLeft - kRight, plot_h = kPanelHeight - kTop - kBottom;
  const double scale_y = p.bytes > 0 ? plot_h / static_cast<double>(p.bytes) : 0;
  auto x_of = [&](double step) { return kLeft + plot_w * step / n; };
  auto y_of = [&](double offset) { return y0 + kTop + plot_h - offset * scale_y; };

  svg << "<text x=\"" << kLeft << "\" y=\"" << num(y0 + 18) << "\" font-size=\"13\" font-weight=\"bold\">"
      << escaped(p.title) << "</text>\n";
  svg << "<text x=\"" << kLeft << "\" y=\"" << num(y0 + 34) << "\" font-size=\"11\" fill=\"#444\">block on "
      << escaped(p.device) << ": " << bytes_text(p.bytes) << "; busiest step needs " << bytes_text(p.min_bytes)
      << " (" << (p.bytes > 0 ? num(100.0 * static_cast<double>(p.min_bytes) / static_cast<double>(p.bytes)) : "0")
      << "% of the block)</text>\n";
  // Frame and axes.
  svg << "<rect x=\"" << kLeft << "\" y=\"" << num(y0 + kTop) << "\" width=\"" << plot_w << "\" height=\"" << plot_h
      << "\" fill=\"#fafafa\" stroke=\"#999\"/>\n";
  for (int t = 0; t <= 4; ++t) {
    const double off = static_cast<double>(p.bytes) * t / 4;
    svg << "<text x=\"" << num(kLeft - 6) << "\" y=\"" << num(y_of(off) + 4)
        << "\" font-size=\"10\" text-anchor=\"end\">" << bytes_text(static_cast<int64_t>(off)) << "</text>\n";
  }
  const size_t tick = std::max<size_t>(1, steps.size() / 10);
  for (size_t s = 0; s < steps.size(); s += tick)
    svg << "<text x=\"" << num(x_of(static_cast<double>(s) + 0.5)) << "\" y=\"" << num(y0 + kTop + plot_h + 14)
        << "\" font-size=\"10\" text-anchor=\"middle\">" << s << "<title>" << escaped(steps[s].get<std::string>())
        << "</title></text>\n";
  svg << "<text x=\"" << num(kLeft + plot_w / 2) << "\" y=\"" << num(y0 + kTop + plot_h + 30)
      << "\" font-size=\"11\" text-anchor=\"middle\">step (plan order)</text>\n";
  // Values.
  for (const json& v : (*p.pattern)["values"]) {
    if (v.value("device", "") != p.device) continue;
    const int64_t first = v.value("first_step", 0), last = std::max(first, v.value("last_step", first));
    const int64_t offset = v.value("offset", 0), bytes = v.value("bytes", 0);
    const std::string name = v.value("value", "");
    svg << "<rect x=\"" << num(x_of(static_cast<double>(first))) << "\" y=\"" << num(y_of(static_cast<double>(offset + bytes)))
        << "\" width=\"" << num(std::max(1.0, x_of(static_cast<double>(last + 1)) - x_of(static_cast<double>(first))))
        << "\" height=\"" << num(std::max(0.5, static_cast<double>(bytes) * scale_y)) << "\" fill=\"" << color_of(name)
        << "\" stroke=\"#333\" stroke-width=\"0.4\"><title>" << escaped(name) << ": " << bytes_text(bytes)
        << " at offset " << offset << ", steps " << first << "-" << last << "</title></rect>\n";
  }
  // The lower bound.
  svg << "<line x1=\"" << kLeft << "\" x2=\"" << num(kLeft + plot_w) << "\" y1=\"" << num(y_of(static_cast<double>(p.min_bytes)))
      << "\" y2=\"" << num(y_of(static_cast<double>(p.min_bytes)))
      << "\" stroke=\"#d62728\" stroke-dasharray=\"6,4\"><title>busiest step's live bytes: "
      << bytes_text(p.min_bytes) << "</title></line>\n";
}

}  // namespace

std::string memory_svg(const nlohmann::json& report) {
  std::vector<Panel> panels;
  const auto graphs = report.find("graphs");
  if (graphs == report.end() || !graphs->is_array())
    throw Ephost::Exception(EPHOST_FAIL, "the partition report has no graphs");
  for (const json& g : *graphs) {
    // A reference into the report: the panels point at their pattern.
    auto it = g.find("memory_patterns");
    if (it == g.end() || !it->is_array() || it->empty()) continue;
    const json& patterns = *it;
    const json& pattern = patterns.front();  // the one used last
    for (const json& b : pattern["blocks"]) {
      Panel p;
      p.title = "graph " + g.value("graph", std::string()) + ", inputs " + pattern.value("input_shapes", std::string());
      p.device = b.value("device", "host");
      p.bytes = b.value("bytes", int64_t{0});
      p.min_bytes = b.value("min_bytes", int64_t{0});
      p.pattern = &pattern;
      panels.push_back(p);
    }
  }
  if (panels.empty())
    throw Ephost::Exception(EPHOST_FAIL,
                            "no memory pattern was recorded: the run allocated no intermediate values in a block "
                            "(session.enable_mem_pattern=0, a model whose values are all inputs, outputs or "
                            "constants, or inputs fed as sequences)");
  std::ostringstream svg;
  const double height = kPanelHeight * static_cast<double>(panels.size());
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << kWidth << " " << height << "\" font-family=\"Helvetica, Arial, sans-serif\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  for (size_t i = 0; i < panels.size(); ++i) draw_panel(svg, panels[i], kPanelHeight * static_cast<double>(i));
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace ephost_cli
