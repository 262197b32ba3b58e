// A test-only operator in one file: softsign, y = x / (1 + |x|), for ONNX Softsign nodes (an op
// type kiln's own operators do not map). It registers its Operator and its one template
// (softsign.test) from this file alone, so a binary that links this file (kiln_with_test_op,
// tests/CMakeLists.txt) imports, lists, tunes and compiles models using it: the acceptance test
// that an operator needs no edit outside its file (tests/test_op_cli_test.cc).
//
// Workload softsign:N= (the node's elements); knobs tile_x = split(N, 2) (inner <= 16: the
// vector lanes) and unroll = [false, true] (the outer loop unrolled by 2 when it divides).
#include "ops/registry.h"
#include "ops/schedule_util.h"
#include "ops/tvm_args_parse.h"

namespace kiln::testing {

namespace {

using namespace ir;

constexpr int64_t kMaxLanes = 16;

class SoftsignTemplate final : public ops::Template {
 public:
  std::string_view name() const override { return "softsign.test"; }
  std::string_view op() const override { return "softsign"; }
  Result<ops::Workload> normalize(const ops::Workload& w) const override {
    return ops::normalize_params(w, name(), {{"N", std::nullopt, 1}});
  }
  std::vector<ops::TensorSpec> inputs(const ops::Workload& w) const override {
    return {{"x", {w.at("N")}}};
  }
  std::vector<ops::TensorSpec> outputs(const ops::Workload& w) const override {
    return {{"y", {w.at("N")}}};
  }
  double flop(const ops::Workload& w) const override { return 3.0 * w.at("N"); }
  ConfigSpace space(const ops::Workload& w) const override {
    ConfigSpace s;
    s.define_split("tile_x", w.at("N"), ops::factor_splits(2, [](const SplitEntity& e) {
                     return e.size.back() <= kMaxLanes;
                   }));
    s.define_knob("unroll", {false, true});
    return s;
  }
  ConfigEntity fallback(const ops::Workload&, const ConfigSpace& space,
                        const ops::TargetInfo&) const override {
    return space.get(0);
  }
  Result<Program> instantiate(const ops::Workload& w, const ConfigEntity& config,
                              const ops::TargetInfo&,
                              const ops::ActivationLayout& layout = {}) const override {
    if (!layout.is_default()) return InstantiationError("softsign.test: only the NCHW layout");
    int64_t n = w.at("N");
    KILN_ASSIGN_OR_RETURN(auto tile, ops::tile_sizes(name(), config, "tile_x", n, 2));
    const Entity* unroll_knob = config.find("unroll");
    const auto* unroll = unroll_knob ? std::get_if<OtherOptionEntity>(unroll_knob) : nullptr;
    if (!unroll || !unroll->val.is_boolean()) {
      return InstantiationError("softsign.test: config has no boolean knob 'unroll'");
    }
    Buffer x("x", {n}, BufferScope::kArgument), y("y", {n}, BufferScope::kArgument);
    Expr i = var("i"), o = var("o");
    auto lane = [&](const Expr& index) {
      Expr v = x.load({index});
      return Store(y, {index}, v / (f32(1) + abs(v)));
    };
    Stmt body;
    if (unroll->val.get<bool>() && tile[0] % 2 == 0) {
      Expr u = var("u");
      body = For(
          o, tile[0] / 2, LoopKind::kParallel,
          For(u, 2, LoopKind::kUnrolled,
              For(i, tile[1], LoopKind::kVectorized, lane((o * Expr(2) + u) * Expr(tile[1]) + i))));
    } else {
      body = For(o, tile[0], LoopKind::kParallel,
                 For(i, tile[1], LoopKind::kVectorized, lane(o * Expr(tile[1]) + i)));
    }
    Program p;
    p.name = "softsign";
    p.buffers = {x, y};
    p.num_inputs = 1;
    p.num_outputs = 1;
    p.stages = {{"softsign_compute", body, true}};
    return p;
  }
  void reference(const ops::Workload& w, const std::vector<const float*>& in,
                 const std::vector<float*>& out) const override {
    for (int64_t i = 0; i < w.at("N"); ++i) {
      double v = in[0][i];
      out[0][i] = static_cast<float>(v / (1.0 + std::abs(v)));
    }
  }
  nlohmann::json tvm_args(const ops::Workload& w) const override {
    return nlohmann::json::array({nlohmann::json::array({"TENSOR", {w.at("N")}, "float32"})});
  }
};

class SoftsignOperator final : public ops::Operator {
 public:
  std::string_view name() const override { return "softsign"; }
  std::vector<std::string> onnx_ops() const override { return {"Softsign"}; }
  Result<std::optional<ops::Workload>> workload_of(const ops::NodeView& node) const override {
    int64_t n = 1;
    for (int64_t d : node.shape(node.inputs()[0])) n *= d;
    ops::Workload w;
    w.op = "softsign";
    w.params = {{"N", n}};
    return std::optional(w);
  }
  Result<ops::Workload> from_tvm_args(const nlohmann::json& args) const override {
    if (args.size() != 1) return InvalidArgument("expected one arg");
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> x, ops::tvm_tensor_dims(args[0], 1, "x"));
    ops::Workload w;
    w.op = "softsign";
    w.params = {{"N", x[0]}};
    return w;
  }
  Result<ops::Binding> bind(const ops::NodeView& node, const ops::Workload&,
                            ops::ArgumentBinder& binder) const override {
    KILN_ASSIGN_OR_RETURN(int x, binder.value(node.inputs()[0]));
    ops::Binding b;
    b.args = {x};
    return b;
  }
};

const SoftsignTemplate kTemplate;
const SoftsignOperator kOperator;
const ops::Registration kRegistration(&kOperator, {&kTemplate});

}  // namespace

}  // namespace kiln::testing
