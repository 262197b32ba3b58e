// Import refuses records kiln cannot use, each with its reason, and `kiln import` fails when a
// file's every record was refused; export writes TVM's exact text (targets, timeout all_cost),
// so a TVM log imported and exported again is the same bytes.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "store/formats/kiln_log.h"
#include "store/formats/log_file.h"
#include "store/formats/tvm_log.h"
#include "store/formats/tvm_target.h"
#include "tests/run_kiln.h"
#include "tests/temp_dir.h"
#include "tests/tvm_log_lines.h"

namespace kiln::store {
namespace {

namespace fs = std::filesystem;

std::string with_target(const std::string& tvm_target) {
  return replaced(kDenseLine, R"("llvm -keys=cpu ")", "\"" + tvm_target + "\"");
}
std::string with_result(const std::string& result) {
  return replaced(kDenseLine, "[[2.1e-05], 0, 0.84, 1700000000.0]", result);
}

// The error of parsing `line`, or "" when it parsed.
std::string rejection(const std::string& line) {
  Result<ImportedLine> parsed = parse_log_line(line);
  return parsed.ok() ? "" : parsed.status().message();
}

using kiln::testing::TempDir;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// ---------------------------------------------------------------------------------------------
// Rejected records.

TEST(ImportRejectTest, SuccessWhoseCostsAreNotPositiveAndFinite) {
  EXPECT_NE(rejection(with_result("[[0.0], 0, 0.84, 1700000000.0]")).find("(costs)[0] is 0.0"),
            std::string::npos);
  EXPECT_NE(rejection(with_result("[[2e-05, 0], 0, 0.84, 1700000000.0]")).find("(costs)[1] is 0"),
            std::string::npos);
  EXPECT_NE(rejection(with_result("[[-1e-05], 0, 0.84, 1700000000.0]")).find("(costs)[0]"),
            std::string::npos);
  // Non-finite costs cannot even be read: JSON has no inf, and Python writes Infinity / NaN.
  EXPECT_NE(rejection(with_result("[[1e999], 0, 0.84, 1700000000.0]")).find("overflow"),
            std::string::npos);
  EXPECT_NE(rejection(with_result("[[Infinity], 0, 0.84, 1700000000.0]")).find("Infinity"),
            std::string::npos);
  EXPECT_NE(rejection(with_result("[[NaN], 0, 0.84, 1700000000.0]")).find("NaN"),
            std::string::npos);
  EXPECT_NE(rejection(with_result("[[], 0, 0.84, 1700000000.0]")).find("empty"), std::string::npos);
}

TEST(ImportRejectTest, GpuTargetOnAnX86Template) {
  std::string why = rejection(
      with_target("cuda -keys=cuda,gpu -arch=sm_80 -max_num_threads=1024 -thread_warp_size=32"));
  EXPECT_NE(why.find("llvm targets only, not 'cuda'"), std::string::npos) << why;
  EXPECT_NE(rejection(with_target("opencl -keys=opencl,gpu ")).find("'opencl'"), std::string::npos);
  EXPECT_NE(rejection(with_target("llvm -keys=cpu mcpu")).find("'mcpu' is not of the form"),
            std::string::npos);
}

TEST(ImportRejectTest, NonEmptyKwargs) {
  std::string why = rejection(replaced(kDenseLine, R"("float32"], {}])",
                                       R"("float32"], {"auto_scheduler_rewritten_layout": ""}])"));
  EXPECT_NE(why.find("input[3] (kwargs) {\"auto_scheduler_rewritten_layout\":\"\"} is not empty"),
            std::string::npos)
      << why;
}

TEST(ImportRejectTest, KilnLinesAreHeldToTheSameRules) {
  ImportedLine good = *parse_tvm_line(kDenseLine);
  Record zero = good.record;
  zero.costs = {0.0};
  EXPECT_NE(rejection(*to_kiln_line(zero)).find("\"costs\"[0] is 0.0"), std::string::npos);
  Record gpu = good.record;
  gpu.target = "cuda -arch=sm_80";
  EXPECT_NE(rejection(*to_kiln_line(gpu)).find("llvm targets only"), std::string::npos);
}

TEST(ImportRejectTest, FailedMeasurementWithRealCostsWarnsThatTheyAreDropped) {
  Result<ImportedLine> parsed = parse_tvm_line(with_result("[[0.5], 4, 0.84, 1700000000.0]"));
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_TRUE(parsed->record.costs.empty());
  ASSERT_EQ(parsed->warnings.size(), 1u);
  EXPECT_NE(parsed->warnings[0].find("[0.5]"), std::string::npos) << parsed->warnings[0];
}

// ---------------------------------------------------------------------------------------------
// `kiln import` exit codes.

TEST(ImportCliTest, FileWhoseEveryRecordIsRejectedExitsTwoWithEachReason) {
  TempDir dir;
  std::string log =
      dir.write("bad.log", "# three bad records\n" + with_result("[[0.0], 0, 0.84, 1700000000.0]") +
                               "\n" + with_target("cuda -keys=cuda,gpu ") + "\n" +
                               replaced(kDenseLine, "{}]", R"({"x": 1}])") + "\n");
  testing::CommandResult r = testing::run_kiln("import " + log + " --db " + dir.file("r.db"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(log + ":2: result[0] (costs)[0] is 0.0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(log + ":3: input[0] (target)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(log + ":4: input[3] (kwargs)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("nothing imported from " + log), std::string::npos) << r.output;
}

TEST(ImportCliTest, ReimportIsAllDuplicatesAndExitsZero) {
  TempDir dir;
  std::string log =
      dir.write("good.log", kDenseLine + "\n" + with_target("llvm -keys=cpu -mcpu=znver5") + "\n");
  std::string import = "import " + log + " --db " + dir.file("r.db");
  testing::CommandResult first = testing::run_kiln(import);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  testing::CommandResult again = testing::run_kiln(import);
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("imported 0 records from " + log + " (2 lines, 2 duplicates"),
            std::string::npos)
      << again.output;
}

TEST(ImportCliTest, FileWithoutRecordsSaysSoAndExitsZero) {
  TempDir dir;
  std::string log = dir.write("empty.log", "# only a comment\n\n");
  testing::CommandResult r = testing::run_kiln("import " + log + " --db " + dir.file("r.db"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("no records in " + log), std::string::npos) << r.output;
}

// ---------------------------------------------------------------------------------------------
// Export: TVM's exact text.

TEST(TvmExportTest, EachTargetFormIsWrittenAsTvmsTargetStr) {
  // TVM ends an attribute-less target with a space ("llvm -keys=cpu "); with attributes, none.
  EXPECT_EQ(tvm_target_string("llvm"), "llvm -keys=cpu ");
  EXPECT_EQ(tvm_target_string("llvm -keys=cpu"), "llvm -keys=cpu ");
  EXPECT_EQ(tvm_target_string("llvm -keys=cpu -mcpu=znver5"), "llvm -keys=cpu -mcpu=znver5");
  EXPECT_EQ(tvm_target_string("llvm  -mcpu=znver5  "), "llvm -keys=cpu -mcpu=znver5");
  EXPECT_EQ(tvm_target_string("llvm -mcpu=znver5 -mattr=+avx2,+fma"),
            "llvm -keys=cpu -mattr=+avx2,+fma -mcpu=znver5");
  // Keys other than the default survive an import, so they export as they came.
  EXPECT_EQ(kiln_target_from_tvm("llvm -keys=x86,cpu -mcpu=znver5"),
            "llvm -mcpu=znver5 -keys=x86,cpu");
  EXPECT_EQ(tvm_target_string("llvm -mcpu=znver5 -keys=x86,cpu"),
            "llvm -keys=x86,cpu -mcpu=znver5");
}

TEST(TvmExportTest, TimeoutAllCostIsWrittenAsTvmsInt) {
  Record r = parse_tvm_line(kDenseLine)->record;
  r.error_no = static_cast<int>(MeasureError::kBuildTimeout);
  r.costs.clear();
  r.all_cost = 10.0;
  EXPECT_NE(to_tvm_line(r)->find(R"("result": [[1000000000.0], 6, 10, 1700000000.0])"),
            std::string::npos)
      << *to_tvm_line(r);
  r.all_cost = 10.5;  // a timeout setting of 10.5 s was a float in TVM too
  EXPECT_NE(to_tvm_line(r)->find("6, 10.5, "), std::string::npos) << *to_tvm_line(r);
  r.error_no = static_cast<int>(MeasureError::kCompileHost);  // a measured time: a float
  r.all_cost = 3.0;
  EXPECT_NE(to_tvm_line(r)->find("2, 3.0, "), std::string::npos) << *to_tvm_line(r);
}

TEST(TvmExportTest, TvmLogImportedThenExportedIsTheSameBytes) {
  const std::string log_text =
      kDenseLine + "\n" + with_target("llvm -keys=cpu -mcpu=znver5") + "\n" +
      replaced(with_target("llvm -keys=cpu -mattr=+avx2,+fma -mcpu=core-avx2"),
               "[[2.1e-05], 0, 0.84, 1700000000.0]",
               "[[1.25e-05, 1.5e-05], 0, 0.5309267044067383, 1676344759.520081]") +
      "\n" + with_target("llvm -keys=x86,cpu -mcpu=znver5") + "\n" +
      with_result("[[1000000000.0], 6, 10, 1700000003.25]") + "\n" +
      with_result("[[1000000000.0], 7, 10, 1700000004.0]") + "\n" +
      with_result("[[1000000000.0], 1, 0.0123, 1700000005.0]") + "\n";
  TempDir dir;
  std::string log = dir.write("tvm.log", log_text);
  std::string db = dir.file("r.db");
  testing::CommandResult imported = testing::run_kiln("import " + log + " --db " + db);
  ASSERT_EQ(imported.exit_code, 0) << imported.output;
  ASSERT_NE(imported.output.find("imported 7 records"), std::string::npos) << imported.output;
  std::string out = dir.file("out.log");
  testing::CommandResult exported =
      testing::run_kiln("export --db " + db + " --format tvm -o " + out);
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  EXPECT_EQ(read_file(out), log_text);
}

}  // namespace
}  // namespace kiln::store
