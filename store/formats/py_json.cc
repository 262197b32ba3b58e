#include "store/formats/py_json.h"

#include <cmath>
#include <string_view>
#include <utility>

namespace kiln::store {

namespace {

// Decodes the UTF-8 sequence at s[i]: its code point and length, or length 0 when ill-formed.
std::pair<unsigned, int> decode_utf8(std::string_view s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return {c, 1};
  int len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
  if (len == 0 || c > 0xf4 || i + len > s.size()) return {0, 0};
  unsigned cp = c & (0x7f >> len);
  for (int k = 1; k < len; ++k) {
    unsigned char cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xc0) != 0x80) return {0, 0};
    cp = (cp << 6) | (cc & 0x3f);
  }
  bool overlong = (len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
  if (overlong || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return {0, 0};
  return {cp, len};
}

// Appends a JSON string literal with ensure_ascii escaping; false when `s` is not valid UTF-8.
bool append_string(std::string* out, const std::string& s) {
  static const char kHex[] = "0123456789abcdef";
  auto u_escape = [&](unsigned v) {
    *out += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4) *out += kHex[(v >> shift) & 0xf];
  };
  *out += '"';
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          *out += "\\\"";
          break;
        case '\\':
          *out += "\\\\";
          break;
        case '\n':
          *out += "\\n";
          break;
        case '\r':
          *out += "\\r";
          break;
        case '\t':
          *out += "\\t";
          break;
        case '\b':
          *out += "\\b";
          break;
        case '\f':
          *out += "\\f";
          break;
        default:
          // Python escapes everything outside ' '..'~' (so DEL too) as \u00XX.
          if (c < 0x20 || c == 0x7f) {
            u_escape(c);
          } else {
            *out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    auto [cp, len] = decode_utf8(s, i);
    if (len == 0) return false;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      u_escape(0xd800 + (cp >> 10));
      u_escape(0xdc00 + (cp & 0x3ff));
    } else {
      u_escape(cp);
    }
    i += len;
  }
  *out += '"';
  return true;
}

template <typename Json>
Status dump(const Json& v, std::string* out) {
  using Type = nlohmann::detail::value_t;
  switch (v.type()) {
    case Type::null:
      *out += "null";
      return Status::Ok();
    case Type::boolean:
      *out += v.template get<bool>() ? "true" : "false";
      return Status::Ok();
    case Type::number_integer:
      *out += std::to_string(v.template get<int64_t>());
      return Status::Ok();
    case Type::number_unsigned:
      *out += std::to_string(v.template get<uint64_t>());
      return Status::Ok();
    case Type::number_float: {
      double x = v.template get<double>();
      if (!std::isfinite(x)) {
        return InvalidArgument("JSON: cannot write the non-finite number " + std::to_string(x));
      }
      *out += py_float_repr(x);
      return Status::Ok();
    }
    case Type::string:
      if (!append_string(out, v.template get_ref<const std::string&>())) {
        return InvalidArgument("JSON: string is not valid UTF-8");
      }
      return Status::Ok();
    case Type::array: {
      *out += '[';
      bool first = true;
      for (const auto& item : v) {
        if (!first) *out += ", ";
        first = false;
        KILN_RETURN_IF_ERROR(dump(item, out));
      }
      *out += ']';
      return Status::Ok();
    }
    case Type::object: {
      *out += '{';
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first) *out += ", ";
        first = false;
        if (!append_string(out, it.key())) return InvalidArgument("JSON: key is not valid UTF-8");
        *out += ": ";
        KILN_RETURN_IF_ERROR(dump(it.value(), out));
      }
      *out += '}';
      return Status::Ok();
    }
    case Type::binary:
    case Type::discarded:
      break;
  }
  return InvalidArgument("JSON: value of a kind JSON text cannot hold");
}

}  // namespace

bool is_valid_utf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    int len = decode_utf8(text, i).second;
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::string to_valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    int len = decode_utf8(text, i).second;
    if (len == 0) {
      out += "\xef\xbf\xbd";  // U+FFFD
      ++i;
    } else {
      out.append(text.substr(i, len));
      i += len;
    }
  }
  return out;
}

Result<std::string> py_json_dumps(const nlohmann::ordered_json& value) {
  std::string out;
  KILN_RETURN_IF_ERROR(dump(value, &out));
  return out;
}

Result<std::string> py_json_dumps(const nlohmann::json& value) {
  std::string out;
  KILN_RETURN_IF_ERROR(dump(value, &out));
  return out;
}

}  // namespace kiln::store
