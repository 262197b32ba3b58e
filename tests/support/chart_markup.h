// Reading kiln report's chart markup back in tests (report/svg_chart.h's contract: each chart an
// <svg class="chart" data-chart="KIND">, each series a <g class="series">), from the HTML kiln
// writes or from the DOM headless Chromium dumps.
#pragma once

#include <regex>
#include <string>
#include <utility>
#include <vector>

namespace kiln::testing {

// How many times `needle` occurs in `haystack`, without overlaps.
inline int count_of(const std::string& haystack, const std::string& needle) {
  int n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

// Each chart of `html`, in document order: its kind and its number of series.
inline std::vector<std::pair<std::string, int>> charts_of(const std::string& html) {
  std::vector<std::pair<std::string, int>> out;
  static const std::regex open("<svg class=\"chart\" data-chart=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), open); it != std::sregex_iterator();
       ++it) {
    size_t begin = static_cast<size_t>(it->position());
    size_t end = html.find("</svg>", begin);
    out.emplace_back((*it)[1].str(), count_of(html.substr(begin, end - begin), "class=\"series\""));
  }
  return out;
}

// The number of series of the index-th chart of `kind` in `html`; -1 when there is no such chart.
inline int series_of_chart(const std::string& html, const std::string& kind, int index) {
  int seen = 0;
  for (const auto& [k, series] : charts_of(html)) {
    if (k == kind && seen++ == index) return series;
  }
  return -1;
}

}  // namespace kiln::testing
