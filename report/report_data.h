// What kiln report shows, gathered from a record store as plain data (report_html.h lays it out).
// Reads only: the store is opened read-only, so a report can be made while a daemon writes it.
//
// Scope (report.h): a daemon job (its tasks and target as the job plans them, jobs/job_plan.h,
// or, when its spec cannot be planned any more, the tasks of its records; its records are those
// whose source is store::job_source(id)), a model (its tasks and weights as
// `kiln tune MODEL` extracts them, on the target that holds most of their records, else the
// host's), or the whole store (every (target, template, workload) with records, in the order
// they were first measured).
//
// Per task, the records are split by source; the primary source is the job's (job scope) or the
// one with the most records (ties: the one recorded first); every other source (a second tuner, an
// imported TVM log) is a comparison. Trial numbers count a source's records of the task in id
// order (1, 2, ...); elapsed times are seconds since the source's first record in scope (the tasks
// of one model run share a time axis; a log imported from another day keeps its own). Best-so-far
// throughput counts only successful records comparable with a measurement made now
// (store::is_comparable).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "report/bench_file.h"
#include "report/report.h"
#include "store/record.h"
#include "store/run_times.h"

namespace kiln::report {

struct Trial {
  int64_t number = 0;    // 1-based, within its source and task
  double elapsed_s = 0;  // since the source's first record in scope
  double gflops = 0;     // 0 for a failure
  int error_no = 0;
  double best_gflops = 0;  // best so far within the source, this trial included
};

struct SourceTrials {
  std::string source;
  std::vector<Trial> trials;  // in id order
  int64_t errors = 0;
  double best_gflops = 0;
};

struct TaskData {
  std::string target;
  std::string task_name;
  std::string workload;
  double weight = 0;                  // occurrences in the model; 0 outside a model scope
  std::vector<SourceTrials> sources;  // the primary source first (none: no record yet)
  std::optional<store::Record> best;  // the best comparable record, any source
};

struct LatencyPoint {
  double elapsed_s = 0;   // since the model's first record
  double latency_s = 0;   // the estimate (tuner::ModelTuneJob::estimated_latency)
  bool complete = false;  // every workload had a measurement
};

struct ModelTaskShare {
  std::string label;  // template and workload
  double weight = 0;
  int64_t trials = 0;  // records of the task (all sources)
  double best_s = 0;   // best latency of one occurrence; +inf: none
  double share = 0;    // of the estimated latency (0 when it has no best, or its workload's
                       // best is another template's)
  // The template's default config (Template::default_config, which `kiln tune` of a model
  // measures first): its recorded latency; +inf when it has no comparable successful record.
  double default_s = 0;
};

struct ModelData {
  std::string model;  // path as given (or the job's)
  // One point per record that lowered the estimate, then one at the model's latest record.
  std::vector<LatencyPoint> latency;
  std::vector<ModelTaskShare> tasks;  // in the model's task order
  double latency_s = 0;               // now
  bool complete = false;
  // The model untuned: Σ weight x the recorded latency of the config `kiln compile` without
  // records runs (each workload's fallback template's default config); nullopt until every
  // workload has one.
  std::optional<double> untuned_latency_s;
};

struct ErrorKind {
  int error_no = 0;
  int64_t count = 0;
  std::string example;  // one message of that kind (the first)
};

struct BenchData {
  std::string file;
  BenchResults results;
};

struct ReportData {
  std::string title;
  std::string scope;  // what the report covers, in words
  std::string db_path;
  int64_t records = 0;  // in scope
  std::vector<TaskData> tasks;
  std::optional<ModelData> model;
  std::vector<store::RunTimes> runs;  // run_times rows in scope, by start
  std::vector<ErrorKind> errors;      // failed records in scope by error_no, ascending
  std::vector<BenchData> bench;
};

// "dense_pack.x86 dense:K=8,M=8,N=8": how the report names a task.
std::string key_label(const std::string& task_name, const std::string& workload);

// Gathers the report of `scope` from the store at `db_path` and the bench files. Errors (each
// naming what and where): no store at db_path or not a kiln store; an unknown job; a model that
// cannot be read; a bench file unreadable or malformed.
Result<ReportData> gather_report(const std::string& db_path, const Scope& scope,
                                 const std::vector<std::string>& bench_files);

}  // namespace kiln::report
