#include "report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <tuple>

namespace kiln::report {

namespace {

constexpr double kWidth = 580;
constexpr double kLeft = 70;  // room for the y ticks
constexpr double kRight = 20;
constexpr double kTop = 34;  // the title
constexpr double kPlotHeight = 240;
constexpr double kAxisBelow = 44;  // x ticks and label
constexpr double kLegendRow = 18;

std::string num(double v, const char* format = "%.1f") {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// A tick label: short, without trailing zeros.
std::string tick_text(double v) {
  if (v == 0) return "0";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void add(double v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return !(lo <= hi); }
};

// "Nice" ticks covering [lo, hi] (1, 2 or 5 times a power of ten apart); the range grows to them.
std::vector<double> nice_ticks(Range& r, bool from_zero) {
  if (from_zero) r.lo = std::min(r.lo, 0.0);
  if (r.hi - r.lo <= 0) {
    double pad = r.hi == 0 ? 1 : std::abs(r.hi) * 0.1;
    r.lo = from_zero && r.lo >= 0 ? r.lo : r.lo - pad;
    r.hi += pad;
  }
  double raw = (r.hi - r.lo) / 5;
  double magnitude = std::pow(10, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * magnitude;
    if (step >= raw) break;
  }
  r.lo = std::floor(r.lo / step) * step;
  r.hi = std::ceil(r.hi / step) * step;
  std::vector<double> ticks;
  for (double t = r.lo; t <= r.hi + step / 2 && ticks.size() < 20; t += step) {
    ticks.push_back(std::abs(t) < step * 1e-9 ? 0 : t);
  }
  return ticks;
}

std::string svg_open(const std::string& kind, double height) {
  return "<svg class=\"chart\" data-chart=\"" + escape_xml(kind) + "\" width=\"" +
         num(kWidth, "%.0f") + "\" height=\"" + num(height, "%.0f") + "\" viewBox=\"0 0 " +
         num(kWidth, "%.0f") + " " + num(height, "%.0f") + "\" role=\"img\">";
}

// A bar chart's category labels: at most this many characters per line, each estimated at this
// width (11 px sans-serif, capitals and digits included), lines this far apart.
constexpr size_t kLabelChars = 34;
constexpr double kLabelCharWidth = 7.2;
constexpr double kLabelLineHeight = 13;

// `label` in lines of at most `width` characters, broken after a space, ',' or ':' where one is
// (a task label: template, then the workload's parameters), else cut; at most 4 lines, the last
// ending in "..." when the label is longer still.
std::vector<std::string> wrap_label(const std::string& label, size_t width) {
  std::vector<std::string> lines;
  size_t at = 0;
  while (at < label.size()) {
    if (lines.size() == 3 && label.size() - at > width) {
      lines.push_back(label.substr(at, width - 3) + "...");
      return lines;
    }
    size_t end = std::min(label.size(), at + width);
    if (end < label.size()) {
      const size_t brk = label.find_last_of(" ,:", end - 1);
      if (brk != std::string::npos && brk >= at + width / 3) end = brk + 1;
    }
    std::string line = label.substr(at, end - at);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    lines.push_back(line);
    at = end;
    while (at < label.size() && label[at] == ' ') ++at;
  }
  if (lines.empty()) lines.push_back("");
  return lines;
}

std::string text(double x, double y, const std::string& content, const std::string& attrs = "") {
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\"" + (attrs.empty() ? "" : " " + attrs) +
         ">" + escape_xml(content) + "</text>";
}

// A marker centred at (x, y).
std::string marker_svg(Marker m, double x, double y, const std::string& color) {
  const double r = 3.5;
  const std::string fill = "fill=\"" + escape_xml(color) + "\"";
  const std::string stroke = "stroke=\"" + escape_xml(color) + "\" stroke-width=\"1.6\"";
  switch (m) {
    case Marker::kCircle:
      return "<circle cx=\"" + num(x) + "\" cy=\"" + num(y) + "\" r=\"" + num(r) + "\" " + fill +
             "/>";
    case Marker::kSquare:
    case Marker::kBar:
      return "<rect x=\"" + num(x - r) + "\" y=\"" + num(y - r) + "\" width=\"" + num(2 * r) +
             "\" height=\"" + num(2 * r) + "\" " + fill + "/>";
    case Marker::kTriangle:
      return "<path d=\"M" + num(x) + " " + num(y - r - 1) + "L" + num(x + r + 0.5) + " " +
             num(y + r) + "L" + num(x - r - 0.5) + " " + num(y + r) + "Z\" " + fill + "/>";
    case Marker::kDiamond:
      return "<path d=\"M" + num(x) + " " + num(y - r - 1) + "L" + num(x + r + 1) + " " + num(y) +
             "L" + num(x) + " " + num(y + r + 1) + "L" + num(x - r - 1) + " " + num(y) + "Z\" " +
             fill + "/>";
    case Marker::kCross:
      return "<path d=\"M" + num(x - r) + " " + num(y - r) + "L" + num(x + r) + " " + num(y + r) +
             "M" + num(x - r) + " " + num(y + r) + "L" + num(x + r) + " " + num(y - r) + "\" " +
             stroke + " fill=\"none\"/>";
    case Marker::kPlus:
      return "<path d=\"M" + num(x - r - 1) + " " + num(y) + "L" + num(x + r + 1) + " " + num(y) +
             "M" + num(x) + " " + num(y - r - 1) + "L" + num(x) + " " + num(y + r + 1) + "\" " +
             stroke + " fill=\"none\"/>";
    case Marker::kStar: {
      std::string d;
      for (int i = 0; i < 10; ++i) {
        double radius = i % 2 == 0 ? r + 1.5 : r * 0.5;
        double a = std::numbers::pi / 2 + i * std::numbers::pi / 5;
        d += (i == 0 ? "M" : "L") + num(x + radius * std::cos(a)) + " " +
             num(y - radius * std::sin(a));
      }
      return "<path d=\"" + d + "Z\" " + fill + "/>";
    }
  }
  return "";
}

std::string no_data(double x, double y) {
  return text(x, y, "no data", "class=\"no-data\" text-anchor=\"middle\"");
}

struct LegendEntry {
  std::string name;
  std::string color;
  Marker marker;
  bool is_line;
  bool dashed;
};

// Legend entries in rows under the plot; returns the markup and sets the rows used.
std::string legend(const std::vector<LegendEntry>& entries, double top, int* rows) {
  std::string out;
  double x = kLeft, y = top;
  *rows = entries.empty() ? 0 : 1;
  for (const auto& [name, color, marker, is_line, dashed] : entries) {
    double w = 34 + 6.6 * static_cast<double>(std::min<size_t>(name.size(), 60));
    if (x + w > kWidth - kRight && x > kLeft) {
      x = kLeft;
      y += kLegendRow;
      ++*rows;
    }
    out += "<g class=\"legend-entry\">";
    if (is_line) {
      out += "<line x1=\"" + num(x) + "\" y1=\"" + num(y - 4) + "\" x2=\"" + num(x + 16) +
             "\" y2=\"" + num(y - 4) + "\" stroke=\"" + escape_xml(color) +
             "\" stroke-width=\"2\"" + (dashed ? " stroke-dasharray=\"4 3\"" : "") + "/>";
    } else {
      out += marker_svg(marker, x + 8, y - 4, color);
    }
    out +=
        text(x + 22, y, name.size() > 60 ? name.substr(0, 57) + "..." : name, "font-size=\"11\"");
    out += "</g>";
    x += w;
  }
  return out;
}

}  // namespace

std::string escape_xml(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

const std::string& palette_color(size_t i) {
  static const std::vector<std::string> kColors = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                                   "#9467bd", "#8c564b", "#e377c2", "#17becf"};
  return kColors[i % kColors.size()];
}

Marker palette_marker(size_t i) {
  static const Marker kMarkers[] = {Marker::kCircle,  Marker::kSquare, Marker::kTriangle,
                                    Marker::kDiamond, Marker::kCross,  Marker::kPlus,
                                    Marker::kStar};
  return kMarkers[i % (sizeof kMarkers / sizeof kMarkers[0])];
}

std::string render_xy_chart(const XYChart& chart) {
  Range xr, yr;
  for (const Series& s : chart.series) {
    for (const Point& p : s.points) {
      if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
      xr.add(p.x);
      yr.add(p.y);
    }
  }
  std::vector<LegendEntry> entries;
  for (const Series& s : chart.series) {
    entries.push_back({s.name, s.color, s.marker, s.style != SeriesStyle::kDots, s.dashed});
  }
  int legend_rows = 0;
  const double plot_bottom = kTop + kPlotHeight;
  std::string legend_svg = legend(entries, plot_bottom + kAxisBelow + 14, &legend_rows);
  const double height = plot_bottom + kAxisBelow + legend_rows * kLegendRow + 8;

  std::string out = svg_open(chart.kind, height);
  out += "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>";
  out += text(kLeft, 20, chart.title, "font-size=\"14\" font-weight=\"bold\"");
  const double plot_w = kWidth - kLeft - kRight;
  if (xr.empty()) {
    out += "<rect x=\"" + num(kLeft) + "\" y=\"" + num(kTop) + "\" width=\"" + num(plot_w) +
           "\" height=\"" + num(kPlotHeight) + "\" fill=\"none\" stroke=\"#ccc\"/>";
    out += no_data(kLeft + plot_w / 2, kTop + kPlotHeight / 2);
  }
  std::vector<double> xt, yt;
  if (!xr.empty()) {
    xt = nice_ticks(xr, /*from_zero=*/xr.lo >= 0);
    yt = nice_ticks(yr, /*from_zero=*/yr.lo >= 0);
  }
  auto sx = [&](double x) { return kLeft + (x - xr.lo) / (xr.hi - xr.lo) * plot_w; };
  auto sy = [&](double y) { return plot_bottom - (y - yr.lo) / (yr.hi - yr.lo) * kPlotHeight; };
  if (!xr.empty()) {
    out += "<g class=\"axes\" font-size=\"11\" fill=\"#333\">";
    for (double t : yt) {
      out += "<line x1=\"" + num(kLeft) + "\" y1=\"" + num(sy(t)) + "\" x2=\"" +
             num(kLeft + plot_w) + "\" y2=\"" + num(sy(t)) + "\" stroke=\"#e5e5e5\"/>";
      out += text(kLeft - 6, sy(t) + 4, tick_text(t), "text-anchor=\"end\"");
    }
    for (double t : xt) {
      out += "<line x1=\"" + num(sx(t)) + "\" y1=\"" + num(plot_bottom) + "\" x2=\"" + num(sx(t)) +
             "\" y2=\"" + num(plot_bottom + 4) + "\" stroke=\"#333\"/>";
      out += text(sx(t), plot_bottom + 16, tick_text(t), "text-anchor=\"middle\"");
    }
    out += "<rect x=\"" + num(kLeft) + "\" y=\"" + num(kTop) + "\" width=\"" + num(plot_w) +
           "\" height=\"" + num(kPlotHeight) + "\" fill=\"none\" stroke=\"#999\"/>";
    out += "</g>";
  }
  out += text(kLeft + plot_w / 2, plot_bottom + 34, chart.x_label,
              "font-size=\"12\" text-anchor=\"middle\"");
  out += text(14, kTop + kPlotHeight / 2, chart.y_label,
              "font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 14 " +
                  num(kTop + kPlotHeight / 2) + ")\"");

  for (const Series& s : chart.series) {
    out += "<g class=\"series\" data-series=\"" + escape_xml(s.name) + "\">";
    std::vector<Point> pts;
    for (const Point& p : s.points) {
      if (std::isfinite(p.x) && std::isfinite(p.y)) pts.push_back(p);
    }
    if (!pts.empty() && s.style != SeriesStyle::kDots) {
      std::string d;
      for (size_t i = 0; i < pts.size(); ++i) {
        if (i == 0) {
          d += "M" + num(sx(pts[i].x)) + " " + num(sy(pts[i].y));
        } else if (s.style == SeriesStyle::kStepLine) {
          d += "H" + num(sx(pts[i].x)) + "V" + num(sy(pts[i].y));
        } else {
          d += "L" + num(sx(pts[i].x)) + " " + num(sy(pts[i].y));
        }
      }
      out += "<path d=\"" + d + "\" fill=\"none\" stroke=\"" + escape_xml(s.color) +
             "\" stroke-width=\"2\"" + (s.dashed ? " stroke-dasharray=\"6 4\"" : "") + "/>";
      if (pts.size() == 1) out += marker_svg(s.marker, sx(pts[0].x), sy(pts[0].y), s.color);
    } else {
      for (const Point& p : pts) out += marker_svg(s.marker, sx(p.x), sy(p.y), s.color);
    }
    out += "</g>";
  }
  out += legend_svg;
  out += "</svg>";
  return out;
}

std::string render_bar_chart(const BarChart& chart) {
  const size_t n_cat = chart.categories.size();
  const size_t n_ser = chart.series_names.size();
  Range vr;
  vr.add(0);
  if (chart.reference > 0) vr.add(chart.reference);
  bool any = false;
  for (size_t c = 0; c < n_cat; ++c) {
    double stack = 0;
    for (size_t s = 0; s < n_ser; ++s) {
      double v = s < chart.values.size() && c < chart.values[s].size() ? chart.values[s][c] : NAN;
      if (!std::isfinite(v) || v < 0) continue;
      any = true;
      if (chart.stacked) {
        stack += v;
        vr.add(stack);
      } else {
        vr.add(v);
      }
    }
  }
  // Labels wrap instead of being clipped: the label column is as wide as the longest line needs
  // (at most kLabelChars characters), and a row as tall as the most lines a label takes.
  std::vector<std::vector<std::string>> labels;
  size_t widest = 1, most_lines = 1;
  for (const std::string& category : chart.categories) {
    labels.push_back(wrap_label(category, kLabelChars));
    most_lines = std::max(most_lines, labels.back().size());
    for (const std::string& line : labels.back()) widest = std::max(widest, line.size());
  }
  const double label_w = kLabelCharWidth * static_cast<double>(widest) + 10;
  const double bar_row_h = chart.stacked || n_ser <= 1 ? 18 : std::max(18.0, 9.0 * n_ser + 4);
  const double row_h = std::max(bar_row_h, kLabelLineHeight * static_cast<double>(most_lines) + 6);
  const double plot_h = std::max<double>(1, n_cat) * row_h;
  const double plot_left = 8 + label_w;
  const double plot_w = kWidth - plot_left - kRight;
  std::vector<LegendEntry> entries;
  for (size_t s = 0; s < n_ser; ++s) {
    entries.push_back({chart.series_names[s],
                       s < chart.series_colors.size() ? chart.series_colors[s] : palette_color(s),
                       Marker::kBar, false, false});
  }
  int legend_rows = 0;
  const double plot_bottom = kTop + plot_h;
  std::string legend_svg =
      n_ser > 1 ? legend(entries, plot_bottom + kAxisBelow + 14, &legend_rows) : "";
  const double height = plot_bottom + kAxisBelow + legend_rows * kLegendRow + 8;
  std::string out = svg_open(chart.kind, height);
  out += "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>";
  out += text(kLeft, 20, chart.title, "font-size=\"14\" font-weight=\"bold\"");
  if (!any) out += no_data(plot_left + plot_w / 2, kTop + plot_h / 2 + 4);
  std::vector<double> ticks = nice_ticks(vr, true);
  auto sx = [&](double v) { return plot_left + (v - vr.lo) / (vr.hi - vr.lo) * plot_w; };
  out += "<g class=\"axes\" font-size=\"11\" fill=\"#333\">";
  for (double t : ticks) {
    out += "<line x1=\"" + num(sx(t)) + "\" y1=\"" + num(kTop) + "\" x2=\"" + num(sx(t)) +
           "\" y2=\"" + num(plot_bottom) + "\" stroke=\"#e5e5e5\"/>";
    out += text(sx(t), plot_bottom + 16, tick_text(t), "text-anchor=\"middle\"");
  }
  for (size_t c = 0; c < n_cat; ++c) {
    const std::vector<std::string>& lines = labels[c];
    const double first_y = kTop + c * row_h + row_h / 2 + 4 -
                           kLabelLineHeight * (static_cast<double>(lines.size()) - 1) / 2;
    out += "<text class=\"category\" x=\"" + num(plot_left - 6) + "\" y=\"" + num(first_y) +
           "\" text-anchor=\"end\">";
    for (size_t l = 0; l < lines.size(); ++l) {
      out += "<tspan x=\"" + num(plot_left - 6) + "\"" +
             (l == 0 ? std::string() : " dy=\"" + num(kLabelLineHeight) + "\"") + ">" +
             escape_xml(lines[l]) + "</tspan>";
    }
    out += "<title>" + escape_xml(chart.categories[c]) + "</title></text>";
  }
  out += "</g>";
  out += text(plot_left + plot_w / 2, plot_bottom + 34, chart.value_label,
              "font-size=\"12\" text-anchor=\"middle\"");
  std::vector<double> stack(n_cat, 0);
  for (size_t s = 0; s < n_ser; ++s) {
    const std::string& color =
        s < chart.series_colors.size() ? chart.series_colors[s] : palette_color(s);
    out += "<g class=\"series\" data-series=\"" + escape_xml(chart.series_names[s]) + "\">";
    for (size_t c = 0; c < n_cat; ++c) {
      double v = s < chart.values.size() && c < chart.values[s].size() ? chart.values[s][c] : NAN;
      if (!std::isfinite(v) || v < 0) continue;
      double x0 = chart.stacked ? stack[c] : 0;
      double y = kTop + c * row_h + 2;
      double h = row_h - 4;
      if (!chart.stacked && n_ser > 1) {
        h = (row_h - 4) / static_cast<double>(n_ser);
        y += h * static_cast<double>(s);
      }
      out += "<rect x=\"" + num(sx(x0)) + "\" y=\"" + num(y) + "\" width=\"" +
             num(std::max(0.0, sx(x0 + v) - sx(x0))) + "\" height=\"" + num(h) + "\" fill=\"" +
             escape_xml(color) + "\"><title>" + escape_xml(chart.series_names[s]) + " " +
             escape_xml(chart.categories[c]) + ": " + escape_xml(tick_text(v)) + "</title></rect>";
      if (chart.stacked) stack[c] += v;
    }
    out += "</g>";
  }
  if (chart.reference > 0) {
    out += "<line class=\"reference\" x1=\"" + num(sx(chart.reference)) + "\" y1=\"" + num(kTop) +
           "\" x2=\"" + num(sx(chart.reference)) + "\" y2=\"" + num(plot_bottom) +
           "\" stroke=\"#333\" stroke-dasharray=\"4 3\"/>";
  }
  out += legend_svg;
  out += "</svg>";
  return out;
}

}  // namespace kiln::report
