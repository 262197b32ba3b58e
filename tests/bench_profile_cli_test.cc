// `kiln bench --profile`: the time per kind of step (template kernels, layout transforms, other
// operators) and the executor's overhead add up to the mean of the timed runs, on the shared
// MLP compiled by the real kiln; with --db and --onnx, the run against the tuner's estimate.
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

TEST(BenchProfileCli, KindsAddUpToTheMeanAndTheEstimateIsCompared) {
  if (!fs::exists(kMlp)) GTEST_SKIP() << "no " << kMlp;
  testing::TempDir dir("kiln-bench-profile");
  const std::string onnx = (kMlp / "mlp.onnx").string(), db = dir.file("mlp.db"),
                    model = dir.file("mlp.kiln");
  testing::CommandResult r = testing::run_kiln(
      "tune " + onnx + " --db " + db +
      " --trials 6 --tuner random --number 1 --repeat 1 --cooldown-interval 0 --seed 3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = testing::run_kiln("compile " + onnx + " --db " + db + " -o " + model);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = testing::run_kiln("bench " + model + " --threads 1 --repeat 30 --warmup 2 --profile 2 --db " +
                        db + " --onnx " + onnx);
  ASSERT_EQ(r.exit_code, 0) << r.output;

  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex(R"(by kind, of the mean ([0-9.]+) ms)")))
      << r.output;
  const double mean = std::stod(m[1]);
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

  r = testing::run_kiln("bench " + model + " --profile 2 --db " + db);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--db and --onnx go together"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace kiln
