#include "dashboard/prometheus_text.h"

#include <charconv>
#include <cmath>

namespace kiln::dashboard {

namespace {

// Backslash and newline escaped, and double quotes too in a label value (not in HELP text).
std::string escaped(const std::string& text, bool quotes) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && quotes) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string prometheus_label_value(const std::string& value) { return escaped(value, true); }

std::string prometheus_number(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // The shortest text that reads back as the same double (counts print as integers).
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  return ec == std::errc() ? std::string(buf, end) : "NaN";
}

void PrometheusText::family(const std::string& name, const std::string& type,
                            const std::string& help) {
  name_ = name;
  text_ += "# HELP " + name + " " + escaped(help, false) + "\n";
  text_ += "# TYPE " + name + " " + type + "\n";
}

void PrometheusText::sample(const PrometheusLabels& labels, double value) {
  text_ += name_;
  if (!labels.empty()) {
    text_ += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      if (i > 0) text_ += ',';
      text_ += labels[i].first + "=\"" + prometheus_label_value(labels[i].second) + '"';
    }
    text_ += '}';
  }
  text_ += ' ' + prometheus_number(value) + '\n';
}

}  // namespace kiln::dashboard
