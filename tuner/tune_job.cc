#include "tuner/tune_job.h"

#include <chrono>

#include "exchange/target_description.h"

namespace kiln::tuner {

TuneJob::TuneJob(std::vector<TuneJobTask> tasks, Target target, TuneJobOptions options)
    : tasks_(std::move(tasks)), target_(std::move(target)), options_(std::move(options)) {}

Status TuneJob::transfer(XgbTuner& tuner, const TuneJobTask& task, store::Store& store,
                         TuneTaskOutcome& outcome) const {
  std::vector<store::Record> others;
  const std::vector<store::Record>* source = options_.transfer_records;
  if (!source) {
    store::RecordFilter filter;
    filter.task_name = std::string(task.tmpl->name());
    // A cost model learns only from records that time the program measured now.
    filter.versions = store::Versions::kComparable;
    KILN_ASSIGN_OR_RETURN(std::vector<store::Record> all, store.records(filter));
    std::string workload = task.workload.to_string();
    for (store::Record& r : all) {
      if (r.workload != workload) others.push_back(std::move(r));
    }
    if (others.empty()) return Status::Ok();
    source = &others;
  }
  Result<TransferReport> report = tuner.transfer_from(*source);
  if (report.ok()) {
    outcome.transfer = *report;
  } else {
    outcome.transfer_skipped = report.status().message();
  }
  if (options_.transfer_records && (!report.ok() || !report->used)) {
    return InvalidArgument(std::string(task.tmpl->name()) + ": transfer learning from the " +
                           "given records did not happen: " +
                           (report.ok() ? "too few usable records" : report.status().message()));
  }
  return Status::Ok();
}

Result<TuneJobResult> TuneJob::run(builder::Builder& builder, runner::Runner& runner,
                                   store::Store& store, const TuneJobEvents& events,
                                   std::stop_token stop) {
  auto start = std::chrono::steady_clock::now();
  TuneJobResult result;
  // One run (store/run_times.h) for all the tasks of this call, unless the caller's is given.
  const std::string run_id = options_.loop.run_id.empty() ? unique_run_id() : options_.loop.run_id;
  for (size_t i = 0; i < tasks_.size() && !stop.stop_requested(); ++i) {
    const TuneJobTask& task = tasks_[i];
    if (events.task_started) events.task_started(i, task);
    ConfigSpace space = task.tmpl->space(task.workload);
    KILN_ASSIGN_OR_RETURN(
        std::unique_ptr<Tuner> search,
        make_tuner(options_.tuner,
                   {*task.tmpl, task.workload, space, describe(target_).template_info()},
                   options_.seed, options_.tuner_settings));
    TuneTaskOutcome outcome;
    outcome.task = task;
    if (auto* model_tuner = dynamic_cast<XgbTuner*>(search.get());
        model_tuner && (options_.transfer || options_.transfer_records)) {
      KILN_RETURN_IF_ERROR(transfer(*model_tuner, task, store, outcome));
      if (events.transfer_done && (outcome.transfer || !outcome.transfer_skipped.empty())) {
        events.transfer_done(i, outcome);
      }
    }
    TuneOptions loop = options_.loop;
    loop.stop = stop;
    loop.run_id = run_id;
    if (options_.measure_fallback_first) {
      loop.first_config =
          task.tmpl->default_config(task.workload, space, describe(target_).template_info())
              .index();
    }
    KILN_ASSIGN_OR_RETURN(outcome.progress,
                          tune_task(*task.tmpl, task.workload, target_, space, *search, builder,
                                    runner, store, loop, [&](const TuneProgress& p) {
                                      if (events.batch_committed) events.batch_committed(i, p);
                                    }));
    store::RecordFilter of_task = store::RecordFilter::of_task({task.tmpl, task.workload, target_});
    of_task.versions = store::Versions::kComparable;
    KILN_ASSIGN_OR_RETURN(std::vector<store::Record> records, store.records(of_task));
    for (const store::Record& r : records) {
      if (r.error_no != 0) ++outcome.errors_by_code[r.error_no];
    }
    result.times.build_s += outcome.progress.times.build_s;
    result.times.run_s += outcome.progress.times.run_s;
    result.times.store_s += outcome.progress.times.store_s;
    result.fresh += outcome.progress.done - outcome.progress.resumed - outcome.progress.concurrent;
    result.interrupted = outcome.progress.interrupted;
    if (events.task_finished) events.task_finished(i, outcome);
    result.tasks.push_back(std::move(outcome));
    if (result.interrupted) break;
  }
  if (stop.stop_requested() && result.tasks.size() < tasks_.size()) result.interrupted = true;
  result.times.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace kiln::tuner
