#include "tests/fault_template.h"

#include <chrono>
#include <cstdlib>
#include <thread>

#include "ops/registry.h"

namespace kiln::testing {

namespace {

using namespace ir;

class FaultTemplate : public ops::Template {
 public:
  std::string_view name() const override { return "fault.test"; }
  std::string_view op() const override { return "fault"; }
  Result<ops::Workload> normalize(const ops::Workload& w) const override {
    return ops::normalize_params(w, name(), {{"N", std::nullopt, 1}});
  }
  std::vector<ops::TensorSpec> inputs(const ops::Workload& w) const override {
    return {{"in", {w.at("N")}}};
  }
  std::vector<ops::TensorSpec> outputs(const ops::Workload& w) const override {
    return {{"out", {w.at("N")}}};
  }
  double flop(const ops::Workload& w) const override { return static_cast<double>(w.at("N")); }
  ConfigSpace space(const ops::Workload&) const override {
    ConfigSpace s;
    s.define_knob("mode", {"ok", "wrong", "segfault", "hang", "build_crash", "build_hang"});
    s.define_knob("copy", {0, 1});
    return s;
  }
  ConfigEntity fallback(const ops::Workload&, const ConfigSpace& space,
                        const ops::TargetInfo&) const override {
    return space.get(0);
  }
  Result<Program> instantiate(const ops::Workload& w, const ConfigEntity& config,
                              const ops::TargetInfo&,
                              const ops::ActivationLayout& = {}) const override {
    std::string mode = config.other("mode").val.get<std::string>();
    if (mode == "build_crash") std::abort();
    if (mode == "build_hang") {
      while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    int64_t n = w.at("N");
    Buffer in("in", {n}, BufferScope::kArgument), out("out", {n}, BufferScope::kArgument);
    Expr i = var("i");
    Stmt body;
    if (mode == "ok") {
      body = For(i, n, LoopKind::kSerial, Store(out, {i}, in.load({i})));
    } else if (mode == "wrong") {
      body = For(i, n, LoopKind::kSerial, Store(out, {i}, in.load({i}) + f32(1)));
    } else if (mode == "segfault") {
      body = For(i, n, LoopKind::kSerial, StoreFlat(out, i * Expr(int64_t{1} << 36), f32(1)));
    } else {  // hang: 2^60 iterations of a store LLVM cannot drop
      body = For(i, int64_t{1} << 60, LoopKind::kSerial,
                 StoreFlat(out, i % Expr(n),
                           in.load_flat(i % Expr(n)) + out.load_flat((i + 1) % Expr(n))));
    }
    Program p;
    p.name = "fault_" + mode;
    p.buffers = {in, out};
    p.num_inputs = 1;
    p.num_outputs = 1;
    p.stages = {{"fault_main", body, true}};
    return p;
  }
  void reference(const ops::Workload& w, const std::vector<const float*>& in,
                 const std::vector<float*>& out) const override {
    for (int64_t i = 0; i < w.at("N"); ++i) out[0][i] = in[0][i];
  }
  nlohmann::json tvm_args(const ops::Workload& w) const override {
    return nlohmann::json::array({nlohmann::json::array({"TENSOR", {w.at("N")}, "float32"})});
  }
};

}  // namespace

const ops::Template& fault_template() {
  static const FaultTemplate t;
  ops::register_template(&t);
  return t;
}

}  // namespace kiln::testing
