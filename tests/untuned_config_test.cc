// Configs of tasks without records (compiler/untuned_config.h): with records of other workloads
// of the same template and target in the store, `kiln compile` takes the xgb model's best
// prediction and lists the task as "predicted"; without, the template's default config, listed
// as "default". Real stores (SQLite files), the real kiln binary, the shared MLP and its reference
// output.
#include "compiler/untuned_config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "builder/target.h"
#include "exchange/target_description.h"
#include "ops/registry.h"
#include "store/open_store.h"
#include "store/store.h"
#include "tests/max_error.h"
#include "tests/run_kiln.h"
#include "tests/temp_dir.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

const fs::path kModels = fs::path(KILN_SHARED_DIR) / "models";

// `count` records of random configs of dense_pack.x86 on workloads the MLP does not have, timed
// so that wider column tiles are faster (a signal the model can learn).
std::vector<store::Record> other_dense_records(const std::string& target, int count) {
  const ops::Template* tmpl = ops::find_template("dense_pack.x86");
  std::vector<store::Record> out;
  std::mt19937_64 rng(5);
  const char* workloads[] = {"dense:M=1,N=96,K=80", "dense:M=1,N=48,K=160"};
  for (int i = 0; i < count; ++i) {
    ops::Workload w = *tmpl->normalize(*ops::Workload::parse(workloads[i % 2]));
    ConfigSpace space = tmpl->space(w);
    ConfigEntity config = space.get(space.nth_valid_index(rng() % space.size()));
    const auto& x = std::get<SplitEntity>(*config.find("tile_x"));
    store::Record r;
    r.target = target;
    r.task_name = std::string(tmpl->name());
    r.workload = w.to_string();
    r.config_index = config.index();
    r.entities = config.to_json()["entity"];
    r.costs = {1e-4 / static_cast<double>(x.size.back())};
    r.timestamp = 1700000000 + i;
    r.flop = tmpl->flop(w);
    r.source = "test";
    out.push_back(std::move(r));
  }
  return out;
}

std::string write_store(const std::string& path, const std::vector<store::Record>& records) {
  auto db = store::open_store(path);
  EXPECT_TRUE(db.ok()) << db.status().message();
  if (db.ok()) {
    EXPECT_TRUE((*db)->append(records).ok());
  }
  return path;
}

std::vector<float> read_floats(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<float> data(fs::file_size(path) / sizeof(float));
  f.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(data.size() * 4));
  return data;
}

double relative_error(const std::vector<float>& y, const std::vector<float>& ref) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < ref.size() && i < y.size(); ++i) {
    err = testing::max_error(err, std::abs(static_cast<double>(y[i]) - ref[i]));
    scale = std::max(scale, std::abs(static_cast<double>(ref[i])));
  }
  return y.size() == ref.size() ? err / scale : 1e9;
}

TEST(UntunedConfigs, PredictsFromOtherWorkloadsElseTheDefault) {
  testing::TempDir dir;
  const std::string target = builder::host_target().to_string();
  const ops::TargetInfo info = describe(builder::host_target()).template_info();
  const ops::Template* tmpl = ops::find_template("dense_pack.x86");
  ops::Workload w = *tmpl->normalize(*ops::Workload::parse("dense:M=1,N=128,K=64"));

  auto many = store::open_store(write_store(dir.file("many.db"), other_dense_records(target, 96)));
  ASSERT_TRUE(many.ok());
  compiler::UntunedConfigs predicted(many->get(), target, info);
  Result<compiler::UntunedConfig> got = predicted.choose(*tmpl, w);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->source, compiler::ConfigSource::kPredicted);
  EXPECT_TRUE(tmpl->instantiate(w, got->config, info).ok());

  // Too few records, or records of another target: the default config.
  auto few = store::open_store(write_store(dir.file("few.db"), other_dense_records(target, 10)));
  ASSERT_TRUE(few.ok());
  compiler::UntunedConfigs too_few(few->get(), target, info);
  got = too_few.choose(*tmpl, w);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->source, compiler::ConfigSource::kDefault);
  EXPECT_EQ(got->config.index(), tmpl->default_config(w, tmpl->space(w), info).index());
  compiler::UntunedConfigs other_target(many->get(), "llvm -mcpu=znver3 -mattr=+avx2", info);
  EXPECT_EQ(other_target.choose(*tmpl, w)->source, compiler::ConfigSource::kDefault);
}

TEST(UntunedConfigs, CompileListsPredictedAndDefaultTasks) {
  if (!fs::exists(kModels)) GTEST_SKIP() << "no " << kModels;
  testing::TempDir dir;
  const std::string target = builder::host_target().to_string();
  const std::string db = write_store(dir.file("others.db"), other_dense_records(target, 96));
  const std::string model = (kModels / "mlp" / "mlp.onnx").string();
  const std::string input = (kModels / "mlp" / "input.bin").string();
  const std::vector<float> ref = read_floats(kModels / "mlp" / "output.bin");

  for (bool with_store : {true, false}) {
    SCOPED_TRACE(with_store ? "with the store" : "without a store");
    const std::string artifact = dir.file(with_store ? "predicted.kiln" : "default.kiln");
    testing::CommandResult r = testing::run_kiln("compile " + model + " -o " + artifact +
                                                 (with_store ? " --db " + db : ""));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const char* source = with_store ? "  predicted dense_pack.x86" : "  default   dense_pack.x86";
    EXPECT_NE(r.output.find(source), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(with_store ? "0 tuned, 3 predicted, 0 default"
                                       : "0 tuned, 0 predicted, 3 default"),
              std::string::npos)
        << r.output;
    const std::string out = dir.file(with_store ? "predicted.bin" : "default.bin");
    r = testing::run_kiln("run " + artifact + " --input " + input + " --output " + out);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_LE(relative_error(read_floats(out), ref), 1e-4);
  }
}

}  // namespace
}  // namespace kiln
