// Tuning from Python: one task as AutoTVM's Tuner.tune runs it (the tuning job of tuner/tune_job.h
// with one task, on the local build pool and the isolated local runner, committing every batch to
// a record store), or a whole model under kiln's scheduler (tuner/model_tune.h). The GIL is
// released while tuning and taken back after each committed batch to call Python: the batch's
// records go to the callback, and a pending signal (Ctrl-C: KeyboardInterrupt) or an exception
// from the callback stops the tune once that batch is committed, as `kiln tune` stops on SIGINT;
// the exception is then raised to the caller.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <stdlib.h>

#include <filesystem>
#include <optional>
#include <stop_token>

#include "builder/build_pool.h"
#include "builder/target.h"
#include "common/duration.h"
#include "daemon/farm_watch.h"
#include "farm/signing.h"
#include "jobs/job_plan.h"
#include "ops/registry.h"
#include "python/src/bindings.h"
#include "python/src/status_error.h"
#include "runner/local_runner.h"
#include "runner/remote_runner.h"
#include "store/formats/log_file.h"
#include "store/formats/tvm_log.h"
#include "store/open_store.h"
#include "tuner/measure_options.h"
#include "tuner/model_tune.h"
#include "tuner/tune_job.h"

namespace py = pybind11;

namespace kiln::python {

namespace {

// What Python's measure_option(builder=LocalBuilder(...), runner=LocalRunner(...)) says, and the
// store: AutoTVM's names and defaults.
struct MeasureCall {
  int n_parallel = 0;  // builder processes; 0: one per core
  double build_timeout = 10;
  int number = 4;
  int repeat = 3;
  int min_repeat_ms = 0;
  double timeout = 10;
  double cooldown_interval = 0.1;
  bool enable_cpu_cache_flush = false;
  int threads = 0;
  std::string db;  // the record store; "" = a temporary one, removed afterwards
  // RPCRunner: measure on a kiln farm's runners of `key` through the tracker at `tracker`
  // (HOST:PORT; "" = the local runner), with the farm's credentials.
  std::string tracker;
  std::string key;
  int priority = 0;
  double runner_wait = 60;
  farm::ClientAuth auth;
  std::string signing_key_file;

  runner::RunnerOptions runner_options() const {
    runner::RunnerOptions o;
    o.measure.time.number = number;
    o.measure.time.repeat = repeat;
    o.measure.time.min_repeat_ms = min_repeat_ms;
    o.measure.time.enable_cpu_cache_flush = enable_cpu_cache_flush;
    o.timeout_s = timeout;
    o.cooldown_interval_s = cooldown_interval;
    o.threads = threads;
    return o;
  }
};

// The builder processes and the runner a call measures with, as `kiln tune` makes them: the
// isolated local runner, or the farm's runners for an RPCRunner.
std::unique_ptr<runner::Runner> make_runner(const MeasureCall& c,
                                            const runner::RunnerOptions& measure) {
  if (c.tracker.empty()) return std::make_unique<runner::LocalRunner>(measure);
  if (c.key.empty()) invalid("RPCRunner: key names the runners' device kind; it is empty");
  runner::RemoteRunnerOptions r;
  r.tracker = c.tracker;
  r.key = c.key;
  r.auth = c.auth;
  r.measure = measure;
  r.priority = c.priority;
  r.wait_s = c.runner_wait;
  r.client = "kiln python";
  const std::string key_file = farm::signing_key_file(c.auth, c.signing_key_file);
  if (key_file.empty()) {
    invalid(
        "RPCRunner: runners execute only signed artifacts: give certs=DIR, token_file=F or "
        "signing_key=F");
  }
  r.signing_key = value(farm::read_signing_key(key_file));
  return value(runner::RemoteRunner::create(std::move(r)));
}

// A farm whose runners are gone stops the tune (`stop`), as it stops `kiln tune`; the call then
// raises MeasureError with the reason (farm_lost), after the measured batches are committed.
struct Measurers {
  Measurers(const MeasureCall& c, std::stop_source& stop)
      : runner_options(c.runner_options()),
        build_pool(builder::BuildPoolOptions{c.n_parallel, c.build_timeout}),
        runner(make_runner(c, runner_options)),
        measure_options(tuner::measure_options_text(runner_options, c.build_timeout)),
        lease_s(tuner::lease_seconds(runner_options, c.build_timeout, build_pool.n_parallel())) {
    if (!c.tracker.empty()) {
      farm = std::make_unique<daemon::FarmWatch>(
          *runner, [&stop](const std::string&) { stop.request_stop(); });
    }
  }
  runner::Runner& measuring() { return farm ? *farm : *runner; }
  void farm_lost(int64_t fresh) const {
    if (farm && !farm->reason().empty()) {
      throw StatusError{StatusCode::kRuntime, farm->reason() + "; " + std::to_string(fresh) +
                                                  " trials saved before the farm was lost"};
    }
  }

  runner::RunnerOptions runner_options;
  builder::LocalBuildPool build_pool;
  std::unique_ptr<runner::Runner> runner;
  std::unique_ptr<daemon::FarmWatch> farm;
  std::string measure_options;
  double lease_s;
};

struct TuneCall {
  std::string task_name;
  std::string workload;
  std::string target;
  std::string tuner = "xgb";
  int plan_size = 64;
  std::optional<std::string> loss;
  std::optional<std::string> feature;
  std::optional<int> diversity_filter_ratio;
  uint64_t seed = 0;
  int64_t n_trial = 1000;
  std::optional<int64_t> early_stopping;
  bool transfer = false;                   // from the store's other workloads of the template
  std::vector<std::string> history_lines;  // load_history: log lines for the base model
  MeasureCall measure;
};

// A store for the call: the named one, or a fresh SQLite file in a private temporary directory
// that is removed when the call ends.
class CallStore {
 public:
  explicit CallStore(const std::string& db) {
    std::string location = db;
    if (location.empty()) {
      const char* tmp = getenv("TMPDIR");
      std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/kiln-python-XXXXXX";
      if (!mkdtemp(pattern.data())) {
        throw StatusError{StatusCode::kIo, "cannot make a temporary directory in " +
                                               pattern.substr(0, pattern.rfind('/'))};
      }
      dir_ = pattern;
      location = dir_ + "/records.db";
    }
    store_ = value(store::open_store(location));
  }
  ~CallStore() {
    store_.reset();
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }
  store::Store& operator*() { return *store_; }

 private:
  std::string dir_;
  std::unique_ptr<store::Store> store_;
};

py::dict record_dict(const store::Record& r, const nlohmann::json& args) {
  py::dict d;
  d["config_index"] = r.config_index;
  d["entity"] = r.entities.dump();
  d["error_no"] = r.error_no;
  d["costs"] = r.costs;
  d["all_cost"] = r.all_cost;
  d["timestamp"] = r.timestamp;
  d["error_msg"] = r.error_msg;
  d["flop"] = r.flop;
  Result<std::string> line = store::to_tvm_line(r, args);
  d["tvm_line"] = line.ok() ? py::cast(*line) : py::none();
  return d;
}

// Python work between batches: runs `work` with the GIL, and turns a pending signal or an
// exception into a stop request, keeping the exception to raise once the tune has returned.
class PythonTurn {
 public:
  explicit PythonTurn(std::stop_source& stop) : stop_(stop) {}
  template <typename F>
  void operator()(F&& work) {
    if (error_) return;
    py::gil_scoped_acquire gil;
    try {
      work();
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    } catch (py::error_already_set& e) {
      error_ = std::move(e);
      stop_.request_stop();
    } catch (const StatusError& e) {
      error_ = as_python_error(e);
      stop_.request_stop();
    }
  }
  // With the GIL held.
  void raise_if_failed() {
    if (error_) {
      py::error_already_set e = std::move(*error_);
      error_.reset();
      throw e;
    }
  }

 private:
  std::stop_source& stop_;
  std::optional<py::error_already_set> error_;
};

py::dict tune_one(const TuneCall& c, const py::object& on_batch) {
  const ops::Template* tmpl = ops::find_template(c.task_name);
  if (!tmpl) invalid("unknown task name '" + c.task_name + "'");
  ops::Workload workload = value(tmpl->normalize(value(ops::Workload::parse(c.workload))));
  Target target = value(builder::parse_target(c.target));
  nlohmann::json args = tmpl->tvm_args(workload);
  std::vector<store::Record> history;
  for (const std::string& line : c.history_lines) {
    history.push_back(value(store::parse_log_line(line)).record);
  }

  tuner::TuneJobOptions options;
  options.tuner = c.tuner;
  options.tuner_settings.plan_size = c.plan_size;
  options.tuner_settings.loss = c.loss;
  options.tuner_settings.feature = c.feature;
  options.tuner_settings.diversity_filter_ratio = c.diversity_filter_ratio;
  options.seed = c.seed;
  options.transfer = c.transfer || !history.empty();
  if (!history.empty()) options.transfer_records = &history;
  options.loop.n_trial = c.n_trial;
  options.loop.early_stopping = c.early_stopping;
  options.loop.source = "kiln python";

  std::stop_source stop;
  PythonTurn turn(stop);
  tuner::TuneJobResult result;
  {
    py::gil_scoped_release release;
    CallStore db(c.measure.db);
    Measurers m(c.measure, stop);
    options.loop.measure_options = m.measure_options;
    options.loop.lease_s = m.lease_s;
    tuner::TuneJob job({{tmpl, workload}}, target, options);

    store::RecordFilter filter;
    filter.target = target.to_string();
    filter.task_name = c.task_name;
    filter.workload = workload.to_string();
    // Records already in the store are resumed, not this run's results.
    int64_t last_id = 0;
    for (const store::Record& r : value((*db).records(filter))) last_id = std::max(last_id, r.id);

    tuner::TuneJobEvents events;
    events.batch_committed = [&](size_t, const tuner::TuneProgress& p) {
      filter.after_id = last_id;
      Result<std::vector<store::Record>> fresh = (*db).records(filter);
      turn([&] {
        std::vector<store::Record> records = value(std::move(fresh));
        py::list batch;
        for (const store::Record& r : records) {
          batch.append(record_dict(r, args));
          last_id = std::max(last_id, r.id);
        }
        py::dict progress;
        progress["done"] = p.done;
        progress["total"] = p.total;
        progress["current_flops"] = p.current_flops;
        progress["best_flops"] = p.best_flops;
        progress["wall_s"] = p.times.wall_s;
        if (!on_batch.is_none()) on_batch(progress, batch);
      });
    };
    Result<tuner::TuneJobResult> r =
        job.run(m.build_pool, m.measuring(), *db, events, stop.get_token());
    {
      py::gil_scoped_acquire gil;
      turn.raise_if_failed();
    }
    result = value(std::move(r));
    m.farm_lost(result.fresh);
  }
  py::dict out;
  const tuner::TuneProgress& p = result.tasks.at(0).progress;
  out["done"] = p.done;
  out["fresh"] = result.fresh;
  out["errors"] = p.errors;
  out["best_flops"] = p.best_flops;
  out["best"] = p.best ? py::object(record_dict(*p.best, args)) : py::none();
  out["interrupted"] = result.interrupted;
  out["wall_s"] = result.times.wall_s;
  out["build_s"] = result.times.build_s;
  out["run_s"] = result.times.run_s;
  out["store_s"] = result.times.store_s;
  return out;
}

struct ModelTuneCall {
  std::string model;  // an .onnx path
  std::map<std::string, std::vector<int64_t>> input_shapes;
  std::string target;
  std::vector<std::string> ops;
  std::optional<int64_t> trials;
  std::optional<int64_t> trials_per_task;
  std::optional<double> seconds;
  std::string scheduler = "gradient";
  std::string tuner = "xgb";
  uint64_t seed = 0;
  std::optional<int64_t> early_stopping;
  bool winograd = true;
  MeasureCall measure;
};

py::dict tune_model(const ModelTuneCall& c, const py::object& on_progress) {
  Target target = value(builder::parse_target(c.target));
  for (const std::string& op : c.ops) {
    if (!ops::find_operator(op)) {
      invalid("ops: unknown operator '" + op + "' (known: " + ops::operator_names() + ")");
    }
  }
  if (c.measure.db.empty()) invalid("kiln.tune: db= names the record store to tune into");
  frontend::ImportOptions import;
  import.input_shapes = c.input_shapes;
  tuner::ModelTuneOptions options;
  options.job.tuner = c.tuner;
  options.job.seed = c.seed;
  options.job.loop.early_stopping = c.early_stopping;
  options.job.loop.source = "kiln python";
  if (c.scheduler == "round-robin") {
    options.scheduler.strategy = tuner::SchedulerStrategy::kRoundRobin;
  } else if (c.scheduler != "gradient") {
    invalid("scheduler: expected 'gradient' or 'round-robin', got '" + c.scheduler + "'");
  }
  options.budget.total_trials = c.trials;
  options.budget.trials_per_task = c.trials_per_task;
  options.budget.seconds = c.seconds;
  if (!c.trials && !c.trials_per_task && !c.seconds) {
    invalid("kiln.tune: give a budget: time=\"8h\", trials= or trials_per_task=");
  }

  std::stop_source stop;
  PythonTurn turn(stop);
  py::dict out;
  {
    py::gil_scoped_release release;
    std::vector<tuner::ModelTask> tasks =
        value(daemon::model_tasks(c.model, import, c.ops, "ops", c.winograd));
    options.round_trials = daemon::round_trials(options.budget, tasks.size());
    CallStore db(c.measure.db);
    Measurers m(c.measure, stop);
    options.job.loop.measure_options = m.measure_options;
    options.job.loop.lease_s = m.lease_s;
    tuner::ModelTuneJob job(std::move(tasks), target, options);
    tuner::ModelTuneEvents events;
    events.progress = [&](const tuner::ModelTuneStatus& st) {
      turn([&] {
        py::dict d;
        d["trials"] = st.trials;
        d["fresh"] = st.fresh;
        d["elapsed_s"] = st.elapsed_s;
        d["latency_s"] = st.latency_s;
        d["current"] = st.current;
        if (!on_progress.is_none()) on_progress(d);
      });
    };
    Result<tuner::ModelTuneResult> r =
        job.run(m.build_pool, m.measuring(), *db, events, stop.get_token());
    py::gil_scoped_acquire gil;
    turn.raise_if_failed();
    tuner::ModelTuneResult result = value(std::move(r));
    m.farm_lost(result.status.fresh);
    bool complete = false;
    out["latency_s"] = job.estimated_latency(result.tasks, &complete);
    out["latency_complete"] = complete;
    out["trials"] = result.status.trials;
    out["fresh"] = result.status.fresh;
    out["elapsed_s"] = result.status.elapsed_s;
    out["interrupted"] = result.interrupted;
    out["out_of_time"] = result.out_of_time;
    py::list rows;
    for (size_t i = 0; i < job.tasks().size(); ++i) {
      py::dict row;
      row["name"] = std::string(job.tasks()[i].task.tmpl->name());
      row["workload"] = job.tasks()[i].task.workload.to_string();
      row["weight"] = job.tasks()[i].weight;
      row["trials"] = result.tasks[i].trials;
      row["best_seconds"] = result.tasks[i].best_seconds;
      rows.append(row);
    }
    out["tasks"] = rows;
  }
  return out;
}

}  // namespace

void add_tune_bindings(py::module_& m) {
  py::class_<MeasureCall>(m, "MeasureCall")
      .def(py::init<>())
      .def_readwrite("n_parallel", &MeasureCall::n_parallel)
      .def_readwrite("build_timeout", &MeasureCall::build_timeout)
      .def_readwrite("number", &MeasureCall::number)
      .def_readwrite("repeat", &MeasureCall::repeat)
      .def_readwrite("min_repeat_ms", &MeasureCall::min_repeat_ms)
      .def_readwrite("timeout", &MeasureCall::timeout)
      .def_readwrite("cooldown_interval", &MeasureCall::cooldown_interval)
      .def_readwrite("enable_cpu_cache_flush", &MeasureCall::enable_cpu_cache_flush)
      .def_readwrite("threads", &MeasureCall::threads)
      .def_readwrite("db", &MeasureCall::db)
      .def_readwrite("tracker", &MeasureCall::tracker)
      .def_readwrite("key", &MeasureCall::key)
      .def_readwrite("priority", &MeasureCall::priority)
      .def_readwrite("runner_wait", &MeasureCall::runner_wait)
      .def_property(
          "certs_dir", [](const MeasureCall& c) { return c.auth.certs_dir; },
          [](MeasureCall& c, const std::string& v) { c.auth.certs_dir = v; })
      .def_property(
          "token_file", [](const MeasureCall& c) { return c.auth.token_file; },
          [](MeasureCall& c, const std::string& v) { c.auth.token_file = v; })
      .def_property(
          "insecure", [](const MeasureCall& c) { return c.auth.insecure; },
          [](MeasureCall& c, bool v) { c.auth.insecure = v; })
      .def_readwrite("signing_key_file", &MeasureCall::signing_key_file);
  py::class_<TuneCall>(m, "TuneCall")
      .def(py::init<>())
      .def_readwrite("task_name", &TuneCall::task_name)
      .def_readwrite("workload", &TuneCall::workload)
      .def_readwrite("target", &TuneCall::target)
      .def_readwrite("tuner", &TuneCall::tuner)
      .def_readwrite("plan_size", &TuneCall::plan_size)
      .def_readwrite("loss", &TuneCall::loss)
      .def_readwrite("feature", &TuneCall::feature)
      .def_readwrite("diversity_filter_ratio", &TuneCall::diversity_filter_ratio)
      .def_readwrite("seed", &TuneCall::seed)
      .def_readwrite("n_trial", &TuneCall::n_trial)
      .def_readwrite("early_stopping", &TuneCall::early_stopping)
      .def_readwrite("transfer", &TuneCall::transfer)
      .def_readwrite("history_lines", &TuneCall::history_lines)
      .def_readwrite("measure", &TuneCall::measure);
  py::class_<ModelTuneCall>(m, "ModelTuneCall")
      .def(py::init<>())
      .def_readwrite("model", &ModelTuneCall::model)
      .def_readwrite("input_shapes", &ModelTuneCall::input_shapes)
      .def_readwrite("target", &ModelTuneCall::target)
      .def_readwrite("ops", &ModelTuneCall::ops)
      .def_readwrite("trials", &ModelTuneCall::trials)
      .def_readwrite("trials_per_task", &ModelTuneCall::trials_per_task)
      .def_readwrite("seconds", &ModelTuneCall::seconds)
      .def_readwrite("scheduler", &ModelTuneCall::scheduler)
      .def_readwrite("tuner", &ModelTuneCall::tuner)
      .def_readwrite("seed", &ModelTuneCall::seed)
      .def_readwrite("early_stopping", &ModelTuneCall::early_stopping)
      .def_readwrite("winograd", &ModelTuneCall::winograd)
      .def_readwrite("measure", &ModelTuneCall::measure);
  m.def("tune_task", &tune_one, py::arg("call"), py::arg("on_batch") = py::none());
  m.def("tune_model", &tune_model, py::arg("call"), py::arg("on_progress") = py::none());
  m.def(
      "parse_duration",
      [](const std::string& text) { return value(kiln::parse_duration("time", text)); },
      py::arg("text"));
  // A log file (TVM or kiln lines) into a store: kiln import.
  m.def(
      "import_log",
      [](const std::string& db, const std::string& path) {
        py::gil_scoped_release release;
        std::unique_ptr<store::Store> s = value(store::open_store(db));
        store::ImportReport r = value(store::import_file(*s, path));
        py::gil_scoped_acquire gil;
        py::dict d;
        d["imported"] = r.imported;
        d["duplicates"] = r.duplicates;
        d["skipped"] = r.skipped;
        return d;
      },
      py::arg("db"), py::arg("path"));
}

}  // namespace kiln::python
