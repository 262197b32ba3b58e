// A strict reader of Prometheus' text exposition format 0.0.4, for tests of /metrics: every
// line is a "# HELP name text", a "# TYPE name counter|gauge|...", or a sample
// `name{label="value",...} number` of the family declared just before it (HELP, then TYPE, then
// its samples; each family once). Label values are unescaped (\\, \", \n). What breaks the
// format is listed in `errors` with its line number.
#pragma once

#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace kiln::testing {

struct Exposition {
  std::map<std::string, std::string> types;  // family -> type
  // `name{a="x",b="y"}` (label values unescaped, labels in the order given) -> value
  std::map<std::string, double> samples;
  std::vector<std::string> errors;

  double value(const std::string& key, double missing = -1) const {
    auto it = samples.find(key);
    return it == samples.end() ? missing : it->second;
  }
};

inline Exposition parse_exposition(const std::string& text) {
  Exposition out;
  static const std::regex help(R"(# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*))");
  static const std::regex type(
      R"(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped))");
  static const std::regex sample(
      R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? ([-+]?(?:[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?|Inf|NaN)))");
  static const std::regex label(R"re(([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$))re");
  std::istringstream in(text);
  std::string line;
  std::string family, helped;
  std::set<std::string> seen;
  int n = 0;
  auto error = [&](const std::string& what) {
    out.errors.push_back("line " + std::to_string(n) + ": " + what + ": " + line);
  };
  if (!text.empty() && text.back() != '\n') out.errors.push_back("no final newline");
  while (std::getline(in, line)) {
    ++n;
    std::smatch m;
    if (std::regex_match(line, m, help)) {
      if (seen.count(m[1])) error("family declared twice");
      helped = m[1];
      seen.insert(m[1]);
      if (std::string(m[2]).find('\n') != std::string::npos) error("raw newline in HELP");
    } else if (std::regex_match(line, m, type)) {
      if (m[1] != helped) error("TYPE without its HELP just before");
      family = m[1];
      out.types[family] = m[2];
    } else if (std::regex_match(line, m, sample)) {
      if (m[1] != family) error("sample outside its family");
      std::string key = m[1];
      if (m[2].matched) {
        std::string labels = m[3];
        key += "{";
        auto begin = labels.cbegin();
        std::smatch lm;
        bool first = true;
        while (begin != labels.cend()) {
          if (!std::regex_search(begin, labels.cend(), lm, label,
                                 std::regex_constants::match_continuous)) {
            error("malformed labels");
            break;
          }
          std::string raw = lm[2], value;
          for (size_t i = 0; i < raw.size(); ++i) {
            if (raw[i] == '\\' && i + 1 < raw.size()) {
              ++i;
              value += raw[i] == 'n' ? '\n' : raw[i];
            } else {
              value += raw[i];
            }
          }
          key += (first ? "" : ",") + std::string(lm[1]) + "=\"" + value + "\"";
          first = false;
          begin = lm[0].second;
        }
        key += "}";
      }
      if (out.samples.count(key)) error("duplicate sample");
      std::string number = m[4];
      out.samples[key] = number == "+Inf" || number == "Inf" ? 1e308 * 10
                         : number == "-Inf"                  ? -1e308 * 10
                                                             : std::strtod(number.c_str(), nullptr);
    } else {
      error("not a HELP, TYPE or sample line");
    }
  }
  return out;
}

}  // namespace kiln::testing
