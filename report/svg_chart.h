// Charts as inline SVG text, for kiln report's self-contained page: x/y charts (lines, step lines
// and dots) and bar charts (grouped or stacked), with axes, ticks and a legend. Pure functions of
// their data; no fonts, scripts or links.
//
// Markup contract (tests and the dashboard rely on it):
//   - each chart is one <svg class="chart" data-chart="KIND"> element;
//   - each series is one <g class="series" data-series="NAME"> element, emitted for every series
//     given (even when none of its points can be drawn), in the order given; nothing else has
//     class "series" (the legend's entries are class "legend-entry");
//   - a chart with no series, or none with a drawable point, says "no data" in a
//     <text class="no-data"> element.
// Every text (titles, labels, names) is escaped; points whose x or y is not finite (a failed
// trial's cost, NaN) are left out of lines and axes alike.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kiln::report {

// Text escaped for XML/HTML content and attribute values (& < > " ').
std::string escape_xml(std::string_view text);

enum class SeriesStyle {
  kLine,      // points joined in order
  kStepLine,  // best-so-far: horizontal then vertical
  kDots,      // one marker per point
};

enum class Marker { kCircle, kSquare, kTriangle, kDiamond, kCross, kPlus, kStar, kBar };

struct Point {
  double x = 0;
  double y = 0;
};

struct Series {
  std::string name;  // the legend's text and data-series
  SeriesStyle style = SeriesStyle::kLine;
  std::string color;  // a CSS colour, e.g. "#1f77b4"
  Marker marker = Marker::kCircle;
  bool dashed = false;
  std::vector<Point> points;
};

struct XYChart {
  std::string kind;  // data-chart
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<Series> series;
};

std::string render_xy_chart(const XYChart& chart);

struct BarChart {
  std::string kind;  // data-chart
  std::string title;
  std::string value_label;
  std::vector<std::string> categories;     // one group of bars (or one stack) per category
  std::vector<std::string> series_names;   // one bar (or one segment) per series in each group
  std::vector<std::string> series_colors;  // parallel to series_names
  // values[s][c]: series s, category c; REQUIRES: values.size() == series_names.size() and each
  // row has categories.size() entries. Non-finite or negative values draw no bar.
  std::vector<std::vector<double>> values;
  bool stacked = false;
  double reference = 0;  // > 0: a dashed vertical line at this value (e.g. 1 for ratios)
};

// Horizontal bars, one row per category (labels stay readable however many there are).
std::string render_bar_chart(const BarChart& chart);

// The colour and marker of the i-th series of a chart: distinct for the first 8 (then cycling).
const std::string& palette_color(size_t i);
Marker palette_marker(size_t i);

}  // namespace kiln::report
