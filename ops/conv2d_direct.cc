#include "ops/conv2d_direct.h"

#include "ops/default_config.h"
#include "ops/registry.h"

namespace kiln::ops::conv {

namespace {

using ir::Expr;
using ir::LoopKind;
using ir::Stmt;

// kernel_vec[occ, icc, kh, kw, icb, ocb] = weight[occ * oc_bn + ocb, icc * ic_bn + icb, kh, kw],
// zero for the padding lanes of a ragged block.
Stmt pack_weight(const Geometry& g, int64_t ic_bn, const Tiling& t, const ir::Buffer& weight,
                 const ir::Buffer& kernel_vec) {
  const int64_t oc_bn = t.oc_bn;
  Expr occ = ir::var("occ"), icc = ir::var("icc"), kh = ir::var("kh"), kw = ir::var("kw"),
       icb = ir::var("icb");
  auto value = [&](const Expr& ocb) {
    return weight.load({occ * Expr(oc_bn) + ocb, icc * Expr(ic_bn) + icb, kh, kw});
  };
  Stmt body;
  if (ragged(g, t)) {
    Expr ocb = ir::var("ocb");
    std::vector<Expr> at = {occ, icc, kh, kw, icb, ocb};
    body =
        ir::For(ocb, oc_bn, LoopKind::kSerial,
                ir::If(occ * Expr(oc_bn) + ocb < Expr(g.k), ir::Store(kernel_vec, at, value(ocb)),
                       ir::Store(kernel_vec, at, ir::f32(0))));
  } else {
    body = vector_loop("ocb", oc_bn, [&](const Expr& ocb) {
      return ir::Store(kernel_vec, {occ, icc, kh, kw, icb, ocb}, value(ocb));
    });
  }
  return ir::LoopNest({{occ, oc_chunks(g, t), LoopKind::kParallel},
                       {icc, g.c / g.groups / ic_bn},
                       {kh, g.r},
                       {kw, g.s},
                       {icb, ic_bn}},
                      body);
}

}  // namespace

std::pair<int64_t, int64_t> space_output_size(const Geometry& g) {
  return {(g.h + 2 * g.pad_h - g.r) / g.stride_h + 1, (g.w + 2 * g.pad_w - g.s) / g.stride_w + 1};
}

void define_tile_knobs(const Geometry& g, ConfigSpace* space) {
  auto [oh, ow] = space_output_size(g);
  SplitOptions ow_options;
  ow_options.policy = "verbose";
  ow_options.filter = [](const SplitEntity& e) { return e.size.back() <= 64; };
  space->define_split("tile_ow", ow, ow_options);
  if (is_1x1(g)) {
    space->define_knob("tile_oh",
                       oh > 1 ? std::vector<nlohmann::json>{1, 2} : std::vector<nlohmann::json>{1});
  } else {
    space->define_knob("unroll_kw", {true, false});
  }
}

std::vector<int64_t> oh_factors(const Geometry& g) {
  std::vector<int64_t> out = {1};
  if (is_1x1(g) && space_output_size(g).first > 1) out.push_back(2);
  return out;
}

std::vector<std::pair<std::string, Entity>> default_tile_knobs(const Geometry& g,
                                                               const DefaultTile& tile) {
  std::vector<std::pair<std::string, Entity>> out = {
      {"tile_ow", two_way_split(space_output_size(g).second, tile.reg_n)}};
  if (is_1x1(g)) {
    out.push_back({"tile_oh", OtherOptionEntity{tile.oh_factor}});
  } else {
    out.push_back({"unroll_kw", OtherOptionEntity{false}});
  }
  return out;
}

Result<Conv2dTile> read_tile_knobs(const Geometry& g, const ConfigEntity& config, int64_t oc_bn) {
  KILN_ASSIGN_OR_RETURN(int64_t reg_n, split_inner(config, "tile_ow", 0));
  Conv2dTile out{{oc_bn, reg_n, 1}, false};
  if (is_1x1(g)) {
    KILN_ASSIGN_OR_RETURN(nlohmann::json oh, option(config, "tile_oh"));
    if (!oh.is_number_integer() || oh.get<int64_t>() < 1) {
      return InstantiationError("tile_oh = " + oh.dump() + " is not a positive integer");
    }
    out.tiling.oh_factor = oh.get<int64_t>();
  } else {
    KILN_ASSIGN_OR_RETURN(nlohmann::json unroll, option(config, "unroll_kw"));
    if (!unroll.is_boolean()) {
      return InstantiationError("unroll_kw = " + unroll.dump() + " is not a boolean");
    }
    out.unroll_kw = unroll.get<bool>();
  }
  return out;
}

DirectConv conv2d_direct(const Geometry& g, int64_t ic_bn, const Conv2dTile& tile) {
  const Tiling t = tile.tiling;
  const bool unroll_kw = tile.unroll_kw;
  DirectConv direct;
  direct.name = "conv2d_NCHWc";
  const int64_t group_c = g.c / g.groups;  // the input channels one output channel reads
  direct.weight_shape = {g.k, group_c, g.r, g.s};
  direct.kernel_vec_shape = {oc_chunks(g, t), group_c / ic_bn, g.r, g.s, ic_bn, t.oc_bn};
  direct.ic_bn = ic_bn;
  direct.tiling = t;
  direct.tile_inputs = g.groups == 1 ? TileInputs::kAll : TileInputs::kOwnGroup;
  direct.pack_weight = [g, ic_bn, t](const ir::Buffer& weight, const ir::Buffer& kernel_vec) {
    return pack_weight(g, ic_bn, t, weight, kernel_vec);
  };
  direct.reduction = [g, ic_bn, t, unroll_kw](const Tile& tile, const DataLoad& data,
                                              const ir::Buffer& kernel_vec) {
    Expr icc = ir::var("icc"), icb = ir::var("icb");
    const int64_t ic_chunks = g.c / g.groups / ic_bn;
    // A group's output chunks read its own input chunks (oc_bn divides K/groups).
    Expr data_icc = icc;
    if (g.groups > 1) {
      data_icc = tile.oc_chunk / Expr(g.k / g.groups / t.oc_bn) * Expr(ic_chunks) + icc;
    }
    Expr kh = is_1x1(g) ? Expr(0) : ir::var("kh"), kw = is_1x1(g) ? Expr(0) : ir::var("kw");
    Stmt update = accumulate(tile, [&](const Expr& ohi, const Expr& j, const Expr& v) {
      Expr h = (tile.oh0 + ohi) * Expr(g.stride_h) + kh * Expr(g.dilation);
      Expr x = (tile.ow0 + j) * Expr(g.stride_w) + kw * Expr(g.dilation);
      return data(tile.n, data_icc, h, x, icb) *
             kernel_vec.load({tile.oc_chunk, icc, kh, kw, icb, v});
    });
    if (is_1x1(g)) return ir::LoopNest({{icc, ic_chunks}, {icb, ic_bn}}, update);
    if (unroll_kw) {
      return ir::LoopNest(
          {{icc, ic_chunks}, {kh, g.r}, {icb, ic_bn}, {kw, g.s, LoopKind::kUnrolled}}, update);
    }
    return ir::LoopNest({{icc, ic_chunks}, {kh, g.r}, {kw, g.s}, {icb, ic_bn}}, update);
  };
  return direct;
}

std::vector<TensorSpec> Conv2dVariant::inputs(const Workload& w) const {
  return conv2d_nchwc_template().inputs(w);
}

std::vector<TensorSpec> Conv2dVariant::outputs(const Workload& w) const {
  return conv2d_nchwc_template().outputs(w);
}

double Conv2dVariant::flop(const Workload& w) const { return conv2d_nchwc_template().flop(w); }

void Conv2dVariant::reference(const Workload& w, const std::vector<const float*>& inputs,
                              const std::vector<float*>& outputs) const {
  conv2d_nchwc_template().reference(w, inputs, outputs);
}

nlohmann::json Conv2dVariant::tvm_args(const Workload& w) const {
  return conv2d_nchwc_template().tvm_args(w);
}

Result<Workload> Conv2dVariant::normalize_as_direct(const Workload& w) const {
  Result<Workload> direct = conv2d_nchwc_template().normalize(w);
  if (!direct.ok()) return refuse(w, direct.status().message());
  return direct;
}

Status Conv2dVariant::refuse(const Workload& w, const std::string& why) const {
  return InvalidArgument(std::string(name()) + " workload " + w.to_string() + ": " + why);
}

}  // namespace kiln::ops::conv
