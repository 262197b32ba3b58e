#include "ops/measured_layout.h"

#include <algorithm>
#include <string>
#include <variant>

namespace kiln::ops {

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

int64_t elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// The block b when `packed` is `nchw` as NCHW{b}c ([n, c / b, h, w, b]), else 0.
int64_t nchwc_block(const std::vector<int64_t>& nchw, const std::vector<int64_t>& packed) {
  if (nchw.size() != 4 || packed.size() != 5) return 0;
  const int64_t b = packed[4];
  bool same = b >= 1 && packed[0] == nchw[0] && packed[1] * b == nchw[1] && packed[2] == nchw[2] &&
              packed[3] == nchw[3];
  return same ? b : 0;
}

// The flat offset in NCHW{b}c of NCHW element (n, c, h, w) is
// (((n * (C / b) + c / b) * H + h) * W + w) * b + c % b; `visit(nchw_offset, packed_offset)`.
template <typename Visit>
void for_each_nchwc(const std::vector<int64_t>& nchw, int64_t b, Visit visit) {
  const int64_t N = nchw[0], C = nchw[1], H = nchw[2], W = nchw[3];
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h) {
        const int64_t from = ((n * C + c) * H + h) * W;
        const int64_t to = ((n * (C / b) + c / b) * H + h) * W * b + c % b;
        for (int64_t w = 0; w < W; ++w) visit(from + w, to + w * b);
      }
}

Status unsupported(const std::vector<int64_t>& user_shape,
                   const std::vector<int64_t>& argument_shape) {
  return InvalidArgument("a kernel argument of shape " + shape_text(argument_shape) +
                         " is not a known layout of the tensor " + shape_text(user_shape) +
                         " (only the same shape, or NCHW{b}c [n, c/b, h, w, b] of NCHW data)");
}

// Each template whose measured program changed: the version that last changed it, and whether it
// is measured with packed data and output (the NCHWc convolutions, from version 2 on).
struct ChangedMeasurement {
  std::string_view template_name;
  int version;
  bool packed;
};
constexpr ChangedMeasurement kChangedMeasurements[] = {{"conv2d_NCHWc.x86", 2, true},
                                                       {"depthwise_conv2d_NCHWc.x86", 2, true},
                                                       {"conv2d_NCHWc_winograd.x86", 2, true},
                                                       {"conv2d_NCHWc_flat.x86", 3, true},
                                                       {"dense_pack_ragged.x86", 3, false}};

const ChangedMeasurement* changed_measurement(std::string_view template_name) {
  for (const ChangedMeasurement& c : kChangedMeasurements) {
    if (c.template_name == template_name) return &c;
  }
  return nullptr;
}

}  // namespace

int oldest_comparable_version(std::string_view template_name) {
  const ChangedMeasurement* c = changed_measurement(template_name);
  return c ? c->version : 1;
}

const std::vector<std::string_view>& templates_with_newer_measurements() {
  static const std::vector<std::string_view> kNames = [] {
    std::vector<std::string_view> names;
    for (const ChangedMeasurement& c : kChangedMeasurements) names.push_back(c.template_name);
    return names;
  }();
  return kNames;
}

ActivationLayout measured_layout(const Template& tmpl, const ConfigEntity& config) {
  const ChangedMeasurement* changed = changed_measurement(tmpl.name());
  if (!changed || !changed->packed) return {};
  ActivationLayout layout;
  layout.packed_output = true;
  const Entity* e = config.find("tile_ic");
  const auto* split = e ? std::get_if<SplitEntity>(e) : nullptr;
  if (split && !split->size.empty() && split->size.back() >= 1) {
    layout.data_block = split->size.back();
  }
  return layout;
}

Result<ir::Program> instantiate_measured(const Template& tmpl, const Workload& w,
                                         const ConfigEntity& config, const TargetInfo& target) {
  return tmpl.instantiate(w, config, target, measured_layout(tmpl, config));
}

Result<std::vector<float>> to_argument_layout(const std::vector<float>& values,
                                              const std::vector<int64_t>& user_shape,
                                              const std::vector<int64_t>& argument_shape) {
  if (static_cast<int64_t>(values.size()) != elements(user_shape)) {
    return InvalidArgument("a tensor of shape " + shape_text(user_shape) + " needs " +
                           std::to_string(elements(user_shape)) + " values, got " +
                           std::to_string(values.size()));
  }
  if (argument_shape == user_shape) return values;
  const int64_t b = nchwc_block(user_shape, argument_shape);
  if (b == 0) return unsupported(user_shape, argument_shape);
  std::vector<float> out(values.size());
  for_each_nchwc(user_shape, b, [&](int64_t nchw, int64_t packed) { out[packed] = values[nchw]; });
  return out;
}

Result<std::vector<float>> from_argument_layout(const float* values,
                                                const std::vector<int64_t>& argument_shape,
                                                const std::vector<int64_t>& user_shape) {
  const int64_t n = elements(argument_shape);
  if (argument_shape == user_shape) return std::vector<float>(values, values + n);
  const int64_t b = nchwc_block(user_shape, argument_shape);
  if (b == 0) return unsupported(user_shape, argument_shape);
  std::vector<float> out(n);
  for_each_nchwc(user_shape, b, [&](int64_t nchw, int64_t packed) { out[nchw] = values[packed]; });
  return out;
}

}  // namespace kiln::ops
