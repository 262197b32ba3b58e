// Codegen-speed benchmark: how long building one config (IR -> LLVM -> O3 -> object -> shared
// object) takes, over a seeded random sample of a workload's config space.
//
//   build_bench [--workload W] [--configs N] [--seed S] [--each]
//
// Default workload: dense:M=1024,N=1024,K=1024 (every template of the operator). Prints the
// median, 90th percentile and mean build time per template, and the median of each phase; then,
// for an operator with several templates, the median over all of them.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "builder/build.h"
#include "exchange/target_description.h"
#include "ops/measured_layout.h"
#include "ops/registry.h"
#include "tuner/space_walk.h"

namespace {

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * (v.size() - 1) + 0.5))];
}

}  // namespace

int main(int argc, char** argv) {
  using namespace kiln;
  std::string workload = "dense:M=1024,N=1024,K=1024";
  int configs = 100;
  uint64_t seed = 1;
  bool each = false;
  CLI::App app{"time to build one config, IR to shared object", "build_bench"};
  app.add_option("--workload", workload, "the workload whose space is sampled");
  app.add_option("--configs", configs, "random configs per template")->check(CLI::PositiveNumber);
  app.add_option("--seed", seed, "seed of the sample");
  app.add_flag("--each", each, "also print every config's build time and phases");
  CLI11_PARSE(app, argc, argv);
  auto parsed = ops::Workload::parse(workload);
  auto templates = parsed.ok() ? ops::resolve_templates(*parsed, "") : parsed.status();
  if (!templates.ok()) {
    std::fprintf(stderr, "build_bench: %s\n", templates.status().message().c_str());
    return 2;
  }
  Target target = builder::host_target();
  std::printf("build time per config, %s, %s, %d random configs per template (seed %llu)\n",
              workload.c_str(), target.to_string().c_str(), configs,
              static_cast<unsigned long long>(seed));
  std::vector<double> every;  // every template's builds together: the operator's whole space
  for (const ops::Template* t : *templates) {
    ops::Workload w = *t->normalize(*parsed);
    ConfigSpace space = t->space(w);
    std::mt19937_64 rng(seed);
    std::vector<double> total, codegen, optimize, emit, link;
    int invalid = 0, failed = 0;
    for (int64_t index : tuner::sample_ints(space, configs, rng)) {
      auto program =
          ops::instantiate_measured(*t, w, space.get(index), describe(target).template_info());
      if (!program.ok()) {
        ++invalid;
        continue;
      }
      auto built = builder::build_program(*program, target);
      if (!built.ok()) {
        ++failed;
        continue;
      }
      total.push_back(built->total_ms);
      every.push_back(built->total_ms);
      codegen.push_back(built->timings.codegen_ms);
      optimize.push_back(built->timings.optimize_ms);
      emit.push_back(built->timings.emit_ms);
      link.push_back(built->link_ms);
      if (each) {
        std::printf("  config %6lld: %6.1f ms (codegen %.1f, O3 %.1f, emit %.1f, link %.1f) %s\n",
                    static_cast<long long>(index), built->total_ms, built->timings.codegen_ms,
                    built->timings.optimize_ms, built->timings.emit_ms, built->link_ms,
                    space.get(index).to_json()["entity"].dump().c_str());
      }
    }
    double mean = 0;
    for (double x : total) mean += x / std::max<size_t>(total.size(), 1);
    std::printf(
        "%-18s built %zu (invalid %d, failed %d): median %.1f ms, p90 %.1f ms, mean %.1f ms | "
        "median phases: codegen %.1f, O3 %.1f, emit %.1f, link %.1f ms\n",
        std::string(t->name()).c_str(), total.size(), invalid, failed, percentile(total, 0.5),
        percentile(total, 0.9), mean, percentile(codegen, 0.5), percentile(optimize, 0.5),
        percentile(emit, 0.5), percentile(link, 0.5));
    std::printf(
        "{\"bench\": \"build\", \"template\": \"%s\", \"workload\": \"%s\", \"median_ms\": %.2f, "
        "\"p90_ms\": %.2f, \"built\": %zu}\n",
        std::string(t->name()).c_str(), workload.c_str(), percentile(total, 0.5),
        percentile(total, 0.9), total.size());
  }
  if (templates->size() > 1) {
    std::printf("%-18s built %zu: median %.1f ms, p90 %.1f ms\n", "all templates", every.size(),
                percentile(every, 0.5), percentile(every, 0.9));
    std::printf(
        "{\"bench\": \"build\", \"template\": \"all\", \"workload\": \"%s\", "
        "\"median_ms\": %.2f, \"p90_ms\": %.2f, \"built\": %zu}\n",
        workload.c_str(), percentile(every, 0.5), percentile(every, 0.9), every.size());
  }
  return 0;
}
