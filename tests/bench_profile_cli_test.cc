// `kiln bench --profile`: the time per kind of step (template kernels, layout transforms, other
// operators) and the executor's overhead add up to the mean of the plain runs taken in turn with
// the profiled ones, on the shared
// MLP compiled by the real kiln; with --db and --onnx, the run against the tuner's estimate; the
// template kernels' time by where their configs came from; --against-untuned, the tuned build
// timed against the same model compiled with default configs in the same run.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>

#include "tests/run_kiln.h"
#include "tests/temp_dir.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

const fs::path kMlp = fs::path(KILN_SHARED_DIR) / "models" / "mlp";

// A small tune of the model into `db` (each task's default config first), then `kiln compile`
// with its records into `artifact`: the compile's result (the tune's when that failed).
testing::CommandResult tune_and_compile(const std::string& onnx, const std::string& db,
                                        const std::string& artifact) {
  testing::CommandResult r = testing::run_kiln(
      "tune " + onnx + " --db " + db +
      " --trials 6 --tuner random --number 1 --repeat 1 --cooldown-interval 0 --seed 3");
  if (r.exit_code != 0) return r;
  return testing::run_kiln("compile " + onnx + " --db " + db + " -o " + artifact);
}

TEST(BenchProfileCli, KindsAddUpToTheMeanAndTheEstimateIsCompared) {
  if (!fs::exists(kMlp)) GTEST_SKIP() << "no " << kMlp;
  testing::TempDir dir("kiln-bench-profile");
  const std::string onnx = (kMlp / "mlp.onnx").string(), db = dir.file("mlp.db"),
                    model = dir.file("mlp.kiln");
  testing::CommandResult r = tune_and_compile(onnx, db, model);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = testing::run_kiln("bench " + model + " --threads 1 --repeat 30 --warmup 2 --profile 2 --db " +
                        db + " --onnx " + onnx);
  ASSERT_EQ(r.exit_code, 0) << r.output;

  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex(R"(by kind, of the mean ([0-9.]+) ms)")))
      << r.output;
  const double mean = std::stod(m[1]);
  EXPECT_NE(r.output.find(" plain runs taken in turn with the profiled ones"), std::string::npos)
      << r.output;
  std::map<std::string, double> kinds;
  std::istringstream lines(r.output);
  const std::regex kind_line(
      R"(^  (template kernels|layout transforms|other operators|executor overhead) +(-?[0-9.]+) ms)");
  for (std::string line; std::getline(lines, line);) {
    if (std::regex_search(line, m, kind_line)) kinds[m[1]] = std::stod(m[2]);
  }
  ASSERT_EQ(kinds.size(), 4u) << r.output;
  double sum = 0;
  for (const auto& [kind, ms] : kinds) sum += ms;
  EXPECT_NEAR(sum, mean, 4e-4) << r.output;             // four values printed to 1e-4 ms
  EXPECT_GT(kinds["template kernels"], 0) << r.output;  // the MLP is three dense kernels
  EXPECT_NE(r.output.find("(3 steps)"), std::string::npos) << r.output;
  // Every workload has records: the estimate is complete, and the run is compared with it.
  EXPECT_TRUE(std::regex_search(
      r.output, std::regex(R"(records: the tuner's estimate [0-9.]+ ms \(3 of 3 workloads)")))
      << r.output;
  EXPECT_NE(r.output.find("x the estimate"), std::string::npos) << r.output;
  // The three dense kernels are tuned: the slowest steps say so, and so does their subtotal.
  // Each says its floating-point rate, as does the kernels' subtotal.
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(, tuned, [0-9.]+ GFLOPS\))"))) << r.output;
  ASSERT_TRUE(std::regex_search(
      r.output, m,
      std::regex(R"(\n    ([0-9.]+) GFLOPS: the template kernels' flop over their time)")))
      << r.output;
  EXPECT_GT(std::stod(m[1]), 0) << r.output;
  EXPECT_TRUE(std::regex_search(
      r.output, std::regex(R"(\n    tuned +[0-9.]+ ms +[0-9.]+%  \(3 steps with tuned configs\))")))
      << r.output;

  r = testing::run_kiln("bench " + model + " --profile 2 --db " + db);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--db needs --onnx"), std::string::npos) << r.output;
}

TEST(BenchProfileCli, AgainstUntunedTimesBothBuildsInOneRun) {
  if (!fs::exists(kMlp)) GTEST_SKIP() << "no " << kMlp;
  testing::TempDir dir("kiln-bench-untuned");
  const std::string onnx = (kMlp / "mlp.onnx").string(), db = dir.file("mlp.db"),
                    model = dir.file("mlp.kiln"), plain = dir.file("plain.kiln");
  testing::CommandResult r = tune_and_compile(onnx, db, model);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The tune measured each task's default config first: compile says what tuning gained.
  EXPECT_TRUE(std::regex_search(
      r.output, std::regex(R"(records: template kernels [0-9.]+ ms with these configs against )"
                           R"([0-9.]+ ms with kiln's default configs: [0-9.]+x)")))
      << r.output;
  r = testing::run_kiln("bench " + model + " --threads 1 --repeat 9 --warmup 1 --against-untuned" +
                        " --onnx " + onnx);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(
      std::regex_search(r.output, std::regex(R"(\nuntuned build: mean [0-9.]+ ms  median )")))
      << r.output;
  EXPECT_TRUE(std::regex_search(
      r.output, std::regex(R"(is [0-9.]+x (faster|slower) than its untuned build \(medians )")))
      << r.output;
  EXPECT_NE(r.output.find("outputs of the two builds agree"), std::string::npos) << r.output;

  // An artifact compiled without records: every template kernel has a default config.
  ASSERT_EQ(testing::run_kiln("compile " + onnx + " -o " + plain).exit_code, 0);
  r = testing::run_kiln("bench " + plain + " --threads 1 --repeat 3 --profile 3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("(3 steps with default configs)"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("with tuned configs"), std::string::npos) << r.output;

  // Misuse: no --onnx, or an --onnx that is another model.
  r = testing::run_kiln("bench " + model + " --against-untuned");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--against-untuned needs --onnx MODEL.onnx"), std::string::npos)
      << r.output;
  const std::string other = std::string(KILN_SHARED_DIR) + "/onnx-node-tests/test_abs/model.onnx";
  if (fs::exists(other)) {
    r = testing::run_kiln("bench " + model + " --repeat 1 --against-untuned --onnx " + other);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("which is not an input of the model"), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace kiln
