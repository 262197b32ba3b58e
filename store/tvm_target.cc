#include "store/tvm_target.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <vector>

namespace kiln::store {

namespace {

struct ParsedTarget {
  std::string kind;
  std::string keys;                          // value of -keys=, empty when absent
  std::map<std::string, std::string> attrs;  // "-name" -> full option text "-name=value"
};

ParsedTarget parse(std::string_view text) {
  ParsedTarget t;
  std::istringstream in{std::string(text)};
  in >> t.kind;
  std::string word;
  while (in >> word) {
    std::string name = word.substr(0, word.find('='));
    if (name == "-keys") {
      t.keys = word.substr(name.size() + 1);
    } else {
      t.attrs[name] = word;  // a repeated option: the last one wins, as in TVM
    }
  }
  return t;
}

}  // namespace

std::string tvm_target_string(std::string_view kiln_target) {
  ParsedTarget t = parse(kiln_target);
  if (t.keys.empty() && (t.kind == "llvm" || t.kind == "c")) t.keys = "cpu";
  std::string out = t.kind;
  if (!t.keys.empty()) out += " -keys=" + t.keys;
  // TVM joins the sorted attributes with spaces and always separates them from the keys by one
  // space, even when there are none.
  std::string attrs;
  for (const auto& [name, option] : t.attrs) attrs += (attrs.empty() ? "" : " ") + option;
  return out + " " + attrs;
}

std::string kiln_target_from_tvm(std::string_view tvm_target) {
  ParsedTarget t = parse(tvm_target);
  if (auto it = t.attrs.find("-target"); it != t.attrs.end()) {
    std::string value = it->second.substr(std::min(it->second.size(), sizeof("-target")));
    t.attrs.erase(it);
    t.attrs["-mtriple"] = "-mtriple=" + value;
  }
  std::string out = t.kind;
  for (const char* first : {"-mcpu", "-mattr", "-mtriple"}) {
    auto it = t.attrs.find(first);
    if (it == t.attrs.end()) continue;
    out += " " + it->second;
    t.attrs.erase(it);
  }
  for (const auto& [name, option] : t.attrs) out += " " + option;
  return out;
}

}  // namespace kiln::store
