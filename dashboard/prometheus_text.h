// Prometheus' text exposition format, version 0.0.4 (what /metrics serves): for each metric
// family one "# HELP name text" and one "# TYPE name counter|gauge" line, then its samples
// "name{label="value",...} number". HELP text escapes backslash and newline; label values escape
// backslash, double quote and newline; numbers are Go-style floats (NaN, +Inf, -Inf).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kiln::dashboard {

using PrometheusLabels = std::vector<std::pair<std::string, std::string>>;

class PrometheusText {
 public:
  static constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";

  // Starts a family; its samples follow. `type` is "counter" or "gauge". A family's name must
  // match [a-zA-Z_:][a-zA-Z0-9_:]* and appear once (the caller's names are fixed strings).
  void family(const std::string& name, const std::string& type, const std::string& help);
  // A sample of the current family. Label names match [a-zA-Z_][a-zA-Z0-9_]*.
  void sample(const PrometheusLabels& labels, double value);

  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::string name_;
};

std::string prometheus_label_value(const std::string& value);  // escaped, without quotes
std::string prometheus_number(double value);

}  // namespace kiln::dashboard
