// report/svg_chart.h: the markup contract (one <svg class="chart"> per chart, one
// <g class="series"> per series), escaping, empty data and non-finite points.
#include "report/svg_chart.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <regex>
#include <string>

#include "tests/support/chart_markup.h"

namespace kiln::report {
namespace {

using kiln::testing::count_of;

Series line(const std::string& name, std::vector<Point> points) {
  return {name,  SeriesStyle::kStepLine, palette_color(0), Marker::kCircle,
          false, std::move(points)};
}

TEST(ReportSvgChart, OneSeriesElementPerSeriesInOrder) {
  XYChart chart{"best_vs_trials", "t", "trial", "GFLOPS", {}};
  chart.series.push_back(line("best: kiln tune", {{1, 2}, {2, 3}, {3, 3}}));
  chart.series.push_back(line("best: import:x.log", {{1, 1}, {2, 4}}));
  chart.series.push_back({"failed: RUNTIME_DEVICE",
                          SeriesStyle::kDots,
                          "#d62728",
                          Marker::kCross,
                          false,
                          {{1, 0}, {3, 0}}});
  std::string svg = render_xy_chart(chart);
  EXPECT_EQ(count_of(svg, "<svg class=\"chart\" data-chart=\"best_vs_trials\""), 1);
  EXPECT_EQ(count_of(svg, "class=\"series\""), 3);
  size_t a = svg.find("data-series=\"best: kiln tune\"");
  size_t b = svg.find("data-series=\"best: import:x.log\"");
  size_t c = svg.find("data-series=\"failed: RUNTIME_DEVICE\"");
  ASSERT_NE(a, std::string::npos);
  ASSERT_NE(b, std::string::npos);
  ASSERT_NE(c, std::string::npos);
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  EXPECT_EQ(count_of(svg, "class=\"legend-entry\""), 3);
  EXPECT_EQ(count_of(svg, "no-data"), 0);
  EXPECT_EQ(svg.find("http"), std::string::npos);  // nothing that could be fetched
}

TEST(ReportSvgChart, EveryTextIsEscaped) {
  XYChart chart{"k\"<x>", "<script>alert(1)</script>", "a & b", "'y'", {}};
  chart.series.push_back(line("<b>\"s\"&", {{0, 1}, {1, 2}}));
  std::string svg = render_xy_chart(chart);
  EXPECT_EQ(svg.find("<script>"), std::string::npos);
  EXPECT_EQ(svg.find("<b>"), std::string::npos);
  EXPECT_NE(svg.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(svg.find("data-series=\"&lt;b&gt;&quot;s&quot;&amp;\""), std::string::npos);
  EXPECT_NE(svg.find("data-chart=\"k&quot;&lt;x&gt;\""), std::string::npos);
  EXPECT_NE(svg.find("a &amp; b"), std::string::npos);
  EXPECT_NE(svg.find("&#39;y&#39;"), std::string::npos);

  BarChart bars{"b", "<t>", "v", {"<cat>"}, {"<s>"}, {"#000"}, {{1}}, false, 0};
  std::string bsvg = render_bar_chart(bars);
  EXPECT_EQ(bsvg.find("<cat>"), std::string::npos);
  EXPECT_EQ(bsvg.find("<s>"), std::string::npos);
  EXPECT_NE(bsvg.find("&lt;cat&gt;"), std::string::npos);
}

TEST(ReportSvgChart, EmptyDataSaysSo) {
  std::string none = render_xy_chart({"best_vs_time", "t", "x", "y", {}});
  EXPECT_EQ(count_of(none, "class=\"series\""), 0);
  EXPECT_EQ(count_of(none, "class=\"no-data\""), 1);
  // A series without a drawable point is still one series element, and the chart says no data.
  XYChart empty_series{"best_vs_time", "t", "x", "y", {line("s", {})}};
  std::string svg = render_xy_chart(empty_series);
  EXPECT_EQ(count_of(svg, "class=\"series\""), 1);
  EXPECT_EQ(count_of(svg, "class=\"no-data\""), 1);
  BarChart bars{"task_share", "t", "v", {}, {"share"}, {"#000"}, {{}}, false, 0};
  std::string bsvg = render_bar_chart(bars);
  EXPECT_EQ(count_of(bsvg, "class=\"series\""), 1);
  EXPECT_EQ(count_of(bsvg, "class=\"no-data\""), 1);
}

// A long task label wraps onto lines of at most 34 characters instead of being clipped: every
// character of it is drawn (the template's name first), and the plot starts right of the labels.
TEST(ReportSvgChart, LongBarLabelsWrapAndKeepEveryCharacter) {
  const std::string label =
      "conv2d_NCHWc.x86 conv2d:C=64,H=56,K=64,N=1,R=3,S=3,W=56,dilation=1,groups=1,pad=1,stride=1";
  BarChart bars{"task_share",
                "t",
                "v",
                {label, "dense_pack.x86 dense:K=512,M=1,N=1000,bias=1"},
                {"share"},
                {"#000"},
                {{40, 60}},
                false,
                0};
  std::string svg = render_bar_chart(bars);
  std::regex tspan("<tspan x=\"([0-9.]+)\"[^>]*>([^<]*)</tspan>");
  std::string joined;
  int lines = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tspan); it != std::sregex_iterator();
       ++it) {
    const std::string text = (*it)[2];
    EXPECT_LE(text.size(), 34u) << text;
    if (lines < 3) joined += text;
    ++lines;
  }
  std::string unspaced = label;
  std::erase(unspaced, ' ');
  std::erase(joined, ' ');  // a line break after a space drops it
  EXPECT_EQ(joined, unspaced) << svg;  // the first label's three lines hold all of it
  EXPECT_EQ(count_of(svg, "<title>" + label + "</title>"), 1);
  // Every bar starts right of the labels' anchor.
  std::smatch anchor, bar;
  ASSERT_TRUE(std::regex_search(svg, anchor, tspan));
  ASSERT_TRUE(std::regex_search(svg, bar, std::regex("<rect x=\"([0-9.]+)\" y=\"[0-9.]+\" width")));
  EXPECT_GT(std::stod(bar[1]), std::stod(anchor[1]));
}

TEST(ReportSvgChart, NonFinitePointsAreLeftOut) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  XYChart chart{"best_vs_trials",
                "t",
                "x",
                "y",
                {{"dots",
                  SeriesStyle::kDots,
                  "#000",
                  Marker::kCircle,
                  false,
                  {{1, 2}, {2, inf}, {3, nan}, {nan, 1}, {4, -inf}, {5, 4}}}}};
  std::string svg = render_xy_chart(chart);
  EXPECT_EQ(count_of(svg, "<circle"), 2 + 1);  // two points and the legend's marker
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
  // Only non-finite points: no axes from them, "no data".
  XYChart only_bad{"c", "t", "x", "y", {line("s", {{1, inf}, {nan, 2}})}};
  std::string bad = render_xy_chart(only_bad);
  EXPECT_EQ(count_of(bad, "class=\"no-data\""), 1);
  EXPECT_EQ(bad.find("nan"), std::string::npos);
  EXPECT_EQ(bad.find("inf"), std::string::npos);
  // Bars: a non-finite value draws no bar.
  BarChart bars{"bench_ratio", "t", "v", {"a", "b"}, {"s"}, {"#000"}, {{nan, 2}}, false, 1};
  std::string bsvg = render_bar_chart(bars);
  EXPECT_EQ(count_of(bsvg, "</rect>"), 1);
  EXPECT_EQ(bsvg.find("nan"), std::string::npos);
  EXPECT_EQ(count_of(bsvg, "class=\"reference\""), 1);
}

TEST(ReportSvgChart, StackedBarsOneSegmentPerSeriesAndCategory) {
  BarChart split{"time_split",
                 "t",
                 "s",
                 {"run 1", "run 2"},
                 {"build", "run", "cooldown", "store", "tuner"},
                 {},
                 {{1, 2}, {3, 4}, {0.5, 0}, {0.1, 0.2}, {1, 1}},
                 true,
                 0};
  std::string svg = render_bar_chart(split);
  EXPECT_EQ(count_of(svg, "class=\"series\""), 5);
  EXPECT_EQ(count_of(svg, "</rect>"), 10);  // zero-width segments still drawn, one per value
  EXPECT_EQ(count_of(svg, "class=\"legend-entry\""), 5);
}

}  // namespace
}  // namespace kiln::report
