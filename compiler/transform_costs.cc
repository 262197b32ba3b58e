#include "compiler/transform_costs.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <string>

#include "builder/build.h"
#include "compiler/layout_programs.h"
#include "ops/conv_common.h"
#include "runtime/artifact.h"
#include "runtime/thread_pool.h"
#include "runtime/time_evaluator.h"

namespace kiln::compiler {

namespace {

// Run lengths measured (channels copied contiguously); the last is the matched copy's block.
constexpr int64_t kRuns[] = {1, 2, 4, 8, 16};
constexpr int64_t kBlock = 16;           // the destination block of every measured packing
constexpr int64_t kChannels = 48;        // divisible by every run and by kBlock
constexpr int64_t kSides[] = {14, 112};  // 9.4K and 602K elements: cache-resident and not

int64_t elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// Adds one size class's buffers and stages to `program`; returns the stage names in this order:
// pack from NCHW[run]c for each of kRuns (the last is the matched copy), pack from NCHW, unpack.
std::vector<std::string> add_size(int64_t side, ir::Program* program) {
  ops::conv::Geometry g;
  g.c = g.k = kChannels;
  g.h = g.w = g.p = g.q = side;
  std::string tag = "s" + std::to_string(side);
  auto buffer = [&](const std::string& name, std::vector<int64_t> shape) {
    program->buffers.push_back(ir::Buffer(name + "_" + tag, shape, ir::BufferScope::kArgument));
    return program->buffers.back();
  };
  ir::Buffer packed = buffer("packed", {1, kChannels / kBlock, side, side, kBlock});
  ir::Buffer nchw = buffer("nchw", {1, kChannels, side, side});
  std::vector<std::string> names;
  auto stage = [&](const std::string& name, ir::Stmt body) {
    names.push_back(name + "_" + tag);
    program->stages.push_back({names.back(), std::move(body), true});
  };
  for (int64_t run : kRuns) {
    ir::Buffer from = buffer("from" + std::to_string(run), {1, kChannels / run, side, side, run});
    stage("repack" + std::to_string(run), ops::conv::pack_data(g, kBlock, from, packed));
  }
  stage("pack_nchw", ops::conv::pack_data(g, kBlock, nchw, packed));
  ir::Buffer unpacked = buffer("unpacked", {1, kChannels, side, side});
  stage("unpack", unpack_program(packed, unpacked, kBlock, "unpack").stages[0].body);
  return names;
}

}  // namespace

Result<TransformCosts> TransformCosts::measure(const Target& target) {
  auto start = std::chrono::steady_clock::now();
  ir::Program program;
  program.name = "layout_transform_costs";
  std::vector<std::vector<std::string>> stages;
  for (int64_t side : kSides) stages.push_back(add_size(side, &program));
  program.num_inputs = static_cast<int>(program.buffers.size());
  KILN_ASSIGN_OR_RETURN(builder::BuildOutput built, builder::build_program(program, target));
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Artifact> artifact,
                        Artifact::load_from_bytes(built.shared_object, program.name));
  std::vector<std::vector<float>> storage;
  std::vector<float*> pointers;
  for (const ir::Buffer& b : program.buffers) storage.emplace_back(elements(b->shape), 1.0f);
  for (auto& s : storage) pointers.push_back(s.data());
  ThreadPool pool(1);  // the plan is made for one thread; more scale kernels and copies alike
  TimeOptions options;
  options.number = 4;
  options.repeat = 5;
  options.min_repeat_ms = 2;
  auto time_stage = [&](const std::string& name) -> Result<double> {
    KILN_ASSIGN_OR_RETURN(kiln_stage_fn fn, artifact->stage(name));
    KILN_ASSIGN_OR_RETURN(std::vector<double> costs,
                          time_function([&] { fn(pointers.data(), pool.api()); }, options, {}));
    std::sort(costs.begin(), costs.end());
    return costs[costs.size() / 2];
  };
  TransformCosts out;
  for (size_t i = 0; i < stages.size(); ++i) {
    SizeClass size;
    size.elements = kChannels * kSides[i] * kSides[i];
    double n = static_cast<double>(size.elements);
    std::vector<double> repack;
    for (size_t r = 0; r < std::size(kRuns); ++r) {
      KILN_ASSIGN_OR_RETURN(double t, time_stage(stages[i][r]));
      repack.push_back(t);
    }
    double matched = repack.back();
    size.copy = matched / n;
    for (double t : repack) size.repack_extra.push_back(std::max(0.0, t - matched) / n);
    KILN_ASSIGN_OR_RETURN(double from_nchw, time_stage(stages[i][std::size(kRuns)]));
    size.from_nchw_extra = std::max(0.0, from_nchw - matched) / n;
    KILN_ASSIGN_OR_RETURN(double unpack, time_stage(stages[i][std::size(kRuns) + 1]));
    size.unpack = unpack / n;
    out.sizes_.push_back(std::move(size));
  }
  out.measure_seconds_ =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

TransformCosts TransformCosts::estimated() {
  TransformCosts out;
  // Seconds per element, per kRuns class, as measure() found them on the development machine
  // (runs of 2 and 4 interpolated); the matched copy's, as the unpack's.
  out.sizes_.push_back(
      {kChannels * kSides[0] * kSides[0], {1.1e-10, 6e-11, 3e-11, 1e-11, 0}, 2e-10, 3e-10, 3e-10});
  out.sizes_.push_back({kChannels * kSides[1] * kSides[1],
                        {2.2e-10, 1.1e-10, 5e-11, 1e-12, 0},
                        2.5e-10,
                        2.5e-10,
                        2.5e-10});
  return out;
}

double TransformCosts::seconds(const std::vector<int64_t>& shape, int64_t from, int64_t to,
                               bool whole) const {
  if (from == to || sizes_.empty()) return 0;
  double n = static_cast<double>(elements(shape));
  auto per_element = [&](const SizeClass& s) {
    if (to == 0) return s.unpack;
    const double copy = whole ? s.copy : 0.0;
    if (from == 0) return copy + s.from_nchw_extra;
    int64_t run = std::gcd(from, to);
    size_t k = 0;
    for (size_t i = 0; i < std::size(kRuns); ++i) {
      if (kRuns[i] <= run) k = i;
    }
    return copy + s.repack_extra[k];
  };
  const SizeClass& small = sizes_.front();
  const SizeClass& large = sizes_.back();
  if (n <= small.elements) return n * per_element(small);
  if (n >= large.elements) return n * per_element(large);
  double t = std::log(n / small.elements) / std::log(double(large.elements) / small.elements);
  return n * ((1 - t) * per_element(small) + t * per_element(large));
}

}  // namespace kiln::compiler
