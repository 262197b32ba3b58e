// Log formats: Python-exact JSON output, TVM target strings, TVM autotvm v0.2 lines written
// byte-identical to TVM's (the real conv2d line of autotvm.md §3) and read back with every field
// checked, kiln's own lines, and file import/export with per-line reports for bad lines.
#include "store/formats/tvm_log.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "ops/registry.h"
#include "ops/tvm_args_parse.h"
#include "store/formats/kiln_log.h"
#include "store/formats/log_file.h"
#include "store/formats/py_json.h"
#include "store/formats/tvm_target.h"
#include "store/open_store.h"
#include "tests/temp_dir.h"
#include "tests/tvm_log_lines.h"

namespace kiln::store {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

// The real TVM 0.10 line quoted in autotvm.md §3 (x86 conv2d).
const std::string kConvLine010 =
    R"({"input": ["llvm -keys=cpu ", "conv2d_NCHWc.x86", [["TENSOR", [1, 3, 224, 224], "float32"], ["TENSOR", [64, 3, 7, 7], "float32"], [2, 2], [3, 3, 3, 3], [1, 1], "NCHW", "NCHW", "float32"], {}], "config": {"index": 172, "code_hash": null, "entity": [["tile_ic", "sp", [-1, 1]], ["tile_oc", "sp", [-1, 4]], ["tile_ow", "sp", [-1, 1]], ["unroll_kw", "ot", false]]}, "result": [[0.0045656413], 0, 0.5309267044067383, 1676344759.520081], "version": 0.2, "tvm_version": "0.10.0"})";
// The same measurement as kiln writes it (kiln claims TVM 0.16's format).
std::string conv_line_016() {
  std::string line = kConvLine010;
  line.replace(line.find("0.10.0"), 6, "0.16.0");
  return line;
}
const std::string kConvWorkload =
    "conv2d:C=3,H=224,K=64,N=1,R=7,S=7,W=224,dilation=1,groups=1,pad=3,stride=2";
using kiln::testing::TempDir;

// ---------------------------------------------------------------------------------------------
// Python-exact JSON.

TEST(PyJsonTest, FloatsPrintLikePythonRepr) {
  EXPECT_EQ(py_float_repr(0.0045656413), "0.0045656413");
  EXPECT_EQ(py_float_repr(1e9), "1000000000.0");
  EXPECT_EQ(py_float_repr(2.1e-05), "2.1e-05");
  EXPECT_EQ(py_float_repr(1e-4), "0.0001");
  EXPECT_EQ(py_float_repr(1.5e-4), "0.00015");
  EXPECT_EQ(py_float_repr(1e16), "1e+16");
  EXPECT_EQ(py_float_repr(1e15), "1000000000000000.0");
  EXPECT_EQ(py_float_repr(1234567890123456.7), "1234567890123456.8");
  EXPECT_EQ(py_float_repr(12345678901234567.0), "1.2345678901234568e+16");
  EXPECT_EQ(py_float_repr(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(py_float_repr(1676344759.520081), "1676344759.520081");
  EXPECT_EQ(py_float_repr(0.5309267044067383), "0.5309267044067383");
  EXPECT_EQ(py_float_repr(0.2), "0.2");
  EXPECT_EQ(py_float_repr(1.0), "1.0");
  EXPECT_EQ(py_float_repr(-0.0), "-0.0");
  EXPECT_EQ(py_float_repr(0.0), "0.0");
  EXPECT_EQ(py_float_repr(-123.456), "-123.456");
  EXPECT_EQ(py_float_repr(1.5e300), "1.5e+300");
  EXPECT_EQ(py_float_repr(5e-324), "5e-324");
  EXPECT_EQ(py_float_repr(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
}

TEST(PyJsonTest, DumpsUsesPythonSeparatorsAndEscapes) {
  ordered_json v = ordered_json::object();
  v["b"] = ordered_json::array({1, -2, 3.5, true, nullptr, "x"});
  v["a"] = ordered_json::object();
  v["e"] = ordered_json::array();
  v["s"] = "q\"\\\n\t\x01\x7f \xc3\xa9 \xf0\x9f\x94\xa5";
  auto text = py_json_dumps(v);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, R"({"b": [1, -2, 3.5, true, null, "x"], "a": {}, "e": [], )"
                   R"("s": "q\"\\\n\t\u0001\u007f \u00e9 \ud83d\udd25"})");
  EXPECT_FALSE(py_json_dumps(json(std::nan(""))).ok());
  EXPECT_FALSE(py_json_dumps(json(std::numeric_limits<double>::infinity())).ok());
  EXPECT_FALSE(py_json_dumps(json(std::string("\xff"))).ok());  // not UTF-8
  EXPECT_EQ(*py_json_dumps(json(18446744073709551615ull)), "18446744073709551615");
}

// ---------------------------------------------------------------------------------------------
// Target strings.

TEST(TvmTargetTest, KilnToTvmAddsKeysAndSortsAttributes) {
  EXPECT_EQ(tvm_target_string("llvm"), "llvm -keys=cpu ");
  EXPECT_EQ(tvm_target_string("llvm -mcpu=znver5"), "llvm -keys=cpu -mcpu=znver5");
  EXPECT_EQ(tvm_target_string("llvm -mcpu=znver5 -mattr=+avx2,+fma -mtriple=x86_64-pc-linux-gnu"),
            "llvm -keys=cpu -mattr=+avx2,+fma -mcpu=znver5 -mtriple=x86_64-pc-linux-gnu");
}

TEST(TvmTargetTest, TvmToKilnDropsKeysAndMapsTarget) {
  EXPECT_EQ(kiln_target_from_tvm("llvm -keys=cpu "), "llvm");
  EXPECT_EQ(kiln_target_from_tvm("llvm -keys=cpu -mcpu=znver5"), "llvm -mcpu=znver5");
  EXPECT_EQ(kiln_target_from_tvm("llvm -keys=cpu -mattr=+avx2 -mcpu=core-avx2 -target=x86_64"),
            "llvm -mcpu=core-avx2 -mattr=+avx2 -mtriple=x86_64");
  EXPECT_EQ(kiln_target_from_tvm("llvm -keys=cpu -model=epyc -mcpu=znver4"),
            "llvm -mcpu=znver4 -model=epyc");
  for (const char* kiln : {"llvm", "llvm -mcpu=znver5", "llvm -mcpu=x -mattr=+a -mtriple=t"}) {
    EXPECT_EQ(kiln_target_from_tvm(tvm_target_string(kiln)), kiln);
  }
}

// ---------------------------------------------------------------------------------------------
// TVM lines out.

TEST(TvmLineTest, LowLevelFormatterReproducesTheRealLine) {
  json args = json::parse(
      R"([["TENSOR", [1, 3, 224, 224], "float32"], ["TENSOR", [64, 3, 7, 7], "float32"],
          [2, 2], [3, 3, 3, 3], [1, 1], "NCHW", "NCHW", "float32"])");
  ordered_json config = ordered_json::parse(
      R"({"index": 172, "code_hash": null, "entity": [["tile_ic", "sp", [-1, 1]],
          ["tile_oc", "sp", [-1, 4]], ["tile_ow", "sp", [-1, 1]], ["unroll_kw", "ot", false]]})");
  auto line = format_tvm_line("llvm -keys=cpu ", "conv2d_NCHWc.x86", args, config, {0.0045656413},
                              0, 0.5309267044067383, 1676344759.520081, "0.10.0");
  ASSERT_TRUE(line.ok()) << line.status().message();
  EXPECT_EQ(*line, kConvLine010);
}

Record conv_record() {
  const ops::Template* conv = ops::find_template("conv2d_NCHWc.x86");
  EXPECT_NE(conv, nullptr);
  auto w = conv->normalize(
      *ops::Workload::parse("conv2d:N=1,C=3,H=224,W=224,K=64,R=7,S=7,stride=2,pad=3"));
  EXPECT_TRUE(w.ok()) << w.status().message();
  ConfigSpace space = conv->space(*w);
  EXPECT_EQ(space.range_length(), 308);
  Record r;
  r.target = "llvm";
  r.task_name = "conv2d_NCHWc.x86";
  r.workload = w->to_string();
  r.config_index = 172;
  r.entities = json::parse(space.get(172).to_json()["entity"].dump());
  r.costs = {0.0045656413};
  r.all_cost = 0.5309267044067383;
  r.timestamp = 1676344759.520081;
  r.flop = conv->flop(*w);
  r.source = "test";
  return r;
}

TEST(TvmLineTest, ConvRecordFromTheTemplateIsTheRealLine) {
  Record r = conv_record();
  EXPECT_EQ(r.workload, kConvWorkload);
  auto line = to_tvm_line(r);
  ASSERT_TRUE(line.ok()) << line.status().message();
  EXPECT_EQ(*line, conv_line_016());
}

TEST(TvmLineTest, FailedMeasurementIsWrittenWithTvmsBillionSecondCost) {
  Record r = conv_record();
  r.error_no = static_cast<int>(MeasureError::kRuntimeDevice);
  r.costs.clear();
  r.error_msg = "segfault";
  auto line = to_tvm_line(r);
  ASSERT_TRUE(line.ok()) << line.status().message();
  EXPECT_NE(line->find(R"("result": [[1000000000.0], 4, 0.5309267044067383, )"), std::string::npos)
      << *line;
}

TEST(TvmLineTest, UnknownTaskOrBadWorkloadCannotBeWritten) {
  Record r = conv_record();
  r.task_name = "conv2d_nchw.cuda";
  EXPECT_FALSE(to_tvm_line(r).ok());
  r = conv_record();
  r.workload = "conv2d:N=1";
  EXPECT_FALSE(to_tvm_line(r).ok());
}

// ---------------------------------------------------------------------------------------------
// TVM lines in.

// For every template: a record -> TVM line -> the same record (checks that args map back).
TEST(TvmLineTest, EveryTemplateRoundTripsThroughTvmLines) {
  const std::pair<const char*, const char*> cases[] = {
      {"dense_nopack.x86", "dense:M=4,N=8,K=16"},
      {"dense_pack.x86", "dense:M=4,N=8,K=16,bias=1"},
      {"conv2d_NCHWc.x86", "conv2d:N=1,C=8,H=8,W=8,K=16,R=1,S=1"},
      {"conv2d_NCHWc.x86",
       "conv2d:N=2,C=4,H=9,W=10,K=8,R=3,S=3,stride_h=1,stride_w=2,pad_h=0,pad_w=1,dilation=2"},
      {"depthwise_conv2d_NCHWc.x86", "depthwise_conv2d:N=1,C=8,H=8,W=8,R=3,S=3,pad=1"},
      {"batch_matmul.x86", "batch_matmul:B=2,M=4,N=8,K=16"},
  };
  for (const auto& [task, workload_text] : cases) {
    SCOPED_TRACE(std::string(task) + " " + workload_text);
    const ops::Template* t = ops::find_template(task);
    ASSERT_NE(t, nullptr);
    auto w = t->normalize(*ops::Workload::parse(workload_text));
    ASSERT_TRUE(w.ok()) << w.status().message();
    ConfigSpace space = t->space(*w);
    int64_t index = space.range_length() / 3;
    while (!space.is_index_valid(index)) ++index;
    Record r;
    r.target = "llvm -mcpu=znver5";
    r.task_name = task;
    r.workload = w->to_string();
    r.config_index = index;
    r.entities = json::parse(space.get(index).to_json()["entity"].dump());
    r.costs = {1e-3, 2e-3};
    r.all_cost = 1.25;
    r.timestamp = 1700000000.5;
    r.flop = t->flop(*w);
    auto line = to_tvm_line(r);
    ASSERT_TRUE(line.ok()) << line.status().message();
    auto back = parse_tvm_line(*line);
    ASSERT_TRUE(back.ok()) << back.status().message() << "\n" << *line;
    EXPECT_TRUE(back->warnings.empty());
    // TVM's task is the workload without kiln's fused dense bias (ops::task_workload).
    r.workload = ops::task_workload(*t, *w).to_string();
    EXPECT_EQ(back->record, r) << *line;
  }
}

TEST(TvmLineTest, RealLineParsesToTheSameRecordAndBack) {
  auto parsed = parse_tvm_line(kConvLine010);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_TRUE(parsed->warnings.empty());
  Record expected = conv_record();
  expected.source = "";
  EXPECT_EQ(parsed->record, expected);
  EXPECT_EQ(*to_tvm_line(parsed->record), conv_line_016());
}

TEST(TvmLineTest, SecondLineOfTheLogDecodesToTheSetOrderEntities) {
  // Index 47 -> digits (1, 2, 3, 0) -> [-1, 3], [-1, 4], [-1, 64], true (autotvm.md §3).
  std::string line = replaced(
      kConvLine010,
      R"("index": 172, "code_hash": null, "entity": [["tile_ic", "sp", [-1, 1]], ["tile_oc", "sp", [-1, 4]], ["tile_ow", "sp", [-1, 1]], ["unroll_kw", "ot", false]])",
      R"("index": 47, "code_hash": null, "entity": [["tile_ic", "sp", [-1, 3]], ["tile_oc", "sp", [-1, 4]], ["tile_ow", "sp", [-1, 64]], ["unroll_kw", "ot", true]])");
  auto parsed = parse_tvm_line(line);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->record.config_index, 47);
  EXPECT_TRUE(parsed->warnings.empty());
}

TEST(TvmLineTest, DenseExampleRoundTrips) {
  auto parsed = parse_tvm_line(kDenseLine);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  const Record& r = parsed->record;
  EXPECT_EQ(r.target, "llvm");
  EXPECT_EQ(r.task_name, "dense_nopack.x86");
  EXPECT_EQ(r.workload, "dense:K=512,M=1,N=1000,bias=0");
  EXPECT_EQ(r.config_index, 68);
  EXPECT_EQ(r.costs, std::vector<double>{2.1e-05});
  EXPECT_DOUBLE_EQ(r.flop, 2.0 * 1 * 1000 * 512);
  EXPECT_EQ(*to_tvm_line(r), kDenseLine);
}

TEST(TvmLineTest, FailedLineHasNoCostsAndAnExplanation) {
  std::string line = replaced(kDenseLine, "[[2.1e-05], 0,", "[[1000000000.0], 6,");
  auto parsed = parse_tvm_line(line);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->record.error_no, static_cast<int>(MeasureError::kBuildTimeout));
  EXPECT_TRUE(parsed->record.costs.empty());
  EXPECT_NE(parsed->record.error_msg.find("BUILD_TIMEOUT"), std::string::npos);
  EXPECT_EQ(*to_tvm_line(parsed->record), line);
}

TEST(TvmLineTest, IndexDisagreeingWithEntitiesIsAWarningAndEntitiesWin) {
  auto parsed = parse_tvm_line(replaced(kDenseLine, R"("index": 68)", R"("index": 69)"));
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->record.config_index, 68);
  ASSERT_EQ(parsed->warnings.size(), 1u);
  EXPECT_NE(parsed->warnings[0].find("69"), std::string::npos) << parsed->warnings[0];
}

TEST(TvmLineTest, OldTargetOptionBecomesMtriple) {
  auto parsed =
      parse_tvm_line(replaced(kDenseLine, R"("llvm -keys=cpu ")",
                              R"("llvm -keys=cpu -mcpu=znver4 -target=x86_64-linux-gnu")"));
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->record.target, "llvm -mcpu=znver4 -mtriple=x86_64-linux-gnu");
}

// Each malformed line gives an error whose message contains `why`.
struct BadLine {
  std::string line;
  std::string why;
};

std::vector<BadLine> bad_lines() {
  const std::string& d = kDenseLine;
  return {
      {d.substr(0, 120), "not valid JSON"},
      {"", "not valid JSON"},
      {"[1, 2, 3]", "JSON object"},
      {"\xff\xfe garbage", "not valid JSON"},
      {R"({"i": ["llvm", "dense", [], {}], "r": [[1.0], 0, 1, 1], "v": 0.1})", "v0.1"},
      {replaced(d, R"("version": 0.2)", R"("version": 0.3)"), "log version"},
      {replaced(d, "dense_nopack.x86", "conv2d_nchw.cuda"), "unknown task name 'conv2d_nchw.cuda'"},
      {replaced(d, R"(["tile_x", "sp", [-1, 8]])", R"(["tile_x", "sp", [-1, 7]])"), "tile_x"},
      {replaced(d, R"(["tile_x", "sp", [-1, 8]], )", ""), "tile_x"},
      {replaced(d, R"(["tile_x", "sp", [-1, 8]])", R"(["tile_x", "ot", [-1, 8]])"), "tile_x"},
      {replaced(d, R"(["tile_x", "sp", [-1, 8]])", R"(["bogus", "sp", [-1, 8]])"), "bogus"},
      {replaced(d, R"("entity": [)", R"("entity": 5, "x": [)"), "entity"},
      {replaced(d, "0, 0.84,", R"("0", 0.84,)"), "error_no"},
      {replaced(d, "0, 0.84,", "0.5, 0.84,"), "error_no"},
      {replaced(d, "0, 0.84,", "9, 0.84,"), "error_no"},
      {replaced(d, "0, 0.84,", "-1, 0.84,"), "error_no"},
      {replaced(d, "[[2.1e-05], 0,", "[[], 0,"), "costs"},
      {replaced(d, "[[2.1e-05], 0,", R"([["fast"], 0,)"), "costs"},
      {replaced(d, "[[2.1e-05], 0,", "[2.1e-05, 0,"), "costs"},
      {replaced(d, "[[2.1e-05], 0,", "[[-2.1e-05], 0,"), "cost"},
      {replaced(d, "0.84, 1700000000.0]", "0.84]"), "\"result\""},
      {replaced(d, "0.84, 1700000000.0]", R"(0.84, "yesterday"])"), "timestamp"},
      {replaced(d, R"(, "result": [[2.1e-05], 0, 0.84, 1700000000.0])", ""),
       "missing key \"result\""},
      {replaced(d, R"("config": {"index": 68, )", R"("config": {)"), "missing key \"index\""},
      {replaced(d, R"("index": 68)", R"("index": "68")"), "config.index"},
      {replaced(d, R"("input": [)", R"("inputs": [)"), "missing key \"input\""},
      {replaced(d, R"(, {}], "config")", R"(], "config")"), "\"input\""},
      {replaced(d, R"(["llvm -keys=cpu ", )", R"([42, )"), "target"},
      {replaced(d, R"("float32"], null)", R"("float16"], null)"),
       "not a workload kiln can represent"},
      {replaced(d, R"([1000, 512], "float32"])", R"([1000, 511], "float32"])"),
       "not a workload kiln"},
      {replaced(d, R"(["TENSOR", [1, 512], "float32"])", R"(["TENSOR"])"), "dense_nopack.x86"},
      {replaced(d, R"([1, 512])", R"([0, 512])"), "M=0"},
  };
}

TEST(TvmLineTest, MalformedLinesGiveReasonsNotCrashes) {
  for (const BadLine& bad : bad_lines()) {
    auto parsed = parse_tvm_line(bad.line);
    ASSERT_FALSE(parsed.ok()) << "accepted: " << bad.line;
    EXPECT_NE(parsed.status().message().find(bad.why), std::string::npos)
        << "line: " << bad.line << "\nmessage: " << parsed.status().message();
  }
}

TEST(TvmLineTest, EveryTruncationOfAValidLineIsRejectedCleanly) {
  for (size_t n = 0; n < kConvLine010.size(); ++n) {
    EXPECT_FALSE(parse_log_line(std::string_view(kConvLine010).substr(0, n)).ok()) << n;
  }
}

// ---------------------------------------------------------------------------------------------
// kiln lines.

TEST(KilnLineTest, EveryFieldRoundTrips) {
  Record r = conv_record();
  r.id = 42;
  r.error_msg = "note: \"quoted\"";
  r.source = "kiln tune";
  auto text = to_kiln_line(r);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(text->rfind(R"({"kiln_record": 1, "id": 42, "target": "llvm", )", 0), 0u) << *text;
  auto parsed = parse_kiln_line(*text);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  Record expected = r;
  expected.id = 0;
  EXPECT_EQ(parsed->record, expected);
  EXPECT_EQ(parse_log_line(*text)->record, expected);  // detected as a kiln line

  Record failed = r;
  failed.error_no = static_cast<int>(MeasureError::kWrongAnswer);
  failed.costs.clear();
  auto failed_text = to_kiln_line(failed);
  ASSERT_TRUE(failed_text.ok());
  EXPECT_EQ(parse_kiln_line(*failed_text)->record.error_no,
            static_cast<int>(MeasureError::kWrongAnswer));
}

TEST(KilnLineTest, MalformedKilnLinesGiveReasons) {
  Record r = conv_record();
  std::string good = *to_kiln_line(r);
  struct Case {
    std::string line, why;
  } cases[] = {
      {replaced(good, R"("kiln_record": 1)", R"("kiln_record": 2)"), "version 2"},
      {replaced(good, R"("flop": )", R"("flops": )"), "missing key \"flop\""},
      {replaced(good, R"("error_no": 0)", R"("error_no": false)"), "error_no"},
      {replaced(good, R"("task_name": "conv2d_NCHWc.x86")", R"("task_name": "nope")"),
       "unknown task"},
      {replaced(good, "conv2d:C=3", "conv2d:C=0"), "C=0"},
      {replaced(good, R"(["tile_oc", "sp", [-1, 4]])", R"(["tile_oc", "sp", [-1, 5]])"), "tile_oc"},
      {replaced(good, R"("costs": [0.0045656413])", R"("costs": [])"), "costs"},
      {replaced(good, R"("source": "test")", R"("source": null)"), "source"},
  };
  for (const Case& c : cases) {
    auto parsed = parse_log_line(c.line);
    ASSERT_FALSE(parsed.ok()) << "accepted: " << c.line;
    EXPECT_NE(parsed.status().message().find(c.why), std::string::npos)
        << "line: " << c.line << "\nmessage: " << parsed.status().message();
  }
}

// ---------------------------------------------------------------------------------------------
// Files.

TEST(LogFileTest, ImportReportsEachBadLineAndSkipsDuplicates) {
  TempDir dir;
  auto store = std::move(open_store(dir.file("r.db"))).value();
  Record kiln_rec = conv_record();
  kiln_rec.config_index = 47;
  kiln_rec.entities = json::parse(R"([["tile_ic", "sp", [-1, 3]], ["tile_oc", "sp", [-1, 4]],
                                      ["tile_ow", "sp", [-1, 64]], ["unroll_kw", "ot", true]])");
  kiln_rec.source = "kiln tune";
  const std::string log = dir.file("mixed.log");
  {
    std::ofstream out(log, std::ios::binary);
    out << "# a comment\n"                                                // 1
        << "\n"                                                           // 2
        << kConvLine010 << "\r\n"                                         // 3 (CRLF)
        << kDenseLine.substr(0, 80) << "\n"                               // 4 truncated
        << replaced(kDenseLine, "dense_nopack.x86", "bogus.x86") << "\n"  // 5 unknown task
        << "   \t \n"                                                     // 6 blank
        << kDenseLine << "\n"                                             // 7
        << kDenseLine << "\n"                                             // 8 duplicate of 7
        << *to_kiln_line(kiln_rec) << "\n"                                // 9
        << R"({"i": [], "r": [], "v": 0.1})"
        << "\n"  // 10 v0.1
        << replaced(replaced(kDenseLine, R"("index": 68)", R"("index": 1)"), "1700000000.0",
                    "1700000001.0");  // 11: index warning, no final newline
  }
  auto report = import_file(*store, log);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->lines, 11);
  EXPECT_EQ(report->imported, 4);    // lines 3, 7, 9, 11
  EXPECT_EQ(report->duplicates, 1);  // line 8
  ASSERT_EQ(report->skipped.size(), 3u);
  EXPECT_EQ(report->skipped[0].rfind(log + ":4: not valid JSON", 0), 0u) << report->skipped[0];
  EXPECT_EQ(report->skipped[1].rfind(log + ":5: unknown task name 'bogus.x86'", 0), 0u)
      << report->skipped[1];
  EXPECT_EQ(report->skipped[2].rfind(log + ":10: AutoTVM log v0.1", 0), 0u) << report->skipped[2];
  ASSERT_EQ(report->warnings.size(), 1u);
  EXPECT_EQ(report->warnings[0].rfind(log + ":11: warning: config index 1", 0), 0u)
      << report->warnings[0];

  auto rows = *store->records();
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].source, "import:" + log);  // TVM line
  EXPECT_EQ(rows[2].source, "kiln tune");      // kiln line keeps its own
  EXPECT_EQ(rows[2].config_index, 47);

  // Importing again changes nothing; an explicit source applies to every line.
  auto again = import_file(*store, log, "import:again");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->imported, 0);
  EXPECT_EQ(again->duplicates, 5);
  EXPECT_EQ(*store->count(), 4);

  auto missing = import_file(*store, dir.file("nope.log"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("nope.log"), std::string::npos);
}

TEST(LogFileTest, ExportBestOnlyAsTvmAndEverythingAsKilnRoundTrips) {
  TempDir dir;
  auto store = std::move(open_store(dir.file("r.db"))).value();
  Record slow = conv_record();
  Record fast = conv_record();
  fast.config_index = 47;
  fast.entities = json::parse(R"([["tile_ic", "sp", [-1, 3]], ["tile_oc", "sp", [-1, 4]],
                                  ["tile_ow", "sp", [-1, 64]], ["unroll_kw", "ot", true]])");
  fast.costs = {0.001};
  Record failed = conv_record();
  failed.config_index = 0;
  failed.entities = json::parse(R"([["tile_ic", "sp", [-1, 1]], ["tile_oc", "sp", [-1, 1]],
                                    ["tile_ow", "sp", [-1, 32]], ["unroll_kw", "ot", true]])");
  failed.error_no = static_cast<int>(MeasureError::kCompileHost);
  failed.costs.clear();
  failed.error_msg = "llvm said no";
  Record orphan = conv_record();  // a task this kiln has no template for
  orphan.task_name = "conv2d_nchw.cuda";
  ASSERT_TRUE(store->append({slow, fast, failed, orphan}).ok());

  ExportOptions best;
  best.format = LogFormat::kTvm;
  best.best_only = true;
  std::ostringstream tvm_out;
  auto tvm_report = export_records(*store, tvm_out, best);
  ASSERT_TRUE(tvm_report.ok()) << tvm_report.status().message();
  EXPECT_EQ(tvm_report->written, 1);
  ASSERT_EQ(tvm_report->skipped.size(), 1u);  // the orphan's group has a best too
  EXPECT_NE(tvm_report->skipped[0].find("conv2d_nchw.cuda"), std::string::npos);
  auto best_line = parse_tvm_line(tvm_out.str().substr(0, tvm_out.str().size() - 1));
  ASSERT_TRUE(best_line.ok()) << best_line.status().message();
  EXPECT_EQ(best_line->record.config_index, 47);

  ExportOptions all;  // kiln format, everything
  const std::string path = dir.file("all.jsonl");
  auto kiln_report = export_file(*store, path, all);
  ASSERT_TRUE(kiln_report.ok()) << kiln_report.status().message();
  EXPECT_EQ(kiln_report->written, 4);
  auto other = std::move(open_store(dir.file("other.db"))).value();
  auto imported = import_file(*other, path);
  ASSERT_TRUE(imported.ok());
  EXPECT_EQ(imported->imported, 3);
  ASSERT_EQ(imported->skipped.size(), 1u);  // the orphan: no template here either
  auto a = *store->records();
  auto b = *other->records();
  ASSERT_EQ(b.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    b[i].id = a[i].id;
    EXPECT_EQ(b[i], a[i]) << i;
  }

  ExportOptions limited;
  limited.filter.limit = 2;
  limited.filter.only_ok = true;
  std::ostringstream two;
  EXPECT_EQ(export_records(*store, two, limited)->written, 2);
  EXPECT_FALSE(export_file(*store, dir.file("no_such_dir/x.log"), all).ok());
}

}  // namespace
}  // namespace kiln::store
