#include "runtime/model_artifact.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/safe_file.h"
#include "common/sha256.h"

namespace kiln {
namespace {

using nlohmann::json;

constexpr std::string_view kMagic = "KILNMODL";
constexpr size_t kDigestBytes = 32;
// The largest element count a value may have (16 TiB of float32): sums of a million such sizes
// still fit an int64, so that the executor's planner never overflows (it refuses, against the
// machine's memory, what it cannot allocate).
constexpr int64_t kMaxElements = int64_t{1} << 42;
// A compiled model is read into memory whole; the cap (far above any real model's weights)
// keeps a wrong path such as /dev/zero or a huge file from exhausting memory.
constexpr int64_t kMaxModelFileBytes = int64_t{16} << 30;

// --- little-endian primitives. kiln's hosts (x86-64, aarch64 Linux) are little-endian, but the
// format is defined byte by byte so it does not depend on that.

void PutU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
uint64_t GetLE(std::string_view bytes, size_t pos, int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; ++i) {
    v |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[pos + i])) << (8 * i);
  }
  return v;
}

// The raw 32 bytes of SHA-256(bytes) (common/sha256.h gives hex).
std::string Digest(std::string_view bytes) {
  const std::string hex = sha256_hex(bytes);
  std::string raw(kDigestBytes, '\0');
  auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  for (size_t i = 0; i < kDigestBytes; ++i) {
    raw[i] = static_cast<char>(nibble(hex[2 * i]) << 4 | nibble(hex[2 * i + 1]));
  }
  return raw;
}

const char* KindName(ModelValueKind kind) {
  switch (kind) {
    case ModelValueKind::kInput:
      return "input";
    case ModelValueKind::kOutput:
      return "output";
    case ModelValueKind::kConstant:
      return "constant";
    case ModelValueKind::kIntermediate:
      return "intermediate";
    case ModelValueKind::kView:
      return "view";
  }
  KILN_UNREACHABLE("unknown ModelValueKind");
}

bool KindFromName(const std::string& name, ModelValueKind* kind) {
  for (ModelValueKind k :
       {ModelValueKind::kInput, ModelValueKind::kOutput, ModelValueKind::kConstant,
        ModelValueKind::kIntermediate, ModelValueKind::kView}) {
    if (name == KindName(k)) {
      *kind = k;
      return true;
    }
  }
  return false;
}

json HeaderJson(const ModelArtifact& model) {
  json values = json::array();
  for (const ModelValue& v : model.values) {
    json j = {{"name", v.name}, {"shape", v.shape}, {"kind", KindName(v.kind)}};
    if (v.kind == ModelValueKind::kConstant) j["constant_offset"] = v.constant_offset;
    if (v.dtype == ModelDType::kInt64) j["dtype"] = "int64";
    if (v.kind == ModelValueKind::kView) j["view_of"] = v.view_of;
    if (v.kind == ModelValueKind::kView && v.view_offset != 0) j["view_offset"] = v.view_offset;
    values.push_back(std::move(j));
  }
  json steps = json::array();
  for (const ModelStep& s : model.steps) {
    json step = {{"symbol", s.symbol}, {"buffers", s.buffers}, {"label", s.label}};
    if (!s.config_source.empty()) step["config_source"] = s.config_source;
    if (s.flop > 0) step["flop"] = s.flop;
    steps.push_back(std::move(step));
  }
  return {{"kiln_version", model.kiln_version},
          {"target", model.target},
          {"cpu_features", model.cpu_features},
          {"values", std::move(values)},
          {"inputs", model.inputs},
          {"outputs", model.outputs},
          {"steps", std::move(steps)}};
}

// Fills `model` from the header; nlohmann's type errors (a string where a number belongs...)
// surface as json::exception, which the caller turns into a Status.
Status HeaderFromJson(const json& h, ModelArtifact* model, const std::string& label) {
  model->kiln_version = h.at("kiln_version").get<std::string>();
  model->target = h.at("target").get<std::string>();
  model->cpu_features = h.at("cpu_features").get<std::vector<std::string>>();
  for (const json& j : h.at("values")) {
    ModelValue v;
    v.name = j.at("name").get<std::string>();
    v.shape = j.at("shape").get<std::vector<int64_t>>();
    const std::string kind = j.at("kind").get<std::string>();
    if (!KindFromName(kind, &v.kind)) {
      return InvalidArgument(label + ": value '" + v.name + "' has unknown kind '" + kind + "'");
    }
    if (v.kind == ModelValueKind::kConstant) v.constant_offset = j.at("constant_offset");
    if (v.kind == ModelValueKind::kView) {
      v.view_of = j.at("view_of");
      v.view_offset = j.value("view_offset", int64_t{0});
    }
    const std::string dtype = j.value("dtype", std::string("float32"));
    if (dtype == "int64") {
      v.dtype = ModelDType::kInt64;
    } else if (dtype != "float32") {
      return InvalidArgument(label + ": value '" + v.name + "' has unknown dtype '" + dtype + "'");
    }
    model->values.push_back(std::move(v));
  }
  model->inputs = h.at("inputs").get<std::vector<int>>();
  model->outputs = h.at("outputs").get<std::vector<int>>();
  for (const json& j : h.at("steps")) {
    ModelStep s;
    s.symbol = j.at("symbol").get<std::string>();
    s.buffers = j.at("buffers").get<std::vector<int>>();
    s.label = j.at("label").get<std::string>();
    if (j.contains("config_source")) {
      s.config_source = j.at("config_source").get<std::string>();
      if (s.config_source != "tuned" && s.config_source != "predicted" &&
          s.config_source != "default") {
        return InvalidArgument(label + ": step '" + s.label + "' has unknown config_source '" +
                               s.config_source + "' (expected tuned, predicted or default)");
      }
    }
    if (j.contains("flop")) {
      s.flop = j.at("flop").get<double>();
      if (!(s.flop > 0) || !std::isfinite(s.flop)) {
        return InvalidArgument(label + ": step '" + s.label + "' has flop " + j.at("flop").dump() +
                               " (expected a positive number)");
      }
    }
    model->steps.push_back(std::move(s));
  }
  return Status::Ok();
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

// Element count of a shape (0 for an empty tensor), or -1 if a dimension is negative or the
// count is too large.
int64_t CheckedElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && n > kMaxElements / d)) return -1;
    n *= d;
  }
  return n;
}

}  // namespace

int64_t ModelValue::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t ModelValue::floats() const {
  return dtype == ModelDType::kInt64 ? 2 * num_elements() : num_elements();
}

Status validate_model(const ModelArtifact& model, const std::string& label) {
  const int num_values = static_cast<int>(model.values.size());
  auto bad_id = [&](int id) { return id < 0 || id >= num_values; };
  auto value_text = [&](int id) {
    return "value " + std::to_string(id) + " ('" + model.values[id].name + "')";
  };
  for (int id = 0; id < num_values; ++id) {
    const ModelValue& v = model.values[id];
    int64_t n = CheckedElements(v.shape);
    if (n < 0) {
      return InvalidArgument(label + ": " + value_text(id) + " has shape " + ShapeText(v.shape) +
                             ": dimensions must be non-negative and the size reasonable");
    }
    if (v.dtype == ModelDType::kInt64) {
      if (v.kind != ModelValueKind::kConstant) {
        return InvalidArgument(label + ": " + value_text(id) +
                               " is int64, which only constants may be");
      }
      n *= 2;
    }
    if (v.kind == ModelValueKind::kConstant) {
      const auto blob = static_cast<int64_t>(model.constants.size());
      if (v.constant_offset < 0 || v.constant_offset > blob || n > blob - v.constant_offset) {
        return InvalidArgument(
            label + ": constant " + value_text(id) + " spans floats [" +
            std::to_string(v.constant_offset) + ", " + std::to_string(v.constant_offset + n) +
            ") beyond the constants blob of " + std::to_string(blob) + " floats");
      }
    }
    if (v.kind == ModelValueKind::kView) {
      if (bad_id(v.view_of) || v.view_of == id) {
        return InvalidArgument(label + ": view " + value_text(id) + " views value id " +
                               std::to_string(v.view_of) + ", not another of the " +
                               std::to_string(num_values) + " values");
      }
      const ModelValue& of = model.values[v.view_of];
      const int64_t whole = CheckedElements(of.shape);
      const bool partial = v.view_offset != 0 || n != whole;
      if (v.view_offset < 0 || v.view_offset > whole || n > whole - v.view_offset ||
          (partial && (v.dtype != ModelDType::kFloat32 || of.dtype != ModelDType::kFloat32))) {
        return InvalidArgument(label + ": view " + value_text(id) + " has " + std::to_string(n) +
                               " elements from offset " + std::to_string(v.view_offset) +
                               " but views " + value_text(v.view_of) + " of shape " +
                               ShapeText(of.shape) +
                               (partial ? " (only float32 values have views of a part)" : ""));
      }
    }
  }
  // A chain of views must end at a value with storage: a cycle would never resolve.
  for (int id = 0; id < num_values; ++id) {
    int root = id, hops = 0;
    while (model.values[root].kind == ModelValueKind::kView) {
      root = model.values[root].view_of;
      if (++hops > num_values) {
        return InvalidArgument(label + ": views starting at " + value_text(id) + " form a cycle");
      }
    }
  }
  std::vector<bool> listed_input(num_values, false);
  for (int id : model.inputs) {
    if (bad_id(id)) {
      return InvalidArgument(label + ": graph input id " + std::to_string(id) +
                             " is out of range (" + std::to_string(num_values) + " values)");
    }
    if (model.values[id].kind != ModelValueKind::kInput) {
      return InvalidArgument(label + ": graph input " + value_text(id) + " is of kind '" +
                             KindName(model.values[id].kind) + "', not 'input'");
    }
    if (listed_input[id]) {
      return InvalidArgument(label + ": " + value_text(id) + " is listed twice as an input");
    }
    listed_input[id] = true;
  }
  for (int id = 0; id < num_values; ++id) {
    if (model.values[id].kind == ModelValueKind::kInput && !listed_input[id]) {
      return InvalidArgument(label + ": input " + value_text(id) +
                             " is not among the graph inputs");
    }
  }
  for (size_t i = 0; i < model.inputs.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (model.values[model.inputs[i]].name == model.values[model.inputs[j]].name) {
        return InvalidArgument(label + ": two inputs are named '" +
                               model.values[model.inputs[i]].name + "'");
      }
    }
  }
  for (int id : model.outputs) {
    if (bad_id(id)) {
      return InvalidArgument(label + ": graph output id " + std::to_string(id) +
                             " is out of range (" + std::to_string(num_values) + " values)");
    }
  }
  for (size_t s = 0; s < model.steps.size(); ++s) {
    const ModelStep& step = model.steps[s];
    if (step.symbol.empty()) {
      return InvalidArgument(label + ": step " + std::to_string(s) + " ('" + step.label +
                             "') names no symbol");
    }
    for (int id : step.buffers) {
      if (id != -1 && bad_id(id)) {
        return InvalidArgument(label + ": step " + std::to_string(s) + " ('" + step.label +
                               "') uses value id " + std::to_string(id) + ", out of range (" +
                               std::to_string(num_values) + " values)");
      }
      if (id != -1 && model.values[id].dtype != ModelDType::kFloat32) {
        return InvalidArgument(label + ": step " + std::to_string(s) + " ('" + step.label +
                               "') reads int64 " + value_text(id) + "; kernels take float32");
      }
    }
  }
  return Status::Ok();
}

ViewRoot resolve_view(const std::vector<ModelValue>& values, int id) {
  ViewRoot at{id, 0};
  while (values[at.value].kind == ModelValueKind::kView) {
    at.offset += values[at.value].view_offset;
    at.value = values[at.value].view_of;
  }
  return at;
}

std::string model_graph_json(const ModelArtifact& model) { return HeaderJson(model).dump(); }

std::string serialize_model(const ModelArtifact& model) {
  const std::string header = HeaderJson(model).dump();
  std::string out;
  out.reserve(kMagic.size() + 28 + header.size() + model.shared_object.size() +
              model.constants.size() * sizeof(float) + kDigestBytes);
  out += kMagic;
  PutU32(out, kModelFormatVersion);
  PutU64(out, header.size());
  out += header;
  PutU64(out, model.shared_object.size());
  out += model.shared_object;
  PutU64(out, model.constants.size() * sizeof(float));
  for (float f : model.constants) {
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    PutU32(out, bits);
  }
  out += Digest(out);
  return out;
}

Result<ModelArtifact> parse_model(std::string_view bytes, const std::string& label) {
  auto invalid = [&](const std::string& what) { return InvalidArgument(label + ": " + what); };
  if (bytes.size() < kMagic.size() || bytes.substr(0, kMagic.size()) != kMagic) {
    return invalid("not a kiln model (no KILNMODL magic at the start)");
  }
  size_t pos = kMagic.size();
  // Reads a little-endian field of `width` bytes named `what`, or fails as truncated.
  auto read_field = [&](int width, const char* what, uint64_t* v) -> Status {
    if (bytes.size() - pos < static_cast<size_t>(width)) {
      return invalid("truncated: the file ends (at byte " + std::to_string(bytes.size()) +
                     ") inside the " + what);
    }
    *v = GetLE(bytes, pos, width);
    pos += width;
    return Status::Ok();
  };
  // Reads a length-prefixed section of `what`; fails if the length overruns the file.
  auto read_section = [&](const char* what, std::string_view* section) -> Status {
    uint64_t len = 0;
    KILN_RETURN_IF_ERROR(read_field(8, what, &len));
    if (len > bytes.size() - pos) {
      return invalid(std::string("truncated or corrupt: the ") + what + " claims " +
                     std::to_string(len) + " bytes but only " + std::to_string(bytes.size() - pos) +
                     " remain");
    }
    *section = bytes.substr(pos, len);
    pos += len;
    return Status::Ok();
  };
  uint64_t version = 0;
  KILN_RETURN_IF_ERROR(read_field(4, "format version", &version));
  if (version < kOldestModelFormatVersion || version > kModelFormatVersion) {
    return invalid("format version " + std::to_string(version) + ", but this kiln reads versions " +
                   std::to_string(kOldestModelFormatVersion) + " to " +
                   std::to_string(kModelFormatVersion) +
                   (version > kModelFormatVersion ? " (recompile the model with this kiln)" : ""));
  }
  std::string_view header, so, constants;
  KILN_RETURN_IF_ERROR(read_section("header", &header));
  KILN_RETURN_IF_ERROR(read_section("shared object", &so));
  KILN_RETURN_IF_ERROR(read_section("constants", &constants));
  if (bytes.size() - pos < kDigestBytes) {
    return invalid("truncated: " + std::to_string(bytes.size() - pos) +
                   " bytes of the 32-byte SHA-256 trailer");
  }
  if (bytes.size() - pos > kDigestBytes) {
    return invalid(std::to_string(bytes.size() - pos - kDigestBytes) +
                   " unexpected bytes after the SHA-256 trailer");
  }
  if (Digest(bytes.substr(0, pos)) != bytes.substr(pos)) {
    return invalid("checksum mismatch: the file is corrupt (its SHA-256 trailer does not match)");
  }
  if (constants.size() % sizeof(float) != 0) {
    return invalid("the constants section has " + std::to_string(constants.size()) +
                   " bytes, not a whole number of float32");
  }

  ModelArtifact model;
  try {
    json h = json::parse(header);
    KILN_RETURN_IF_ERROR(HeaderFromJson(h, &model, label));
  } catch (const json::exception& e) {
    return invalid(std::string("malformed header: ") + e.what());
  }
  model.shared_object = std::string(so);
  model.constants.resize(constants.size() / sizeof(float));
  for (size_t i = 0; i < model.constants.size(); ++i) {
    const auto bits = static_cast<uint32_t>(GetLE(constants, i * sizeof(float), 4));
    std::memcpy(&model.constants[i], &bits, sizeof bits);
  }
  KILN_RETURN_IF_ERROR(validate_model(model, label));
  return model;
}

Status write_model_file(const ModelArtifact& model, const std::string& path) {
  return write_file_atomically(path, serialize_model(model));
}

Result<ModelArtifact> read_model_file(const std::string& path) {
  // One read of the whole file, sized first: models carry tens of megabytes of weights.
  KILN_ASSIGN_OR_RETURN(std::string bytes,
                        read_regular_file(path, kMaxModelFileBytes, "compiled model"));
  return parse_model(bytes, path);
}

}  // namespace kiln
