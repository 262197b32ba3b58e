#include "frontend/task_extraction.h"

#include <map>
#include <set>
#include <utility>

#include "frontend/workload_mapping.h"
#include "ops/registry.h"
#include "ops/tvm_args_parse.h"

namespace kiln::frontend {

namespace {

int64_t elements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

}  // namespace

TaskExtraction extract_tasks(const Graph& graph) {
  TaskExtraction out;
  std::map<std::pair<std::string, std::string>, size_t> task_at;  // (template, workload) -> task
  std::set<std::string> workloads;
  for (const Node& node : graph.nodes) {
    Result<std::optional<ops::Workload>> mapped = workload_of(graph, node);
    if (!mapped.ok()) {
      out.not_tunable.push_back(mapped.status().message());
      continue;
    }
    if (!mapped->has_value()) continue;
    const ops::Workload& raw = **mapped;
    std::vector<const ops::Template*> templates = ops::templates_for_op(raw.op);
    if (templates.empty()) {
      out.not_tunable.push_back(graph.source + ": " + node.describe() + ": no template for " +
                                raw.op);
      continue;
    }
    // Normalize with every template first, so that a node is either all its tasks or none.
    std::vector<std::pair<const ops::Template*, ops::Workload>> normalized;
    std::string problem;
    for (const ops::Template* t : templates) {
      if (t->extra()) continue;  // not a TVM task: model tuning adds it where it applies
      Result<ops::Workload> w = t->normalize(raw);
      if (!w.ok()) {
        problem = w.status().message();
        break;
      }
      // The template's output must be the node's: a guard against a mis-mapped workload.
      const std::vector<int64_t>& y = graph.tensor(node.outputs[0]).shape;
      std::vector<int64_t> produced = t->outputs(*w)[0].shape;
      if (elements(produced) != elements(y)) {
        problem = std::string(t->name()) + " would produce " + dims_text(produced) +
                  ", the model's output is " + dims_text(y);
        break;
      }
      // The task is TVM's (ops::task_workload: a dense without kiln's fused bias), so that its
      // records and a TVM log's name one task.
      normalized.emplace_back(t, ops::task_workload(*t, *w));
    }
    if (!problem.empty()) {
      out.not_tunable.push_back(graph.source + ": " + node.describe() + ": " + problem);
      continue;
    }
    ++out.tunable_nodes;
    workloads.insert(normalized.front().second.to_string());
    for (auto& [t, w] : normalized) {
      std::pair<std::string, std::string> key{std::string(t->name()), w.to_string()};
      auto [it, inserted] = task_at.emplace(key, out.tasks.size());
      if (inserted) {
        ModelTask task;
        task.tmpl = t;
        task.flops = t->flop(w);
        task.space_size = t->space(w).size();
        task.workload = std::move(w);
        out.tasks.push_back(std::move(task));
      }
      ModelTask& task = out.tasks[it->second];
      ++task.count;
      task.nodes.push_back(node.index);
    }
  }
  out.workloads = static_cast<int64_t>(workloads.size());
  return out;
}

std::vector<ModelTask> extra_tasks(const std::vector<ModelTask>& tasks) {
  std::vector<ModelTask> out;
  std::set<std::pair<std::string, std::string>> seen;  // (template, workload)
  for (const ModelTask& task : tasks) {
    for (const ops::Template* t : ops::templates_for_op(task.tmpl->op())) {
      if (!t->extra()) continue;
      Result<ops::Workload> w = t->normalize(task.workload);
      if (!w.ok()) continue;  // the extra template does not apply to this workload
      if (!seen.emplace(std::string(t->name()), w->to_string()).second) continue;
      ModelTask extra = task;
      extra.tmpl = t;
      extra.flops = t->flop(*w);
      extra.space_size = t->space(*w).size();
      extra.workload = std::move(w).value();
      out.push_back(std::move(extra));
    }
  }
  return out;
}

}  // namespace kiln::frontend
