// The acceptance test of the operator registry (ops/registry.h): a test-only operator added in
// one file (tests/test_op/softsign_op.cc), linked into a second kiln binary with no other edit,
// works through every command: `kiln templates` lists it, `kiln tasks` finds it in an ONNX model,
// `kiln tune` (with --ops naming it) tunes it into a real store, `kiln compile` uses the store's
// config for it, and `kiln run` of the compiled model computes softsign. kiln itself, without
// the file, refuses the model.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <vector>

#include "store/open_store.h"
#include "tests/onnx_models.h"
#include "tests/run_kiln.h"
#include "tests/temp_dir.h"

namespace kiln {
namespace {

testing::CommandResult run_test_op_kiln(const std::string& args) {
  return testing::run_shell(std::string(KILN_TEST_OP_BINARY) + " " + args);
}

// x [2, 3, 8] -> Softsign -> y.
std::string softsign_model(const testing::TempDir& dir) {
  testing::OnnxModel m;
  m.input("x", {2, 3, 8});
  m.node("Softsign", {"x"}, {"y"}, "soft");
  m.output("y");
  std::string path = dir.file("softsign.onnx");
  std::ofstream out(path, std::ios::binary);
  m.proto().SerializeToOstream(&out);
  return path;
}

TEST(TestOperatorCli, OneFileOperatorWorksThroughEveryCommand) {
  testing::TempDir dir("kiln-test-op");
  std::string model = softsign_model(dir);

  // Without the operator's file, kiln does not know Softsign.
  testing::CommandResult r = testing::run_kiln("tasks " + model);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("Softsign"), std::string::npos) << r.output;

  r = run_test_op_kiln("templates");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("softsign\n  softsign.test\n"), std::string::npos) << r.output;

  r = run_test_op_kiln("tasks " + model);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("softsign.test"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("softsign:N=48"), std::string::npos) << r.output;

  std::string db = dir.file("softsign.db");
  r = run_test_op_kiln("tune " + model + " --db " + db +
                       " --ops softsign --trials 6 --tuner random --number 1 --repeat 1 "
                       "--cooldown-interval 0 --seed 5");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  {
    auto s = store::open_store(db, /*read_only=*/true);
    ASSERT_TRUE(s.ok()) << s.status().message();
    std::vector<store::Record> records = *(*s)->records();
    ASSERT_EQ(records.size(), 6u);
    for (const store::Record& rec : records) {
      EXPECT_EQ(rec.task_name, "softsign.test");
      EXPECT_EQ(rec.workload, "softsign:N=48");
    }
  }

  std::string compiled = dir.file("softsign.kiln");
  r = run_test_op_kiln("compile " + model + " --db " + db + " -o " + compiled);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("softsign.test"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("tuned"), std::string::npos) << r.output;

  std::vector<float> x(48);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.25f - 6.0f;
  std::string in = dir.file("x.bin"), out = dir.file("y.bin");
  {
    std::ofstream f(in, std::ios::binary);
    f.write(reinterpret_cast<const char*>(x.data()), x.size() * sizeof(float));
  }
  r = run_test_op_kiln("run " + compiled + " --input x=" + in + " --output " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::vector<float> y(x.size());
  std::ifstream f(out, std::ios::binary);
  f.read(reinterpret_cast<char*>(y.data()), y.size() * sizeof(float));
  ASSERT_EQ(f.gcount(), static_cast<std::streamsize>(y.size() * sizeof(float)));
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(y[i], x[i] / (1.0f + std::abs(x[i])), 1e-6f) << "at " << i;
  }
}

}  // namespace
}  // namespace kiln
