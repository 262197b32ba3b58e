// Records across the kiln-TVM border and across CPUs: dense task args exactly as TVM's extraction
// writes them (both ways, old kiln spellings still read), `--records-from any-cpu` within one ISA
// family, records' thread counts, and `kiln import` naming the targets it brought in. The CLI
// tests run the real kiln on the shared MLP (a fast compile).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "builder/target.h"
#include "exchange/target_description.h"
#include "frontend/onnx_import.h"
#include "frontend/task_extraction.h"
#include "ops/registry.h"
#include "ops/tvm_args_parse.h"
#include "store/formats/tvm_args.h"
#include "store/formats/tvm_log.h"
#include "store/formats/tvm_target.h"
#include "store/open_store.h"
#include "store/record_selection.h"
#include "tests/run_kiln.h"
#include "tests/tasks_txt.h"
#include "tests/temp_dir.h"

namespace kiln {
namespace {

using nlohmann::json;
using testing::run_kiln;
using testing::TempDir;

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)
#define EXPECT_LACKS(text, part) EXPECT_EQ((text).find(part), std::string::npos) << (text)

// TVM 0.16's extract_from_program on the shared ResNet-18 (issue 24 / autotvm.md §2).
const char* kTvmResnetDenseArgs =
    R"([["TENSOR", [1, 512], "float32"], ["TENSOR", [1000, 512], "float32"], null, "float32"])";

const char* kMlp = KILN_SHARED_DIR "/models/mlp/mlp.onnx";
// The shared MLP's first layer: Gemm 1x784 by 512x784 with a bias.
const char* kMlpDense = "dense:K=784,M=1,N=512,bias=1";

std::string host_target_text() { return builder::host_target().to_string(); }

// A successful record of the dense_nopack.x86 config tile_x 8, tile_k 16 (valid for N=512,
// K=784), `seconds` long, with the measure options' thread count when given.
store::Record dense_record(const std::string& target, const std::string& workload, double seconds,
                           std::optional<int> threads = std::nullopt, int64_t tile_x = 8) {
  const ops::Template& t = *ops::find_template("dense_nopack.x86");
  ops::Workload w = *t.normalize(*ops::Workload::parse(workload));
  ConfigSpace space = t.space(w);
  Result<ConfigEntity> config =
      space.make_config({{"tile_y", SplitEntity{{1, 1}}},
                         {"tile_x", SplitEntity{{w.at("N") / tile_x, tile_x}}},
                         {"tile_k", SplitEntity{{w.at("K") / 16, 16}}}});
  EXPECT_TRUE(config.ok()) << config.status().message();
  store::Record r;
  r.target = target;
  r.task_name = "dense_nopack.x86";
  r.workload = w.to_string();
  r.config_index = config->index();
  r.entities = config->to_json()["entity"];
  r.costs = {seconds};
  r.timestamp = 1700000000;
  r.flop = t.flop(w);
  r.source = "test";
  if (threads) r.measure_options = json({{"number", 4}, {"threads", *threads}}).dump();
  return r;
}

std::string store_with(const TempDir& dir, const std::vector<store::Record>& records) {
  std::string path = dir.file("k.db");
  auto db = store::open_store(path);
  EXPECT_TRUE(db.ok()) << db.status().message();
  EXPECT_TRUE((*db)->append(records).ok());
  return path;
}

std::string compile_mlp(const std::string& db, const std::string& more = "") {
  TempDir out;
  testing::CommandResult r = run_kiln("compile " + std::string(kMlp) + " --db " + db + " -o " +
                                      out.file("m.kiln") + " " + more);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.output;
}

// The compile listing's line of the first layer's dense_nopack task.
std::string nopack_line(const std::string& output) {
  size_t at = output.find(std::string("dense_nopack.x86"));
  while (at != std::string::npos) {
    size_t begin = output.rfind('\n', at) + 1;
    std::string line = output.substr(begin, output.find('\n', at) - begin);
    if (line.find("K=784") != std::string::npos) return line;
    at = output.find("dense_nopack.x86", at + 1);
  }
  return "(no dense_nopack.x86 line for K=784 in)\n" + output;
}

// Another CPU of the host's vector ISA and one of another ISA, by name (nullopt when the host's
// ISA has no second CPU in kiln's table: the test then has nothing to check).
struct CpuPair {
  std::string same_isa, other_isa;
};
std::optional<CpuPair> cpus_around_host() {
  std::string_view isa = describe(builder::host_target()).isa;
  std::string host_cpu = builder::host_target().cpu;
  if (isa == "avx512") return CpuPair{host_cpu == "znver5" ? "znver4" : "znver5", "haswell"};
  if (isa == "avx2") return CpuPair{host_cpu == "haswell" ? "broadwell" : "haswell", "znver4"};
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Dense task args.

TEST(DenseTaskArgs, ResNet18DenseIsTvmsTaskBothWays) {
  Result<frontend::Graph> graph = frontend::import_onnx(testing::model_path("resnet18"));
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  frontend::TaskExtraction tasks = frontend::extract_tasks(*graph);
  int dense = 0;
  for (const frontend::ModelTask& t : tasks.tasks) {
    if (t.tmpl->op() != "dense") continue;
    ++dense;
    // The task is TVM's: no bias (the bias add is a separate op there).
    EXPECT_EQ(t.workload.to_string(), "dense:K=512,M=1,N=1000,bias=0");
    EXPECT_EQ(t.tmpl->tvm_args(t.workload), json::parse(kTvmResnetDenseArgs));
    // The kernel with kiln's fused bias is the same TVM task.
    ops::Workload with_bias =
        *t.tmpl->normalize(*ops::Workload::parse("dense:M=1,N=1000,K=512,bias=1"));
    EXPECT_EQ(t.tmpl->tvm_args(with_bias), json::parse(kTvmResnetDenseArgs));
    EXPECT_EQ(ops::task_workload(*t.tmpl, with_bias).to_string(), t.workload.to_string());
    // TVM's args read back as the task's workload.
    Result<ops::Workload> back =
        store::workload_from_tvm_args(*t.tmpl, json::parse(kTvmResnetDenseArgs));
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(back->to_string(), t.workload.to_string());
  }
  EXPECT_EQ(dense, 2);  // dense_nopack.x86 and dense_pack.x86
}

TEST(DenseTaskArgs, AnOlderKilnsBiasTensorLineStillImportsAsTheTask) {
  store::Record r = dense_record("llvm -mcpu=znver4", "dense:M=1,N=512,K=784,bias=1", 1e-5);
  Result<std::string> line = store::to_tvm_line(r);
  ASSERT_TRUE(line.ok()) << line.status().message();
  json row = json::parse(*line);
  EXPECT_TRUE(row["input"][2][2].is_null()) << *line;
  // What kiln wrote before: the bias as a TENSOR.
  row["input"][2][2] = json::array({"TENSOR", {512}, "float32"});
  Result<store::ImportedLine> old = store::parse_tvm_json(row);
  ASSERT_TRUE(old.ok()) << old.status().message();
  EXPECT_EQ(old->record.workload, "dense:K=784,M=1,N=512,bias=0");
}

TEST(RecordsInteropCli, TvmDenseLineWithNullIsUsedByCompile) {
  TempDir dir;
  store::Record r = dense_record(host_target_text(), "dense:M=1,N=512,K=784", 1e-5);
  Result<std::string> line = store::to_tvm_line(r);
  ASSERT_TRUE(line.ok());
  std::string log = dir.write("tvm.log", *line + "\n");
  EXPECT_EQ(json::parse(*line)["input"][2],
            json::parse(R"([["TENSOR", [1, 784], "float32"], ["TENSOR", [512, 784], "float32"],
                           null, "float32"])"));
  std::string db = dir.file("k.db");
  testing::CommandResult imported = run_kiln("import " + log + " --db " + db);
  ASSERT_EQ(imported.exit_code, 0) << imported.output;
  EXPECT_HAS(imported.output, "1 records for target '" + host_target_text() + "'");
  std::string out = compile_mlp(db);
  EXPECT_HAS(nopack_line(out), "tuned     dense_nopack.x86");
  EXPECT_HAS(out, "1 tuned");
}

TEST(RecordsInteropCli, AStoreOfAnOlderKilnWithBiasWorkloadsStillCompilesWithThem) {
  TempDir dir;
  std::string db = store_with(dir, {dense_record(host_target_text(), kMlpDense, 1e-5)});
  EXPECT_HAS(nopack_line(compile_mlp(db)), "tuned     dense_nopack.x86");
}

// ---------------------------------------------------------------------------------------------
// --records-from any-cpu.

TEST(RecordsInteropCli, AnyCpuServesRecordsOfTheSameIsaOnlyAndSaysWhose) {
  std::optional<CpuPair> cpus = cpus_around_host();
  if (!cpus) GTEST_SKIP() << "the host's ISA has no second CPU in kiln's table";
  TempDir dir;
  const std::string same = "llvm -mcpu=" + cpus->same_isa, other = "llvm -mcpu=" + cpus->other_isa;
  std::string db = store_with(dir, {dense_record(same, kMlpDense, 1e-5),
                                    dense_record(other, "dense:M=1,N=256,K=512", 1e-5)});
  // The default is the exact target: neither serves.
  std::string exact = compile_mlp(db);
  EXPECT_HAS(exact, "3 tasks: 0 tuned");
  std::string any = compile_mlp(db, "--records-from any-cpu");
  EXPECT_HAS(nopack_line(any), "tuned     dense_nopack.x86");
  EXPECT_HAS(nopack_line(any), "(records of " + same + ")");
  EXPECT_HAS(any, "3 tasks: 1 tuned");  // the other ISA's record never serves
  EXPECT_HAS(any, "note: 1 tasks use records of another CPU of this ISA");

  testing::CommandResult best =
      run_kiln("best --db " + db + " --records-from any-cpu --target llvm");
  ASSERT_EQ(best.exit_code, 0) << best.output;
  EXPECT_HAS(best.output, "target " + same + " (another CPU's record");
  EXPECT_LACKS(best.output, other);
  testing::CommandResult bad = run_kiln("compile " + std::string(kMlp) + " -o " +
                                        dir.file("x.kiln") + " --records-from anything");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_HAS(bad.output, "--records-from: 'anything' is not one of exact");
}

TEST(RecordSelection, IsaFamilyByCpuNameOrFeatures) {
  Target zen4;
  zen4.triple = "x86_64-pc-linux-gnu";
  zen4.cpu = "znver4";
  EXPECT_TRUE(store::same_isa_family("llvm -mcpu=znver5", zen4));
  EXPECT_TRUE(store::same_isa_family("llvm -mcpu=x86-64 -mattr=+avx512f,+avx2", zen4));
  EXPECT_FALSE(store::same_isa_family("llvm -mcpu=znver3", zen4));
  EXPECT_FALSE(store::same_isa_family("llvm -mcpu=znver5 -mattr=+avx2", zen4));
  EXPECT_FALSE(store::same_isa_family("llvm", zen4));  // no ISA to tell
  EXPECT_FALSE(store::same_isa_family("llvm -mcpu=cortex-a76 -mtriple=aarch64-linux-gnu", zen4));
}

// ---------------------------------------------------------------------------------------------
// Thread counts.

TEST(RecordsInteropCli, CompilePrefersRecordsOfItsThreadCountAndSaysWhenTheyDiffer) {
  TempDir dir;
  // The fastest record was measured at 3 threads; a slower one at 1.
  std::string db = store_with(dir, {dense_record(host_target_text(), kMlpDense, 1e-6, 3, 8),
                                    dense_record(host_target_text(), kMlpDense, 9e-6, 1, 16)});
  std::string one = compile_mlp(db, "--threads 1");
  EXPECT_HAS(nopack_line(one), R"(["tile_x","sp",[-1,16]])");
  EXPECT_LACKS(one, "measured at another thread count");
  std::string three = compile_mlp(db, "--threads 3");
  EXPECT_HAS(nopack_line(three), R"(["tile_x","sp",[-1,8]])");
  // Only records of another count: used, and said.
  TempDir only_three;
  std::string db3 = store_with(only_three, {dense_record(host_target_text(), kMlpDense, 1e-6, 3)});
  std::string mismatch = compile_mlp(db3, "--threads 1");
  EXPECT_HAS(nopack_line(mismatch), "(measured at 3 threads)");
  EXPECT_HAS(mismatch, "measured at another thread count than this model's 1 threads");
}

TEST(RecordsInteropCli, CompilePrefersRecordsTimedWithTheCachesFlushed) {
  TempDir dir;
  // A config timed warm looks faster than another timed as in a model (kiln tune MODEL's
  // default): the two protocols are not compared, the flushed record chooses.
  store::Record warm = dense_record(host_target_text(), kMlpDense, 1e-6, 1, 8);
  store::Record flushed = dense_record(host_target_text(), kMlpDense, 9e-6, 1, 16);
  flushed.measure_options = json({{"cache_flush", true}, {"number", 1}, {"threads", 1}}).dump();
  EXPECT_FALSE(store::record_cache_flushed(warm));
  EXPECT_TRUE(store::record_cache_flushed(flushed));
  std::string db = store_with(dir, {warm, flushed});
  EXPECT_HAS(nopack_line(compile_mlp(db, "--threads 1")), R"(["tile_x","sp",[-1,16]])");
  // Warm records only: they choose.
  TempDir warm_only;
  std::string db_warm = store_with(warm_only, {warm});
  EXPECT_HAS(nopack_line(compile_mlp(db_warm, "--threads 1")), R"(["tile_x","sp",[-1,8]])");
}

}  // namespace
}  // namespace kiln
