// The seeded LLVM-IR identity check (issue 21): refactors of the code generator, its target
// hooks and the lowering passes must not change the code kiln generates. For every built-in
// template, a few small workloads, their fallback and a seeded sample of valid configs are built
// to optimized LLVM IR for fixed targets that do not depend on the host (Zen 4 with AVX-512, Zen
// 3 with AVX2, and aarch64 NEON through the generic path; compiled only, never run), and each
// module's text is hashed and compared with tests/data/codegen_ir_golden.txt. The failure lists
// every config whose IR differs.
//
// To regenerate the golden file (only for an intended change of generated code, explained in
// the commit), run with KILN_UPDATE_IR_GOLDEN=1:
//   KILN_UPDATE_IR_GOLDEN=1 build/tests/kiln_tests --gtest_filter='CodegenIrIdentity.*'
// The sample uses its own generator (splitmix64), not <random>'s distributions, so the configs
// chosen do not depend on the standard library.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <future>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "builder/codegen_llvm.h"
#include "ops/registry.h"

namespace kiln {
namespace {

constexpr const char* kGoldenPath = KILN_TESTS_DATA_DIR "/codegen_ir_golden.txt";
constexpr int kSampledConfigs = 6;
constexpr uint64_t kSeed = 21;

struct NamedTarget {
  std::string name;  // as written in the golden file
  Target target;
};

// Built as plain data, not parsed: parse_target fills in the host's features where the CPU is
// the host's, which would make the IR depend on the machine running the test.
std::vector<NamedTarget> fixed_targets() {
  std::vector<NamedTarget> out;
  Target znver4;
  znver4.triple = "x86_64-pc-linux-gnu";
  znver4.cpu = "znver4";
  out.push_back({"x86_64-znver4", znver4});
  Target znver3 = znver4;
  znver3.cpu = "znver3";
  out.push_back({"x86_64-znver3", znver3});
  Target neon;
  neon.triple = "aarch64-linux-gnu";
  neon.cpu = "generic";
  neon.features = "+neon";
  neon.explicit_features = true;
  neon.explicit_triple = true;
  out.push_back({"aarch64-neon", neon});
  return out;
}

struct Case {
  std::string template_name;
  std::string workload;
};

// Small workloads (fast builds) that still exercise each template's tiling, packing and
// vectorized paths.
const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"dense_nopack.x86", "dense:M=8,N=64,K=64"},
      {"dense_nopack.x86", "dense:M=1,N=100,K=32"},
      {"dense_pack.x86", "dense:M=8,N=64,K=64"},
      {"dense_pack.x86", "dense:M=16,N=48,K=32"},
      {"batch_matmul.x86", "batch_matmul:B=2,M=16,N=32,K=16"},
      {"conv2d_NCHWc.x86", "conv2d:N=1,C=16,H=8,W=8,K=32,R=3,S=3,pad=1"},
      {"conv2d_NCHWc.x86", "conv2d:N=1,C=32,H=7,W=7,K=16,R=1,S=1,stride=2"},
      {"depthwise_conv2d_NCHWc.x86", "depthwise_conv2d:N=1,C=32,H=8,W=8,R=3,S=3,pad=1"},
      {"conv2d_NCHWc_winograd.x86", "conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,pad=1"},
      {"conv2d_NCHWc_ragged.x86", "conv2d:N=1,C=16,H=6,W=6,K=40,R=3,S=3,pad=1"},
      {"group_conv2d_nchw.x86", "group_conv2d:N=1,C=16,H=6,W=6,K=32,R=3,S=3,groups=2,pad=1"},
  };
  return all;
}

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// FNV-1a over the module text without its ModuleID and source_filename lines (names, not code).
uint64_t hash_module(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ull;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("; ModuleID") || line.starts_with("source_filename")) continue;
    for (unsigned char c : line + "\n") {
      h ^= c;
      h *= 0x100000001b3ull;
    }
  }
  return h;
}

// One line of the golden file: "template workload config target hash".
using Key = std::string;  // "template workload config target"

std::map<Key, std::string> hash_case(const Case& c, const NamedTarget& t) {
  std::map<Key, std::string> out;
  const ops::Template* tmpl = ops::find_template(c.template_name);
  EXPECT_NE(tmpl, nullptr) << c.template_name;
  if (!tmpl) return out;
  Result<ops::Workload> w = tmpl->normalize(*ops::Workload::parse(c.workload));
  EXPECT_TRUE(w.ok()) << c.workload << ": " << w.status().message();
  if (!w.ok()) return out;
  ops::TargetInfo info{t.target.simd_lanes()};
  ConfigSpace space = tmpl->space(*w);
  std::set<int64_t> indices = {tmpl->fallback(*w, space, info).index()};
  uint64_t state = kSeed;
  while (static_cast<int>(indices.size()) < kSampledConfigs + 1 &&
         static_cast<int64_t>(indices.size()) < space.size()) {
    indices.insert(space.nth_valid_index(
        static_cast<int64_t>(splitmix64(state) % static_cast<uint64_t>(space.size()))));
  }
  for (int64_t index : indices) {
    Key key = c.template_name + " " + c.workload + " " + std::to_string(index) + " " + t.name;
    Result<ir::Program> program = tmpl->instantiate(*w, space.get(index), info);
    if (!program.ok()) {
      out[key] = "instantiate-error";
      continue;
    }
    Result<std::string> ir = builder::program_llvm_ir(*program, t.target, /*optimized=*/true);
    if (!ir.ok()) {
      out[key] = "build-error";
      continue;
    }
    std::ostringstream hex;
    hex << std::hex << hash_module(*ir);
    out[key] = hex.str();
  }
  return out;
}

std::map<Key, std::string> hash_all() {
  // One thread per target: the builds are independent (the builder is thread-safe).
  std::vector<std::future<std::map<Key, std::string>>> parts;
  for (const NamedTarget& t : fixed_targets()) {
    parts.push_back(std::async(std::launch::async, [t] {
      std::map<Key, std::string> hashes;
      for (const Case& c : cases()) hashes.merge(hash_case(c, t));
      return hashes;
    }));
  }
  std::map<Key, std::string> all;
  for (auto& part : parts) all.merge(part.get());
  return all;
}

std::map<Key, std::string> read_golden() {
  std::map<Key, std::string> golden;
  std::ifstream in(kGoldenPath);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string tmpl, workload, config, target, hash;
    if (fields >> tmpl >> workload >> config >> target >> hash) {
      golden[tmpl + " " + workload + " " + config + " " + target] = hash;
    }
  }
  return golden;
}

TEST(CodegenIrIdentity, EveryBuiltInTemplateIsSampled) {
  std::set<std::string> sampled;
  for (const Case& c : cases()) sampled.insert(c.template_name);
  for (const ops::Template* t :
       {&ops::dense_nopack_template(), &ops::dense_pack_template(), &ops::conv2d_nchwc_template(),
        &ops::depthwise_conv2d_nchwc_template(), &ops::batch_matmul_template(),
        &ops::conv2d_winograd_template(), &ops::conv2d_ragged_template(),
        &ops::group_conv2d_template()}) {
    EXPECT_TRUE(sampled.count(std::string(t->name()))) << t->name() << " has no sampled workload";
  }
}

TEST(CodegenIrIdentity, OptimizedIrMatchesTheGoldenHashes) {
  std::map<Key, std::string> now = hash_all();
  if (const char* update = std::getenv("KILN_UPDATE_IR_GOLDEN"); update && *update == '1') {
    std::ofstream out(kGoldenPath, std::ios::trunc);
    out << "# template workload config target hash (tests/codegen_ir_identity_test.cc)\n";
    for (const auto& [key, hash] : now) out << key << " " << hash << "\n";
    ASSERT_TRUE(out.good()) << "cannot write " << kGoldenPath;
    GTEST_SKIP() << "wrote " << now.size() << " hashes to " << kGoldenPath;
  }
  std::map<Key, std::string> golden = read_golden();
  ASSERT_FALSE(golden.empty()) << kGoldenPath << " is missing or empty";
  int differing = 0;
  for (const auto& [key, hash] : now) {
    auto it = golden.find(key);
    if (it == golden.end()) {
      ADD_FAILURE() << key << ": not in the golden file (the sample changed?)";
      ++differing;
    } else if (it->second != hash) {
      ADD_FAILURE() << key << ": IR hash " << hash << ", golden " << it->second;
      ++differing;
    }
  }
  for (const auto& [key, hash] : golden) {
    if (!now.count(key)) {
      ADD_FAILURE() << key << ": in the golden file but no longer sampled";
      ++differing;
    }
  }
  EXPECT_EQ(differing, 0) << differing << " of " << now.size() << " sampled configs differ";
}

}  // namespace
}  // namespace kiln
