#include "store/formats/tvm_target.h"

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
  std::vector<std::string> malformed;        // words that are not "-name=value"
};

ParsedTarget parse(std::string_view text) {
  ParsedTarget t;
  std::istringstream in{std::string(text)};
  in >> t.kind;
  std::string word;
  while (in >> word) {
    size_t eq = word.find('=');
    if (word.size() < 2 || word[0] != '-' || eq == std::string::npos || eq < 2) {
      t.malformed.push_back(word);
      continue;
    }
    std::string name = word.substr(0, eq);
    if (name == "-keys") {
      t.keys = word.substr(eq + 1);
    } else {
      t.attrs[name] = word;  // a repeated option: the last one wins, as in TVM
    }
  }
  return t;
}

// TVM's default keys of a target kind (the kinds kiln meets; others have none here).
std::string default_keys(std::string_view kind) {
  return kind == "llvm" || kind == "c" ? "cpu" : "";
}

}  // namespace

std::string tvm_target_string(std::string_view kiln_target) {
  ParsedTarget t = parse(kiln_target);
  std::string keys = t.keys.empty() ? default_keys(t.kind) : t.keys;
  std::string out = t.kind;
  if (!keys.empty()) out += " -keys=" + keys;
  // TVM appends ' ' + the space-joined sorted attributes even when there are none, hence the
  // trailing space of a target without attributes (see the header).
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
  if (!t.keys.empty() && t.keys != default_keys(t.kind)) t.attrs["-keys"] = "-keys=" + t.keys;
  for (const auto& [name, option] : t.attrs) out += " " + option;
  for (const std::string& word : t.malformed) out += " " + word;  // for check_target_for_task
  return out;
}

Status check_target_for_task(std::string_view kiln_target, std::string_view task_name) {
  ParsedTarget t = parse(kiln_target);
  std::string where =
      "target '" + std::string(kiln_target) + "' for task " + std::string(task_name) + ": ";
  if (!t.malformed.empty()) {
    return InvalidArgument(where + "option '" + t.malformed.front() +
                           "' is not of the form -name=value");
  }
  size_t dot = task_name.rfind('.');
  std::string_view family = dot == std::string_view::npos ? "" : task_name.substr(dot + 1);
  if (family != "x86") {
    return InvalidArgument(where + "kiln knows no targets for templates of family '" +
                           std::string(family) + "'");
  }
  if (t.kind != "llvm") {
    return InvalidArgument(where + "TVM's x86 templates run on llvm targets only, not '" + t.kind +
                           "' (a record measured on another target kind is another " +
                           "template's)");
  }
  return Status::Ok();
}

}  // namespace kiln::store
