// The job file (jobs/job_spec.h): every field read, every mistake named with its field.
#include "jobs/job_spec.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "tests/temp_dir.h"

namespace kiln::daemon {
namespace {

using kiln::testing::TempDir;

std::string error_of(const std::string& yaml, const std::string& base_dir = "") {
  Result<JobSpec> s = parse_job_spec(yaml, "job.yaml", base_dir);
  if (s.ok()) return "(accepted)";
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  return s.status().message();
}

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(JobSpecTest, ReadsEveryField) {
  TempDir dir;
  dir.write("m.onnx", "not read by the parser");
  Result<JobSpec> s = parse_job_spec(R"(
name: nightly
model: m.onnx
ops: [conv2d, dense]
input_shapes: {input: 1x3x224x224}
target: llvm
tuner: xgb-knob
tuner_options: {plan_size: 16, loss: reg, feature: knob, diversity_filter_ratio: 2}
seed: 7
transfer: false
scheduler: round-robin
budget: {trials: 500, trials_per_task: 100, time: 1h30m}
early_stopping: 50
measure: {number: 2, repeat: 5, min_repeat_ms: 10, timeout: 4, cooldown_interval: 0,
          cache_flush: true, threads: 1, build_timeout: 3, n_parallel: 2}
run_on: {tracker: "127.0.0.1:9190", key: znver5-2c, certs: farm}
priority: 5
export: {tvm_log: out.log, compiled_model: out.kiln}
)",
                                     "job.yaml", dir.path());
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->name, "nightly");
  EXPECT_EQ(s->model, dir.file("m.onnx"));
  EXPECT_EQ(s->ops, (std::vector<std::string>{"conv2d", "dense"}));
  ASSERT_EQ(s->input_shapes.size(), 1u);
  EXPECT_EQ(s->input_shapes[0].second, "1x3x224x224");
  EXPECT_EQ(s->tuner, "xgb-knob");
  EXPECT_EQ(s->tuner_settings.plan_size, 16);
  EXPECT_EQ(s->tuner_settings.loss, "reg");
  EXPECT_EQ(s->tuner_settings.feature, "knob");
  EXPECT_EQ(s->tuner_settings.diversity_filter_ratio, 2);
  EXPECT_EQ(s->seed, 7u);
  EXPECT_FALSE(s->transfer);
  EXPECT_EQ(s->scheduler, "round-robin");
  EXPECT_EQ(s->budget.trials, 500);
  EXPECT_EQ(s->budget.trials_per_task, 100);
  EXPECT_EQ(s->budget.seconds, 5400);
  EXPECT_EQ(s->early_stopping, 50);
  EXPECT_EQ(s->measure.measure.time.number, 2);
  EXPECT_EQ(s->measure.measure.time.repeat, 5);
  EXPECT_EQ(s->measure.measure.time.min_repeat_ms, 10);
  EXPECT_TRUE(s->measure.measure.time.enable_cpu_cache_flush);
  EXPECT_EQ(s->measure.timeout_s, 4);
  EXPECT_EQ(s->measure.cooldown_interval_s, 0);
  EXPECT_EQ(s->measure.threads, 1);
  EXPECT_EQ(s->build_timeout_s, 3);
  EXPECT_EQ(s->n_parallel, 2);
  EXPECT_EQ(s->run_on.tracker, "127.0.0.1:9190");
  EXPECT_EQ(s->run_on.key, "znver5-2c");
  EXPECT_EQ(s->run_on.certs_dir, dir.file("farm"));
  EXPECT_EQ(s->priority, 5);
  EXPECT_EQ(s->export_to.tvm_log, dir.file("out.log"));
  EXPECT_EQ(s->export_to.compiled_model, dir.file("out.kiln"));
}

TEST(JobSpecTest, WorkloadJobWithDefaults) {
  Result<JobSpec> s = parse_job_spec("workloads: [\"dense:M=16,N=16,K=16\"]\n", "job.yaml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->workloads.size(), 1u);
  EXPECT_EQ(s->tuner, "xgb");
  EXPECT_EQ(s->target, "llvm");
  EXPECT_EQ(s->priority, 0);
  EXPECT_FALSE(s->budget.trials || s->budget.trials_per_task || s->budget.seconds);
  EXPECT_TRUE(s->run_on.tracker.empty());
}

TEST(JobSpecTest, AModelJobIsTimedAsKilnTuneTimesAModel) {
  TempDir dir;
  dir.write("m.onnx", "not read by the parser");
  auto timing = [&](const std::string& yaml) {
    Result<JobSpec> s = parse_job_spec(yaml, "job.yaml", dir.path());
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? s->measure.measure.time : TimeOptions{};
  };
  // No timing given: TVM's protocol for a model on a CPU, caches flushed before each repeat.
  TimeOptions model = timing("model: m.onnx\nmeasure: {threads: 1}\n");
  EXPECT_EQ(model.number, 1);
  EXPECT_EQ(model.repeat, 10);
  EXPECT_EQ(model.min_repeat_ms, 0);
  EXPECT_TRUE(model.enable_cpu_cache_flush);
  EXPECT_TRUE(timing("model: m.onnx\n").enable_cpu_cache_flush);
  // Any timing key: the job's own protocol, AutoTVM's defaults for the rest.
  TimeOptions given = timing("model: m.onnx\nmeasure: {number: 2}\n");
  EXPECT_EQ(given.number, 2);
  EXPECT_EQ(given.repeat, 3);
  EXPECT_FALSE(given.enable_cpu_cache_flush);
  EXPECT_FALSE(timing("model: m.onnx\nmeasure: {cache_flush: false}\n").enable_cpu_cache_flush);
  // Workload jobs keep AutoTVM's LocalRunner defaults.
  TimeOptions workloads = timing("workloads: [\"dense:M=16,N=16,K=16\"]\n");
  EXPECT_EQ(workloads.number, 4);
  EXPECT_EQ(workloads.repeat, 3);
  EXPECT_FALSE(workloads.enable_cpu_cache_flush);
}

TEST(JobSpecTest, TheExampleJobFilesAreValid) {
  const std::filesystem::path configs = std::filesystem::path(KILN_SOURCE_DIR) / "configs/jobs";
  // The examples name only what a fresh clone makes: the MLP of scripts/make_mlp.py, written where
  // `kiln submit` runs (a directory of the user's, never the source tree).
  TempDir run_dir;
  const std::string make_mlp = "/usr/bin/python3 " + std::string(KILN_SOURCE_DIR) +
                               "/scripts/make_mlp.py " + run_dir.file("mlp.onnx") + " >/dev/null";
  ASSERT_EQ(std::system(make_mlp.c_str()), 0) << make_mlp;
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(configs)) {
    std::ifstream in(entry.path());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text.find("shared/"), std::string::npos) << entry.path() << " names ../shared";
    Result<JobSpec> s = parse_job_spec(text, entry.path().string(), run_dir.path());
    EXPECT_TRUE(s.ok()) << s.status().message();
    ++n;
  }
  EXPECT_GE(n, 2);
}

TEST(JobSpecTest, EachMistakeNamesItsField) {
  const std::string w = "workloads: [\"dense:M=16,N=16,K=16\"]\n";
  EXPECT_HAS(error_of(w + "budgett: {trials: 3}\n"), "job.yaml: budgett: unknown key");
  EXPECT_HAS(error_of(w + "budget: {trial: 3}\n"), "budget.trial: unknown key");
  EXPECT_HAS(error_of(w + "budget: {trials: -5}\n"), "budget.trials: expected an integer in [1,");
  EXPECT_HAS(error_of(w + "budget: {trials: 0}\n"), "budget.trials");
  EXPECT_HAS(error_of(w + "budget: {trials_per_task: -1}\n"), "budget.trials_per_task");
  EXPECT_HAS(error_of(w + "budget: {time: -3h}\n"), "budget.time: expected a positive duration");
  EXPECT_HAS(error_of(w + "budget: {trials: many}\n"),
             "budget.trials: expected an integer, got 'many'");
  EXPECT_HAS(error_of(w + "budget: [1, 2]\n"), "budget: expected a mapping");
  EXPECT_HAS(error_of(w + "priority: [1]\n"), "priority: expected an integer");
  EXPECT_HAS(error_of(w + "transfer: maybe\n"), "transfer: expected true or false");
  EXPECT_HAS(error_of(w + "target: 'llvm -mcpu=notacpu'\n"), "job.yaml: target: ");
  EXPECT_HAS(error_of(w + "tuner: magic\n"), "tuner: unknown tuner 'magic'");
  EXPECT_HAS(error_of(w + "tuner: xg\n"), "tuner: unknown tuner 'xg'");
  EXPECT_HAS(error_of(w + "tuner: random\ntuner_options: {loss: rank}\n"),
             "tuner_options: loss, feature and diversity_filter_ratio are for xgb tuners");
  EXPECT_HAS(error_of(w + "tuner_options: {loss: best}\n"), "tuner_options.loss");
  EXPECT_HAS(error_of(w + "scheduler: fifo\n"), "scheduler: expected gradient or round-robin");
  EXPECT_HAS(error_of(w + "measure: {timeout: 0}\n"), "measure.timeout");
  EXPECT_HAS(error_of(w + "measure: {number: 1.5}\n"), "measure.number: expected an integer");
  EXPECT_HAS(error_of(w + "run_on: cloud\n"), "run_on: expected local");
  EXPECT_HAS(error_of(w + "run_on: {tracker: 'h:1', key: k}\n"),
             "run_on: runners execute only signed");
  EXPECT_HAS(error_of(w + "run_on: {key: k, certs: d}\n"), "run_on.tracker: missing");
  EXPECT_HAS(error_of(w + "export: {compiled_model: m.kiln}\n"),
             "export.compiled_model: needs a model");
  EXPECT_HAS(error_of(w + "ops: [dense]\n"), "ops: is for a model job");
  EXPECT_HAS(error_of("workloads: [dense:M=16]\n"), "workloads[0]: ");
  EXPECT_HAS(error_of("workloads: [conv3d:N=1]\n"), "workloads[0]: ");
  EXPECT_HAS(error_of("workloads: dense:M=16,N=16,K=16\n"), "workloads: expected a list");
  EXPECT_HAS(error_of("workloads: [dense:M=16,N=16,K=16]\n"),
             "workloads[0]: 'dense:M=16' is followed by 'N=16': quote each workload");
  EXPECT_HAS(error_of(w + "template: nope.x86\n"), "workloads[0]: ");
  EXPECT_HAS(error_of("name: x\n"), "model: give either model");
  EXPECT_HAS(error_of(w + "model: m.onnx\n"), "model: give either model");
  EXPECT_HAS(error_of("model: /nonexistent/m.onnx\n"), "model: no such file: /nonexistent/m.onnx");
  EXPECT_HAS(error_of("- a\n- b\n"), "job.yaml: expected a mapping");
  EXPECT_HAS(error_of("a: [1, 2\n"), "job.yaml: not valid YAML");
  EXPECT_HAS(error_of(""), "job.yaml: expected a mapping");
}

TEST(JobSpecTest, ErrorsGiveTheLine) {
  EXPECT_HAS(error_of("workloads: [\"dense:M=16,N=16,K=16\"]\nbudget:\n  trials: -5\n"),
             "(line 3)");
}

}  // namespace
}  // namespace kiln::daemon
