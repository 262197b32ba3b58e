// Reads a shared model's tasks.txt (../shared/models/NAME/tasks.txt: the expected tuning tasks,
// written independently of kiln) into the kiln tasks it implies: for each row, one task per
// template of the row's operator, keyed by (template, normalized workload).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>

#include "ops/registry.h"
#include "ops/tvm_args_parse.h"
#include "ops/workload.h"

namespace kiln::testing {

struct ExpectedTask {
  int64_t count = 0;
  double flops = 0;  // of one occurrence
};

struct TasksTxt {
  int64_t distinct_workloads = -1;  // the header's "distinct tasks: N"
  // (template name, normalized workload) -> expectation.
  std::map<std::pair<std::string, std::string>, ExpectedTask> tasks;
};

inline std::string model_path(const std::string& model) {
  return std::string(KILN_SHARED_DIR) + "/models/" + model + "/" + model + ".onnx";
}

namespace tasks_txt_internal {

// "2x3" -> {2, 3}; "3,3,3,3" -> {3, 3, 3, 3}.
inline std::vector<int64_t> numbers(const std::string& text) {
  std::vector<int64_t> out;
  std::string part;
  for (char c : text + ",") {
    if (c == 'x' || c == ',') {
      out.push_back(std::stoll(part));
      part.clear();
    } else {
      part += c;
    }
  }
  return out;
}

// The kiln workload of one row; adds a gtest failure for a row kiln cannot express.
inline ops::Workload workload_of_row(const std::string& kind,
                                     const std::map<std::string, std::string>& kv) {
  auto num = [&](const std::string& key) { return std::stoll(kv.at(key)); };
  ops::Workload w;
  if (kind == "dense") {
    w.op = "dense";
    w.params = {{"M", num("M")}, {"N", num("N")}, {"K", num("K")}, {"bias", num("bias")}};
    return w;
  }
  std::vector<int64_t> kernel = numbers(kv.at("kernel")), stride = numbers(kv.at("stride"));
  std::vector<int64_t> pad = numbers(kv.at("pad")), dilation = numbers(kv.at("dilation"));
  EXPECT_EQ(pad[0], pad[2]) << "asymmetric padding in tasks.txt";
  EXPECT_EQ(pad[1], pad[3]) << "asymmetric padding in tasks.txt";
  EXPECT_EQ(dilation[0], dilation[1]);
  w.params = {{"N", num("N")},         {"C", num("C")},          {"H", num("H")},
              {"W", num("W")},         {"R", kernel[0]},         {"S", kernel[1]},
              {"stride_h", stride[0]}, {"stride_w", stride[1]},  {"pad_h", pad[0]},
              {"pad_w", pad[1]},       {"dilation", dilation[0]}};
  if (kind == "depthwise_conv2d") {
    EXPECT_EQ(num("K"), num("C"));
    EXPECT_EQ(num("groups"), num("C"));
    w.op = "depthwise_conv2d";
  } else {
    w.op = "conv2d";
    w.params["K"] = num("K");
    w.params["groups"] = num("groups");
  }
  return w;
}

}  // namespace tasks_txt_internal

inline TasksTxt read_tasks_txt(const std::string& model) {
  std::string path = std::string(KILN_SHARED_DIR) + "/models/" + model + "/tasks.txt";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  TasksTxt out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (line[0] == '#') {
      size_t at = line.find("distinct tasks: ");
      if (at != std::string::npos) out.distinct_workloads = std::stoll(line.substr(at + 16));
      continue;
    }
    std::istringstream row(line);
    std::string id, kind, token;
    int64_t count = 0;
    double flops_each = 0, flops_total = 0;
    row >> id >> kind >> count >> flops_each >> flops_total;
    std::map<std::string, std::string> kv;  // first occurrence of each key wins
    while (row >> token) {
      size_t eq = token.find('=');
      if (eq != std::string::npos) kv.emplace(token.substr(0, eq), token.substr(eq + 1));
    }
    ops::Workload raw = tasks_txt_internal::workload_of_row(kind, kv);
    for (const ops::Template* t : ops::templates_for_op(raw.op)) {
      if (t->extra()) continue;  // kiln's own templates are not TVM tasks
      Result<ops::Workload> w = t->normalize(raw);
      EXPECT_TRUE(w.ok()) << w.status().message();
      if (!w.ok()) continue;
      // Keyed as TVM's task (a dense without kiln's fused bias), as task extraction lists it.
      ExpectedTask& e = out.tasks[{std::string(t->name()), ops::task_workload(*t, *w).to_string()}];
      e.count += count;
      e.flops = flops_each;
    }
  }
  return out;
}

}  // namespace kiln::testing
