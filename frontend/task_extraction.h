// Task extraction, as TVM's autotvm.task.extract_from_program: every tunable node of a Graph
// (frontend/workload_mapping.h) becomes one task per TVM template of its operator (dense is both
// dense_nopack.x86 and dense_pack.x86; kiln's extra templates come from extra_tasks); a task is a
// template plus a normalized workload, and equal tasks are merged, their occurrences counted (the
// task's weight).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "frontend/graph.h"
#include "ops/template.h"
#include "ops/workload.h"

namespace kiln::frontend {

struct ModelTask {
  const ops::Template* tmpl = nullptr;
  ops::Workload workload;  // normalized by tmpl
  int64_t count = 0;       // nodes with this workload: the task's weight
  double flops = 0;        // of one occurrence (tmpl->flop)
  int64_t space_size = 0;  // configs in tmpl->space(workload)
  std::vector<int> nodes;  // file indices of the nodes, in graph order
};

struct TaskExtraction {
  // In order of first occurrence in the graph, then the operator's template order.
  std::vector<ModelTask> tasks;
  int64_t tunable_nodes = 0;  // nodes that became tasks
  int64_t workloads = 0;      // distinct workloads among them
  // Conv / Gemm / MatMul nodes that kiln's workloads or templates cannot express, each a
  // message naming the node and why. They are not tasks; nothing about them is dropped silently.
  std::vector<std::string> not_tunable;
};

TaskExtraction extract_tasks(const Graph& graph);

// kiln's extra tasks for `tasks` (Template::extra, e.g. conv2d_NCHWc_winograd.x86 for the 3x3
// stride-1 convolutions, conv2d_NCHWc_ragged.x86 for K off the widest vector): one per task and
// extra template of its operator that accepts its workload, with the task's weight and nodes, after
// all of `tasks` in their order. Duplicates (two templates of one workload) yield one extra task.
std::vector<ModelTask> extra_tasks(const std::vector<ModelTask>& tasks);

}  // namespace kiln::frontend
