// report/report_data.h and report/report.h on real SQLite stores written by Store and
// JobStore: tasks split by source, trials and best-so-far, errors by kind, run times, a job's
// scope, a model's estimated latency and shares, bench files, and bad input.
#include "report/report_data.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "builder/target.h"
#include "exchange/target_description.h"
#include "jobs/job_plan.h"
#include "report/bench_file.h"
#include "report/report.h"
#include "report/report_html.h"
#include "store/job_store.h"
#include "store/open_store.h"
#include "tests/support/chart_markup.h"
#include "tests/temp_dir.h"

namespace kiln::report {
namespace {

using kiln::testing::count_of;
using kiln::testing::series_of_chart;
using kiln::testing::TempDir;

const std::string kMlp = std::string(KILN_SHARED_DIR) + "/models/mlp/mlp.onnx";

store::Record rec(const std::string& target, const std::string& tmpl, const std::string& workload,
                  int64_t index, double cost_s, int error_no, const std::string& source,
                  double timestamp) {
  store::Record r;
  r.target = target;
  r.task_name = tmpl;
  r.workload = workload;
  r.config_index = index;
  r.entities = nlohmann::json::array({nlohmann::json::array({"tile_y", "sp", {-1, index + 1}})});
  r.error_no = error_no;
  if (error_no == 0) r.costs = {cost_s};
  r.all_cost = 0.5;
  r.timestamp = timestamp;
  r.error_msg =
      error_no == 0 ? "" : "kind " + std::to_string(error_no) + " <oops> #" + std::to_string(index);
  r.flop = 1e6;  // GFLOPS = 1e-3 / cost in seconds
  r.source = source;
  return r;
}

const std::string kA = "dense:K=16,M=16,N=32";
const std::string kB = "dense:K=16,M=16,N=64";

TEST(ReportData, TasksSplitBySourceWithErrorsAndRuns) {
  TempDir dir;
  const std::string path = dir.file("r.db");
  {
    auto store = store::open_store(path);
    ASSERT_TRUE(store.ok()) << store.status().message();
    ASSERT_TRUE((*store)
                    ->append({rec("llvm", "dense_pack.x86", kA, 1, 2e-3, 0, "kiln tune", 100),
                              rec("llvm", "dense_pack.x86", kA, 2, 0, 4, "kiln tune", 101),
                              rec("llvm", "dense_pack.x86", kA, 3, 1e-3, 0, "kiln tune", 103),
                              rec("llvm", "dense_pack.x86", kA, 4, 0, 7, "kiln tune", 104),
                              rec("llvm", "dense_pack.x86", kA, 5, 0, 4, "kiln tune", 106)})
                    .ok());
    ASSERT_TRUE((*store)
                    ->append({rec("llvm", "dense_pack.x86", kA, 9, 0.5e-3, 0, "import:a.log", 50),
                              rec("llvm", "dense_pack.x86", kA, 8, 4e-3, 0, "import:a.log", 60)})
                    .ok());
    ASSERT_TRUE(
        (*store)->append({rec("llvm", "dense_nopack.x86", kB, 0, 1e-3, 0, "kiln tune", 200)}).ok());
    store::RunTimes t;
    t.run = "host/1/ab";
    t.target = "llvm";
    t.task_name = "dense_pack.x86";
    t.workload = kA;
    t.source = "kiln tune";
    t.started = 100;
    t.updated = 107;
    t.trials = 5;
    t.errors = 3;
    t.build_s = 1;
    t.run_s = 3;
    t.cooldown_s = 0.5;
    t.store_s = 0.2;
    t.wall_s = 5;
    ASSERT_TRUE((*store)->add_run_times(t).ok());
  }
  auto data = gather_report(path, {}, {});
  ASSERT_TRUE(data.ok()) << data.status().message();
  EXPECT_EQ(data->records, 8);
  ASSERT_EQ(data->tasks.size(), 2u);
  const TaskData& a = data->tasks[0];
  EXPECT_EQ(a.task_name, "dense_pack.x86");
  EXPECT_EQ(a.workload, kA);
  ASSERT_EQ(a.sources.size(), 2u);
  EXPECT_EQ(a.sources[0].source, "kiln tune");  // the most records first
  EXPECT_EQ(a.sources[1].source, "import:a.log");
  const std::vector<Trial>& trials = a.sources[0].trials;
  ASSERT_EQ(trials.size(), 5u);
  EXPECT_EQ(trials[0].number, 1);
  EXPECT_EQ(trials[4].number, 5);
  EXPECT_DOUBLE_EQ(trials[2].elapsed_s, 3);
  EXPECT_NEAR(trials[0].best_gflops, 0.5, 1e-9);
  EXPECT_NEAR(trials[1].best_gflops, 0.5, 1e-9);  // a failure keeps the best
  EXPECT_EQ(trials[1].error_no, 4);
  EXPECT_NEAR(trials[2].best_gflops, 1.0, 1e-9);
  EXPECT_EQ(a.sources[0].errors, 3);
  // One time axis per source over the scope: task B's record came 100 s after task A's first.
  EXPECT_DOUBLE_EQ(data->tasks[1].sources[0].trials[0].elapsed_s, 100);
  EXPECT_DOUBLE_EQ(a.sources[1].trials[0].elapsed_s, 0);  // the import keeps its own origin
  EXPECT_NEAR(a.sources[1].best_gflops, 2.0, 1e-9);
  ASSERT_TRUE(a.best.has_value());
  EXPECT_EQ(a.best->config_index, 9);  // the best of any source
  ASSERT_EQ(data->errors.size(), 2u);
  EXPECT_EQ(data->errors[0].error_no, 4);
  EXPECT_EQ(data->errors[0].count, 2);
  EXPECT_EQ(data->errors[0].example, "kind 4 <oops> #2");
  EXPECT_EQ(data->errors[1].error_no, 7);
  ASSERT_EQ(data->runs.size(), 1u);
  EXPECT_EQ(data->runs[0].run, "host/1/ab");
  EXPECT_FALSE(data->model.has_value());

  std::string html = render_page(*data, {});
  // Task A: a best line per source, then dots: successes, RUNTIME_DEVICE, RUN_TIMEOUT.
  EXPECT_EQ(series_of_chart(html, "best_vs_trials", 0), 2 + 3);
  EXPECT_EQ(series_of_chart(html, "best_vs_time", 0), 2);
  EXPECT_EQ(series_of_chart(html, "best_vs_trials", 1), 1 + 1);
  EXPECT_EQ(series_of_chart(html, "time_split", 0), 5);
  EXPECT_EQ(count_of(html, "data-series=\"failed: RUNTIME_DEVICE\""), 1);
  EXPECT_EQ(count_of(html, "data-series=\"best: import:a.log\""), 2);
  EXPECT_NE(html.find("kind 4 &lt;oops&gt; #2"), std::string::npos);  // escaped example
  EXPECT_EQ(html.find("<oops>"), std::string::npos);
  EXPECT_EQ(count_of(html, "<section class=\"task\""), 2);
  EXPECT_NE(html.find("default-src &#39;none&#39;"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);  // a static report has no script
  EXPECT_EQ(html.find("http:"), std::string::npos);
  EXPECT_EQ(html.find("https:"), std::string::npos);
}

TEST(ReportData, JobScopeTakesTheJobsTasksAndRecords) {
  TempDir dir;
  const std::string path = dir.file("r.db");
  const std::string target = builder::parse_target("llvm")->to_string();
  const std::string kPacked = "dense:K=16,M=16,N=32,bias=0";  // as the template normalizes it
  int64_t id = 0;
  {
    auto jobs = store::open_job_store(path);
    ASSERT_TRUE(jobs.ok()) << jobs.status().message();
    auto added = (*jobs)->add("small",
                              "name: small\nworkloads:\n  - dense:M=16,N=32,K=16\n"
                              "template: dense_pack.x86\ntarget: llvm\nbudget:\n  trials: 8\n",
                              dir.path(), 0, 1);
    ASSERT_TRUE(added.ok()) << added.status().message();
    id = *added;
    auto store = store::open_store(path);
    ASSERT_TRUE(store.ok());
    const std::string mine = store::job_source(id);
    ASSERT_TRUE((*store)
                    ->append({rec(target, "dense_pack.x86", kPacked, 1, 2e-3, 0, mine, 10),
                              rec(target, "dense_pack.x86", kPacked, 2, 0, 5, mine, 11),
                              rec(target, "dense_pack.x86", kPacked, 3, 1e-3, 0, "kiln tune", 12),
                              rec(target, "dense_pack.x86", kPacked, 4, 1e-3, 0, "kiln tune", 13),
                              rec(target, "dense_pack.x86", kPacked, 5, 1e-3, 0, "kiln tune", 14),
                              rec(target, "dense_nopack.x86", kPacked, 5, 1e-3, 0, mine, 14)})
                    .ok());
  }
  Scope scope;
  scope.job = id;
  auto data = gather_report(path, scope, {});
  ASSERT_TRUE(data.ok()) << data.status().message();
  ASSERT_EQ(data->tasks.size(), 1u);  // the job's template only
  EXPECT_EQ(data->tasks[0].target, target);
  EXPECT_EQ(data->tasks[0].workload, kPacked);
  EXPECT_EQ(data->tasks[0].task_name, "dense_pack.x86");
  ASSERT_EQ(data->tasks[0].sources.size(), 2u);
  EXPECT_EQ(data->tasks[0].sources[0].source, store::job_source(id));  // the job's first
  EXPECT_EQ(data->records, 2);  // the job's records in its tasks
  ASSERT_EQ(data->errors.size(), 1u);
  EXPECT_EQ(data->errors[0].error_no, 5);
  EXPECT_NE(data->scope.find("job " + std::to_string(id) + " (small"), std::string::npos);

  scope.job = id + 41;
  auto unknown = gather_report(path, scope, {});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("no job " + std::to_string(id + 41)), std::string::npos)
      << unknown.status().message();
  EXPECT_NE(unknown.status().message().find(path), std::string::npos);
}

// A job whose model file is gone (the reason it failed) is still reported, from its records.
TEST(ReportData, JobThatCannotBePlannedIsReportedFromItsRecords) {
  TempDir dir;
  const std::string path = dir.file("r.db");
  int64_t id = 0;
  {
    auto jobs = store::open_job_store(path);
    ASSERT_TRUE(jobs.ok());
    auto added = (*jobs)->add("gone", "name: gone\nmodel: gone.onnx\n", dir.path(), 0, 1);
    ASSERT_TRUE(added.ok());
    id = *added;
    auto store = store::open_store(path);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE(
        (*store)
            ->append({rec("llvm", "dense_pack.x86", kA, 1, 2e-3, 0, "kiln tune", 1),
                      rec("llvm", "dense_pack.x86", kB, 1, 2e-3, 0, store::job_source(id), 2)})
            .ok());
  }
  Scope scope;
  scope.job = id;
  auto data = gather_report(path, scope, {});
  ASSERT_TRUE(data.ok()) << data.status().message();
  ASSERT_EQ(data->tasks.size(), 1u);
  EXPECT_EQ(data->tasks[0].workload, kB);
  EXPECT_EQ(data->records, 1);
  EXPECT_FALSE(data->model.has_value());
  EXPECT_NE(data->scope.find("cannot be planned now"), std::string::npos) << data->scope;
  EXPECT_NE(data->scope.find("gone.onnx"), std::string::npos) << data->scope;
}

TEST(ReportData, ModelScopeEstimatesLatencyWithTheSchedulersSum) {
  auto tasks = daemon::model_tasks(kMlp, {}, {}, "ops", true);
  ASSERT_TRUE(tasks.ok()) << tasks.status().message();
  TempDir dir;
  const std::string path = dir.file("r.db");
  const std::string target = "llvm -mcpu=test";
  {
    auto store = store::open_store(path);
    ASSERT_TRUE(store.ok());
    std::vector<store::Record> batch;
    double t = 1000;
    // Every task: 2 ms, then its dense_pack alternative at 1 ms (the workload's best).
    for (const tuner::ModelTask& task : *tasks) {
      std::string tmpl(task.task.tmpl->name());
      std::string w = task.task.workload.to_string();
      batch.push_back(rec(target, tmpl, w, 1, 2e-3, 0, "kiln tune", t++));
      if (tmpl == "dense_pack.x86")
        batch.push_back(rec(target, tmpl, w, 2, 1e-3, 0, "kiln tune", t++));
    }
    ASSERT_TRUE((*store)->append(batch).ok());
  }
  Scope scope;
  scope.model_path = kMlp;
  auto data = gather_report(path, scope, {});
  ASSERT_TRUE(data.ok()) << data.status().message();
  ASSERT_TRUE(data->model.has_value());
  const ModelData& m = *data->model;
  ASSERT_EQ(m.tasks.size(), tasks->size());
  EXPECT_NE(data->scope.find(target), std::string::npos);  // the records' target was chosen
  // Three dense workloads, weight 1, best 1 ms each.
  EXPECT_TRUE(m.complete);
  EXPECT_NEAR(m.latency_s, 3e-3, 1e-12);
  double shares = 0;
  for (const ModelTaskShare& s : m.tasks) shares += s.share;
  EXPECT_NEAR(shares, 1.0, 1e-9);
  ASSERT_FALSE(m.latency.empty());
  EXPECT_NEAR(m.latency.back().latency_s, 3e-3, 1e-12);
  EXPECT_TRUE(m.latency.back().complete);
  EXPECT_FALSE(m.latency.front().complete);  // the first record covers one workload
  for (size_t i = 1; i < m.latency.size(); ++i) {
    if (m.latency[i].complete && m.latency[i - 1].complete) {
      EXPECT_LE(m.latency[i].latency_s, m.latency[i - 1].latency_s);
    }
  }
  std::string html = render_page(*data, {});
  // The complete estimate only (a partial one would rise as workloads get measured); no
  // untuned baseline: the target names no CPU this kiln knows, so no default config is known.
  EXPECT_EQ(series_of_chart(html, "latency_vs_time", 0), 1);
  EXPECT_FALSE(m.untuned_latency_s.has_value());
  EXPECT_EQ(series_of_chart(html, "task_share", 0), 1);
  EXPECT_EQ(series_of_chart(html, "trials_per_task", 0), 1);
  EXPECT_EQ(count_of(html, "<section class=\"task\""), static_cast<int>(tasks->size()));
}

// With each task's default config measured (what `kiln tune` of a model does first), the report
// knows the untuned model's latency, each task's speedup over its default config, and says what
// to tune next.
TEST(ReportData, ModelScopeComparesWithTheDefaultConfigsAndSaysWhatIsNext) {
  auto tasks = daemon::model_tasks(kMlp, {}, {}, "ops", true);
  ASSERT_TRUE(tasks.ok()) << tasks.status().message();
  TempDir dir;
  const std::string path = dir.file("r.db");
  const std::string target = "llvm -mcpu=znver4";
  const auto info = describe(*builder::parse_target(target)).template_info();
  {
    auto store = store::open_store(path);
    ASSERT_TRUE(store.ok());
    std::vector<store::Record> batch;
    double t = 1000;
    // Every task's default config: 2 ms; then dense_pack finds another config at 1 ms.
    for (const tuner::ModelTask& task : *tasks) {
      const ops::Template& tmpl = *task.task.tmpl;
      const ops::Workload& w = task.task.workload;
      const auto space = tmpl.space(w);
      const int64_t index = tmpl.default_config(w, space, info).index();
      batch.push_back(
          rec(target, std::string(tmpl.name()), w.to_string(), index, 2e-3, 0, "kiln tune", t++));
      if (tmpl.name() == "dense_pack.x86") {
        batch.push_back(rec(target, std::string(tmpl.name()), w.to_string(),
                            (index + 1) % space.size(), 1e-3, 0, "kiln tune", t++));
      }
    }
    ASSERT_TRUE((*store)->append(batch).ok());
  }
  Scope scope;
  scope.model_path = kMlp;
  auto data = gather_report(path, scope, {});
  ASSERT_TRUE(data.ok()) << data.status().message();
  ASSERT_TRUE(data->model.has_value());
  const ModelData& m = *data->model;
  EXPECT_TRUE(m.complete);
  EXPECT_NEAR(m.latency_s, 3e-3, 1e-12);
  ASSERT_TRUE(m.untuned_latency_s.has_value());
  EXPECT_NEAR(*m.untuned_latency_s, 6e-3, 1e-12);  // three workloads at their default's 2 ms
  for (size_t i = 0; i < m.tasks.size(); ++i) {
    EXPECT_NEAR(m.tasks[i].default_s, 2e-3, 1e-12) << m.tasks[i].label;
  }
  // The drawn estimate never rises: only complete points are drawn, each at most the one before.
  std::string html = render_page(*data, {});
  EXPECT_EQ(series_of_chart(html, "latency_vs_time", 0), 2);  // the estimate and the baseline
  EXPECT_NE(html.find("data-series=\"untuned (default configs)\""), std::string::npos);
  EXPECT_NE(html.find("<span id=\"untuned-latency\">6.0000 ms</span>"), std::string::npos) << html;
  EXPECT_NE(html.find("<span id=\"model-speedup\">2.00&times;</span>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"speedup\">2.00&times;</td>"), std::string::npos);
  EXPECT_NE(html.find("<p id=\"next-step\"><b>Next:</b> most of the estimated latency is in "),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("dense_pack.x86"), std::string::npos);
}

TEST(ReportData, BenchFilesShowRatiosPerPeer) {
  TempDir dir;
  const std::string path = dir.file("r.db");
  ASSERT_TRUE(store::open_store(path).ok());
  BenchResults kernels{"kernel_bench", {}};
  kernels.rows.push_back(
      {"dense:M=1,N=1000,K=512 T=1", 0.05, {{"oneDNN", 0.1}, {"OpenBLAS", 0.2}}, {}});
  kernels.rows.push_back(
      {"conv2d:... T=1", 1.0, {{"oneDNN", 0.5}, {"OpenBLAS", std::nullopt}}, {}});
  const std::string file = dir.file("k.json");
  ASSERT_TRUE(write_bench_file(file, kernels).ok());
  auto back = read_bench_file(file);
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->rows.size(), 2u);
  EXPECT_FALSE(back->rows[1].peer_ms.at("OpenBLAS").has_value());
  RenderOptions options;
  options.bench_files = {file};
  auto html = render_report_html(path, {}, options);
  ASSERT_TRUE(html.ok()) << html.status().message();
  EXPECT_EQ(series_of_chart(*html, "bench_ratio", 0), 2);
  EXPECT_NE(html->find(">2.00<"), std::string::npos);             // oneDNN / kiln on the dense row
  EXPECT_NE(html->find("id=\"no-records\""), std::string::npos);  // an empty store says so
}

TEST(ReportData, BadInputIsOneClearErrorNamingIt) {
  TempDir dir;
  const std::string path = dir.file("r.db");
  ASSERT_TRUE(store::open_store(path).ok());
  auto message = [&](const std::string& db, const Scope& scope,
                     const std::vector<std::string>& bench) {
    RenderOptions o;
    o.bench_files = bench;
    auto r = render_report_html(db, scope, o);
    EXPECT_FALSE(r.ok());
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_NE(message(dir.file("absent.db"), {}, {}).find("absent.db': no such file"),
            std::string::npos);
  const std::string not_db = dir.file("text.db");
  std::ofstream(not_db) << "hello, not SQLite\n";
  EXPECT_NE(message(not_db, {}, {}).find("text.db"), std::string::npos);
  Scope model;
  model.model_path = dir.file("missing.onnx");
  EXPECT_NE(message(path, model, {}).find("missing.onnx': no such file"), std::string::npos);
  model.model_path = not_db;  // not ONNX
  EXPECT_NE(message(path, model, {}).find("model '" + not_db + "'"), std::string::npos);
  const std::string bad_json = dir.file("bad.json");
  std::ofstream(bad_json) << "{\"kiln_bench\": 1, \"benchmark\": \"x\", \"rows\": [{\"label\": "
                             "\"a\", \"kiln_ms\": -3, \"peers\": {}}]}";
  std::string m = message(path, {}, {bad_json});
  EXPECT_NE(m.find("bad.json': rows[0].kiln_ms"), std::string::npos) << m;
  std::ofstream(dir.file("garbage.json")) << "{{{";
  EXPECT_NE(message(path, {}, {dir.file("garbage.json")}).find("garbage.json': not JSON"),
            std::string::npos);
  EXPECT_NE(message(path, {}, {dir.file("nope.json")})
                .find("cannot open bench file '" + dir.file("nope.json") + "'"),
            std::string::npos);
  Scope job;
  job.job = 1;
  EXPECT_NE(message(path, job, {}).find("no job 1"), std::string::npos);
}

TEST(ReportData, LivePageRefreshesItsContentInPlace) {
  TempDir dir;
  const std::string path = dir.file("r.db");
  ASSERT_TRUE(store::open_store(path).ok());
  RenderOptions o;
  o.refresh_seconds = 5;
  auto html = render_report_html(path, {}, o);
  ASSERT_TRUE(html.ok());
  EXPECT_EQ(count_of(*html, "<script>"), 1);
  EXPECT_NE(html->find("id=\"kiln-content\""), std::string::npos);
  EXPECT_NE(html->find("credentials:'same-origin'"), std::string::npos);
  EXPECT_NE(html->find("ms=5000"), std::string::npos);
  EXPECT_NE(html->find("connect-src &#39;self&#39;"), std::string::npos);
}

}  // namespace
}  // namespace kiln::report
