// What kiln measures (ops/measured_layout.h): the NCHWc convolutions' measured program takes
// packed data and writes a packed output, and its timed stage touches only packed buffers; the
// runner converts its NCHW inputs and reference to the argument layouts (and catches a kernel
// whose layouts lie); measurement versions keep records of the old semantics out of every
// comparison (store migration, best, resume, kiln best's note); and a TVM record's config is
// measured as TVM times it.
#include "ops/measured_layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "builder/build.h"
#include "builder/build_pool.h"
#include "builder/measure_input.h"
#include "builder/target.h"
#include "common/sha256.h"
#include "compiler/stage_access.h"
#include "ops/registry.h"
#include "runner/build_and_measure.h"
#include "runner/local_measure.h"
#include "runner/local_runner.h"
#include "runtime/thread_pool.h"
#include "store/formats/log_file.h"
#include "store/open_store.h"
#include "store/sqlite/schema.h"
#include "store/sqlite/sqlite_db.h"
#include "tests/run_kiln.h"
#include "tests/temp_dir.h"
#include "tuner/space_walk.h"
#include "tuner/tune_loop.h"
#include "tuner/tuner.h"

namespace kiln {
namespace {

using testing::TempDir;

ops::Workload normalized(const ops::Template& t, const std::string& text) {
  Result<ops::Workload> parsed = ops::Workload::parse(text);
  EXPECT_TRUE(parsed.ok()) << text;
  Result<ops::Workload> w = t.normalize(*parsed);
  EXPECT_TRUE(w.ok()) << w.status().message();
  return *w;
}

int64_t inner(const ConfigEntity& config, const char* knob) {
  return std::get<SplitEntity>(*config.find(knob)).size.back();
}

int buffer_index(const ir::Program& p, const std::string& name) {
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    if (p.buffers[i]->name == name) return static_cast<int>(i);
  }
  ADD_FAILURE() << "no buffer " << name;
  return -1;
}

std::vector<std::string> names(const ir::Program& p, const std::vector<int>& indices) {
  std::vector<std::string> out;
  for (int i : indices) out.push_back(p.buffers[i]->name);
  std::sort(out.begin(), out.end());
  return out;
}

// The measured program of a conv config: packed data and output arguments, and timed stages
// that read only packed data (the padded data_vec copy, or the data argument itself where there
// is nothing to pad), the packed kernel and the bias (and the row workspace) and write only the
// packed output (and the row workspace).
void expect_packed_in_packed_out(const ops::Template& t, const ops::Workload& w,
                                 const ConfigEntity& config) {
  SCOPED_TRACE(std::string(t.name()) + " " + w.to_string() + " " + config.to_json().dump());
  Result<ir::Program> p = ops::instantiate_measured(t, w, config, {16});
  ASSERT_TRUE(p.ok()) << p.status().message();
  const std::vector<ops::TensorSpec> in = t.inputs(w), out = t.outputs(w);
  const int64_t ic_bn = inner(config, "tile_ic"), oc_bn = inner(config, "tile_oc");
  const std::vector<int64_t>& d = in[0].shape;
  const std::vector<int64_t>& o = out[0].shape;
  EXPECT_EQ(p->buffers[0]->shape, (std::vector<int64_t>{d[0], d[1] / ic_bn, d[2], d[3], ic_bn}));
  EXPECT_EQ(p->buffers[p->num_inputs]->shape,
            (std::vector<int64_t>{o[0], o[1] / oc_bn, o[2], o[3], oc_bn}));
  // Packed data with nothing to pad is read in place (no data_vec copy).
  const bool in_place = std::none_of(p->buffers.begin(), p->buffers.end(),
                                     [](const ir::Buffer& b) { return b->name == "data_vec"; });
  const char* packed_data = in_place ? "data" : "data_vec";
  const std::vector<std::string> allowed_reads = {"bias", "conv_rows", packed_data, "kernel_vec"};
  int timed = 0;
  for (const ir::Stage& s : p->stages) {
    compiler::StageAccess a = compiler::stage_access(*p, s);
    std::vector<std::string> reads = names(*p, a.reads), writes = names(*p, a.writes);
    if (!s.timed) {
      // The untimed stages: the data padding copy (from the packed data) and the kernel packing.
      EXPECT_TRUE(writes == std::vector<std::string>{"data_vec"} ||
                  writes == std::vector<std::string>{"kernel_vec"})
          << s.name;
      continue;
    }
    ++timed;
    for (const std::string& r : reads) {
      EXPECT_TRUE(std::count(allowed_reads.begin(), allowed_reads.end(), r)) << s.name << " " << r;
    }
    for (const char* must : {"bias", packed_data, "kernel_vec"}) {
      EXPECT_TRUE(std::count(reads.begin(), reads.end(), must)) << s.name << " " << must;
    }
    for (const std::string& wr : writes) {
      EXPECT_TRUE(wr == "output" || wr == "conv_rows") << s.name << " " << wr;
    }
    EXPECT_TRUE(std::count(writes.begin(), writes.end(), "output")) << s.name;
    if (!in_place) {
      EXPECT_FALSE(std::count(a.reads.begin(), a.reads.end(), buffer_index(*p, "data")));
    }
  }
  EXPECT_EQ(timed, 1);
}

TEST(MeasuredLayout, ConvTasksAreMeasuredPackedInPackedOut) {
  const std::vector<std::pair<const ops::Template*, std::string>> cases = {
      {&ops::conv2d_nchwc_template(), "conv2d:N=1,C=16,H=9,W=9,K=32,R=3,S=3,pad=1"},
      {&ops::conv2d_nchwc_template(), "conv2d:N=1,C=32,H=8,W=8,K=16,R=1,S=1,stride=2"},
      {&ops::depthwise_conv2d_nchwc_template(), "depthwise_conv2d:N=1,C=32,H=10,W=10,R=3,S=3"}};
  for (const auto& [t, text] : cases) {
    ops::Workload w = normalized(*t, text);
    ConfigSpace space = t->space(w);
    expect_packed_in_packed_out(*t, w, t->fallback(w, space, {16}));
    std::mt19937_64 rng(5);
    for (int64_t index : tuner::sample_ints(space, 4, rng)) {
      expect_packed_in_packed_out(*t, w, space.get(index));
    }
  }
  // Other templates are measured in their own layout.
  const ops::Template& dense = *ops::find_template("dense_pack.x86");
  ops::Workload w = normalized(dense, "dense:M=4,N=16,K=8");
  EXPECT_TRUE(ops::measured_layout(dense, dense.fallback(w, dense.space(w), {16})).is_default());
  EXPECT_EQ(ops::oldest_comparable_version("dense_pack.x86"), 1);
  EXPECT_EQ(ops::oldest_comparable_version("conv2d_NCHWc.x86"), 2);
  // The ragged-row templates changed their tiles in version 3 (EvenRowTiles); dense_pack_ragged
  // is still measured in its own layout, conv2d_NCHWc_flat packed as the NCHWc convolutions.
  EXPECT_EQ(ops::oldest_comparable_version("conv2d_NCHWc_flat.x86"), 3);
  EXPECT_EQ(ops::oldest_comparable_version("dense_pack_ragged.x86"), 3);
  EXPECT_EQ(ops::kMeasureVersion, 3);
  const ops::Template& ragged = *ops::find_template("dense_pack_ragged.x86");
  ops::Workload rw = normalized(ragged, "dense:M=10,N=16,K=8");
  EXPECT_TRUE(
      ops::measured_layout(ragged, ragged.default_config(rw, ragged.space(rw), {16})).is_default());
}

TEST(MeasuredLayout, ArgumentLayoutConversionsFollowTheDefinition) {
  // [1, 4, 1, 2] as NCHW2c: element (c, w) = 10c + w sits at [c / 2][w][c % 2].
  std::vector<float> nchw = {0, 1, 10, 11, 20, 21, 30, 31};
  auto packed = ops::to_argument_layout(nchw, {1, 4, 1, 2}, {1, 2, 1, 2, 2});
  ASSERT_TRUE(packed.ok());
  EXPECT_EQ(*packed, (std::vector<float>{0, 10, 1, 11, 20, 30, 21, 31}));
  auto back = ops::from_argument_layout(packed->data(), {1, 2, 1, 2, 2}, {1, 4, 1, 2});
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, nchw);
  EXPECT_EQ(*ops::to_argument_layout(nchw, {1, 4, 1, 2}, {1, 4, 1, 2}), nchw);
  // Not a layout of the tensor: an error naming both shapes.
  auto bad = ops::to_argument_layout(nchw, {1, 4, 1, 2}, {1, 3, 1, 2, 2});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("[1, 3, 1, 2, 2]"), std::string::npos);
  EXPECT_FALSE(ops::to_argument_layout(nchw, {1, 4, 2, 2}, {1, 2, 2, 2, 2}).ok());
}

// ---------------------------------------------------------------------------------------------
// The runner's check.

runner::MeasureOptions quick() {
  runner::MeasureOptions o;
  o.time.number = 1;
  o.time.repeat = 1;
  return o;
}

TEST(MeasuredLayout, RunnerChecksPackedKernelsAgainstTheNchwReference) {
  ThreadPool pool(2);
  const Target target = builder::host_target();
  for (const ops::Template* t :
       {&ops::conv2d_nchwc_template(), &ops::depthwise_conv2d_nchwc_template()}) {
    const std::string text = t == &ops::conv2d_nchwc_template()
                                 ? "conv2d:N=1,C=16,H=7,W=7,K=32,R=3,S=3,pad=1"
                                 : "depthwise_conv2d:N=1,C=32,H=7,W=7,R=3,S=3,pad=1";
    ops::Workload w = normalized(*t, text);
    ConfigSpace space = t->space(w);
    std::vector<ConfigEntity> configs = {t->fallback(w, space, {target.simd_lanes()})};
    std::mt19937_64 rng(11);
    for (int64_t index : tuner::sample_ints(space, 3, rng)) configs.push_back(space.get(index));
    for (const ConfigEntity& config : configs) {
      MeasureResult m = runner::check_config(*t, w, config, target, quick(), pool);
      EXPECT_EQ(m.error, MeasureError::kNoError)
          << t->name() << " " << config.to_json().dump() << ": " << m.message;
    }
  }
}

// A kernel whose declared argument layouts lie (it reads NCHW data or writes an NCHW output
// while its manifest says NCHW{b}c) is a wrong answer: the runner really converts.
TEST(MeasuredLayout, RunnerCatchesAKernelWhoseLayoutsDoNotMatchItsArguments) {
  ThreadPool pool(2);
  const Target target = builder::host_target();
  const ops::Template& t = ops::conv2d_nchwc_template();
  ops::Workload w = normalized(t, "conv2d:N=1,C=16,H=6,W=6,K=16,R=3,S=3,pad=1");
  ConfigSpace space = t.space(w);
  ConfigEntity config = t.fallback(w, space, {target.simd_lanes()});
  const int64_t ic_bn = inner(config, "tile_ic"), oc_bn = inner(config, "tile_oc");
  ASSERT_GT(ic_bn, 1);
  ASSERT_GT(oc_bn, 1);
  runner::ReferenceData reference = runner::make_reference(t, w, 3);
  ops::ActivationLayout measured = ops::measured_layout(t, config);
  for (ops::ActivationLayout real :
       {measured, ops::ActivationLayout{0, true}, ops::ActivationLayout{ic_bn, false}}) {
    Result<ir::Program> p = t.instantiate(w, config, {target.simd_lanes()}, real);
    ASSERT_TRUE(p.ok()) << p.status().message();
    Result<builder::BuildOutput> built = builder::build_program(*p, target);
    ASSERT_TRUE(built.ok()) << built.status().message();
    BuildResult b;
    b.shared_object = built->shared_object;
    b.artifact_sha256 = sha256_hex(b.shared_object);
    b.manifest = KernelManifest::of(*p);
    // Declare the measured layouts whatever the kernel does.
    Result<ir::Program> declared = ops::instantiate_measured(t, w, config, {target.simd_lanes()});
    ASSERT_TRUE(declared.ok());
    b.manifest.argument_shapes = KernelManifest::of(*declared).argument_shapes;
    MeasureResult m = runner::run_built_kernel(b, reference, quick(), pool, false);
    bool honest = real.data_block == measured.data_block && real.packed_output;
    EXPECT_EQ(m.error, honest ? MeasureError::kNoError : MeasureError::kWrongAnswer)
        << "data_block " << real.data_block << " packed_output " << real.packed_output << ": "
        << m.message;
  }
}

// ---------------------------------------------------------------------------------------------
// Measurement versions in the store.

const char* const kConvTask = "conv2d_NCHWc.x86";

// A v3 store (schema before measurement versions) holding rows written by the kiln of then.
void make_v3_store(const std::string& path, const std::string& target, const std::string& conv_w,
                   const std::vector<std::pair<int64_t, nlohmann::json>>& conv_configs) {
  auto db = store::sqlite::Database::open(path, false, 1000);
  ASSERT_TRUE(db.ok());
  std::vector<store::Migration> v3(store::schema_migrations().begin(),
                                   store::schema_migrations().begin() + 3);
  ASSERT_TRUE(store::migrate(**db, v3).ok());
  auto insert = [&](const std::string& task, const std::string& workload, int64_t index,
                    const std::string& entities, double cost) {
    std::string sql =
        "INSERT INTO records (target, task_name, workload, config_index, entities, error_no, "
        "costs, mean_cost, all_cost, timestamp, error_msg, flop, source) VALUES ('" +
        target + "', '" + task + "', '" + workload + "', " + std::to_string(index) + ", '" +
        entities + "', 0, '[" + std::to_string(cost) + "]', " + std::to_string(cost) +
        ", 1.0, 1700000000.0, '', 1000000.0, 'kiln tune')";
    ASSERT_TRUE((*db)->exec(sql).ok()) << sql;
  };
  // Very fast: an old conv record would win every comparison if it were allowed to compete.
  for (const auto& [index, entities] : conv_configs) {
    insert(kConvTask, conv_w, index, entities.dump(), 1e-9);
  }
  insert("dense_pack.x86", "dense:K=16,M=16,N=32", 3,
         R"([["tile_y","sp",[-1,1,1]],["tile_x","sp",[-1,1,32]],["tile_k","sp",[-1,16]],)"
         R"(["tile_inner","sp",[-1,1]]])",
         2e-6);
  EXPECT_EQ(*(*db)->query_int("PRAGMA user_version"), 3);
}

TEST(MeasuredLayout, OldRecordsMigrateAsVersionOneAndNeverCompete) {
  TempDir dir;
  const std::string path = dir.file("v3.db");
  const Target target = builder::host_target();
  const ops::Template& t = ops::conv2d_nchwc_template();
  ops::Workload w = normalized(t, "conv2d:N=1,C=8,H=6,W=6,K=8,R=3,S=3,pad=1");
  ConfigSpace space = t.space(w);
  const std::vector<int64_t> old_indices = {0, 1};
  std::vector<std::pair<int64_t, nlohmann::json>> old_configs;
  for (int64_t i : old_indices) old_configs.emplace_back(i, space.get(i).to_json()["entity"]);
  make_v3_store(path, target.to_string(), w.to_string(), old_configs);

  auto db = store::open_store(path);
  ASSERT_TRUE(db.ok()) << db.status().message();
  EXPECT_EQ(*(*db)->schema_version(), store::latest_schema_version());  // migrated to the last
  auto all = (*db)->records();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 3u);
  for (const store::Record& r : *all) EXPECT_EQ(r.measure_version, 1) << r.task_name;
  // The old conv records are outdated; the old dense record still compares.
  EXPECT_EQ(*(*db)->best(target.to_string(), kConvTask, w.to_string()), std::nullopt);
  EXPECT_TRUE((*db)->measured_indices(target.to_string(), kConvTask, w.to_string())->empty());
  auto dense_best = (*db)->best(target.to_string(), "dense_pack.x86", "dense:K=16,M=16,N=32");
  ASSERT_TRUE(dense_best.ok() && dense_best->has_value());
  EXPECT_EQ((*dense_best)->config_index, 3);
  EXPECT_EQ((*db)->best_per_workload()->size(), 1u);
  store::RecordFilter outdated;
  outdated.versions = store::Versions::kOutdated;
  EXPECT_EQ(*(*db)->count(outdated), 2);

  // kiln best says it ignored them.
  testing::CommandResult best = testing::run_kiln("best --db " + path);
  EXPECT_EQ(best.exit_code, 0) << best.output;
  EXPECT_NE(best.output.find("note: 2 records are ignored: of an older measurement version"),
            std::string::npos)
      << best.output;
  EXPECT_NE(best.output.find("dense_pack.x86"), std::string::npos);
  EXPECT_EQ(best.output.find(kConvTask), std::string::npos) << best.output;

  // Resume: the old configs are measured again, and the new records (slower than the old ones'
  // fake 1 ns) are the best.
  builder::LocalBuildPool builder({2, 30});
  runner::RunnerOptions ro;
  ro.measure.time = {.number = 1, .repeat = 1};
  ro.cooldown_interval_s = 0;
  runner::LocalRunner runner(ro);
  tuner::GridTuner grid(space);
  tuner::TuneOptions options;
  options.n_trial = 2;
  auto p = tuner::tune_task(t, w, target, space, grid, builder, runner, **db, options);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->outdated, 2);
  EXPECT_EQ(p->resumed, 0);
  EXPECT_EQ(p->done, 2);
  auto fresh = (*db)->records(store::RecordFilter::of_task({&t, w, target}));
  ASSERT_TRUE(fresh.ok());
  ASSERT_EQ(fresh->size(), 4u);
  for (size_t i = 2; i < 4; ++i) {
    EXPECT_EQ((*fresh)[i].measure_version, ops::kMeasureVersion);
    EXPECT_EQ((*fresh)[i].error_no, 0) << (*fresh)[i].error_msg;
    EXPECT_EQ((*fresh)[i].config_index, old_indices[i - 2]);
  }
  auto conv_best = (*db)->best(target.to_string(), kConvTask, w.to_string());
  ASSERT_TRUE(conv_best.ok() && conv_best->has_value());
  EXPECT_EQ((*conv_best)->measure_version, ops::kMeasureVersion);
  EXPECT_GT((*conv_best)->mean_cost(), 1e-9);
}

TEST(MeasuredLayout, KilnLogCarriesTheVersionAndOldLinesAreVersionOne) {
  store::Record r;
  r.target = "llvm -mcpu=znver5";
  r.task_name = "dense_pack.x86";
  r.workload = "dense:K=16,M=16,N=32";
  const ops::Template& dense = *ops::find_template("dense_pack.x86");
  ops::Workload w = normalized(dense, r.workload);
  ConfigEntity config = dense.space(w).get(3);
  r.config_index = 3;
  r.entities = config.to_json()["entity"];
  r.costs = {1e-6};
  r.flop = dense.flop(w);
  r.source = "kiln tune";
  Result<std::string> line = store::to_kiln_line(r);
  ASSERT_TRUE(line.ok()) << line.status().message();
  const std::string version = "\"measure_version\": " + std::to_string(ops::kMeasureVersion);
  EXPECT_NE(line->find(version), std::string::npos) << *line;
  auto read = store::parse_kiln_line(*line);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->record.measure_version, ops::kMeasureVersion);
  // A line written before versions existed.
  std::string old_line = *line;
  old_line.erase(old_line.find(", " + version), version.size() + 2);
  read = store::parse_kiln_line(old_line);
  ASSERT_TRUE(read.ok()) << read.status().message() << "\n" << old_line;
  EXPECT_EQ(read->record.measure_version, 1);
  // From a newer kiln: refused.
  std::string newer = *line;
  newer.replace(newer.find(version), version.size(), "\"measure_version\": 9");
  read = store::parse_kiln_line(newer);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("newer kiln"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Acceptance: a TVM record's config, measured by kiln, times the program TVM times.

// ResNet-18's first downsampling 1x1 convolution (layer2.0.downsample: 64 -> 128 channels,
// stride 2, 56x56 -> 28x28) as TVM 0.16 logs a conv2d_NCHWc.x86 trial of it.
const std::string kResnetConvLine =
    R"({"input": ["llvm -keys=cpu ", "conv2d_NCHWc.x86", [["TENSOR", [1, 64, 56, 56], "float32"], )"
    R"(["TENSOR", [128, 64, 1, 1], "float32"], [2, 2], [0, 0, 0, 0], [1, 1], "NCHW", "NCHW", )"
    R"("float32"], {}], "config": {"index": 0, "code_hash": null, "entity": [["tile_ic", "sp", )"
    R"([-1, 16]], ["tile_oc", "sp", [-1, 32]], ["tile_ow", "sp", [-1, 7]], ["tile_oh", "ot", )"
    R"(2]]}, "result": [[3.1e-05], 0, 1.2, 1700000000.0], "version": 0.2, "tvm_version": )"
    R"("0.16.0"})";

TEST(MeasuredLayout, ImportedTvmRecordConfigIsMeasuredAsTvmTimesIt) {
  TempDir dir;
  auto db = store::open_store(dir.file("tvm.db"));
  ASSERT_TRUE(db.ok());
  std::istringstream log(kResnetConvLine + "\n");
  auto report = store::import_stream(**db, log, "resnet18.log");
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->imported, 1) << (report->skipped.empty() ? "" : report->skipped[0]);
  store::Record tvm = (*db)->records()->at(0);
  EXPECT_EQ(tvm.measure_version, ops::kMeasureVersion);  // TVM's semantics are current
  EXPECT_TRUE(store::is_comparable(tvm));

  const ops::Template& t = ops::conv2d_nchwc_template();
  ops::Workload w = normalized(t, tvm.workload);
  ConfigSpace space = t.space(w);
  Result<ConfigEntity> config = space.from_json_entities(tvm.entities);
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->index(), tvm.config_index);

  // What kiln builds and times for this config (the builder's own path).
  const Target target = builder::host_target();
  MeasureInput input{{&t, w, target}, *config};
  BuildResult built = builder::build_measure_input(input);
  ASSERT_EQ(built.error, MeasureError::kNoError) << built.message;
  const KernelManifest& m = built.manifest;
  // Arguments: data NCHW16c, the OIHW weight (packed by an untimed stage, as TVM's tuning gets it
  // pre-packed), bias, output NCHW32c.
  EXPECT_EQ(m.argument_shapes,
            (std::vector<std::vector<int64_t>>{
                {1, 4, 56, 56, 16}, {128, 64, 1, 1}, {128}, {1, 4, 28, 28, 32}}));
  Result<ir::Program> p = ops::instantiate_measured(t, w, *config, {target.simd_lanes()});
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(m.stages.size(), p->stages.size());
  int timed = 0;
  for (size_t i = 0; i < p->stages.size(); ++i) {
    ASSERT_EQ(m.stage_timed[i], p->stages[i].timed);
    if (!p->stages[i].timed) continue;
    ++timed;
    compiler::StageAccess a = compiler::stage_access(*p, p->stages[i]);
    // The timed stage: packed data (with no padding, the NCHW16c data argument itself, which
    // TVM's conv reads as it is when it has nothing to pad), packed kernel, bias in; packed
    // output out.
    std::vector<std::string> reads = names(*p, a.reads), writes = names(*p, a.writes);
    std::erase(reads, "conv_rows");
    std::erase(writes, "conv_rows");
    EXPECT_EQ(reads, (std::vector<std::string>{"bias", "data", "kernel_vec"}));
    EXPECT_EQ(writes, (std::vector<std::string>{"output"}));
    EXPECT_EQ(p->buffers[buffer_index(*p, "kernel_vec")]->shape,
              (std::vector<int64_t>{4, 4, 1, 1, 16, 32}));  // OIHW16i32o
    EXPECT_EQ(p->buffers[buffer_index(*p, "output")]->shape,
              (std::vector<int64_t>{1, 4, 28, 28, 32}));
  }
  EXPECT_EQ(timed, 1);
  // And the measurement itself is checked against the NCHW reference and timed.
  ThreadPool pool(2);
  MeasureResult measured = runner::measure_config(t, w, *config, target, quick(), pool);
  EXPECT_EQ(measured.error, MeasureError::kNoError) << measured.message;
  EXPECT_FALSE(measured.costs.empty());
  EXPECT_DOUBLE_EQ(t.flop(w), tvm.flop);  // the same work
}

}  // namespace
}  // namespace kiln
