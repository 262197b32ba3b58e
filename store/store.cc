#include "store/store.h"

namespace kiln::store {

TaskKey TaskKey::of(const Task& task) {
  return {task.target.to_string(), std::string(task.tmpl->name()), task.workload.to_string()};
}

RecordFilter RecordFilter::of_task(const Task& task) {
  TaskKey key = TaskKey::of(task);
  RecordFilter filter;
  filter.target = std::move(key.target);
  filter.task_name = std::move(key.task_name);
  filter.workload = std::move(key.workload);
  return filter;
}

}  // namespace kiln::store
