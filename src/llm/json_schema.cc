#include "llm/json_schema.h"

#include <cmath>
#include <set>
#include <string>

#include "core/strings.h"
#include "fmt/format.h"

namespace schedmate::llm {
namespace {

using nlohmann::json;

const std::set<std::string>& KnownKeywords() {
  static const std::set<std::string> k = {"type",
                                          "properties",
                                          "required",
                                          "enum",
                                          "items",
                                          "nullable",
                                          "minimum",
                                          "maximum",
                                          "minItems",
                                          "maxItems",
                                          "minLength",
                                          "maxLength",
                                          "description",
                                          "title",
                                          "default",
                                          "$schema",
                                          "additionalProperties"};
  return k;
}

const std::set<std::string>& TypeNames() {
  static const std::set<std::string> t = {"string", "number", "integer", "boolean",
                                          "object", "array",  "null"};
  return t;
}

Status CheckAt(const json& schema, const std::string& path) {
  if (!schema.is_object()) return Status::InvalidArgument(path + ": a schema must be an object");
  for (const auto& [key, value] : schema.items()) {
    const std::string where = path + "." + key;
    if (!KnownKeywords().contains(key)) {
      return Status::InvalidArgument(
          fmt::format("{}: schema keyword '{}' is not supported by the validator", where, key));
    }
    if (key == "type") {
      std::vector<json> names =
          value.is_array() ? value.get<std::vector<json>>() : std::vector<json>{value};
      for (const json& n : names) {
        if (!n.is_string() || !TypeNames().contains(n.get<std::string>())) {
          return Status::InvalidArgument(fmt::format("{}: unknown type {}", where, n.dump()));
        }
      }
    } else if (key == "properties") {
      if (!value.is_object()) return Status::InvalidArgument(where + ": must be an object");
      for (const auto& [name, sub] : value.items()) {
        SM_RETURN_IF_ERROR(CheckAt(sub, where + "." + name));
      }
    } else if (key == "items") {
      SM_RETURN_IF_ERROR(CheckAt(value, where));
    } else if (key == "required") {
      if (!value.is_array()) return Status::InvalidArgument(where + ": must be a list of names");
      for (const json& n : value) {
        if (!n.is_string()) return Status::InvalidArgument(where + ": must be a list of names");
      }
    } else if (key == "enum") {
      if (!value.is_array() || value.empty()) {
        return Status::InvalidArgument(where + ": must be a non-empty list");
      }
    } else if (key == "nullable" || key == "additionalProperties") {
      if (!value.is_boolean()) return Status::InvalidArgument(where + ": must be true or false");
    } else if (key == "minimum" || key == "maximum") {
      if (!value.is_number()) return Status::InvalidArgument(where + ": must be a number");
    } else if (key == "minItems" || key == "maxItems" || key == "minLength" || key == "maxLength") {
      if (!value.is_number_integer() || value.get<int64_t>() < 0) {
        return Status::InvalidArgument(where + ": must be a non-negative integer");
      }
    }
  }
  return Status::Ok();
}

std::string TypeOf(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "integer";
    case json::value_t::number_float:
      return "number";
    case json::value_t::string:
      return "string";
    case json::value_t::array:
      return "array";
    case json::value_t::object:
      return "object";
    default:
      return "unknown";
  }
}

bool HasType(const json& v, const std::string& type) {
  if (type == "null") return v.is_null();
  if (type == "boolean") return v.is_boolean();
  if (type == "string") return v.is_string();
  if (type == "array") return v.is_array();
  if (type == "object") return v.is_object();
  if (type == "number") return v.is_number();
  if (type == "integer") {
    if (v.is_number_integer()) return true;
    if (!v.is_number_float()) return false;
    const double d = v.get<double>();
    return std::isfinite(d) && d == static_cast<double>(static_cast<int64_t>(d));
  }
  return false;
}

Status Violation(const std::string& path, const std::string& what) {
  return Status::DataLoss(fmt::format("schema violation at {}: {}", path, what));
}

std::string Short(const json& v) {
  std::string s = v.dump();
  return s.size() > 60 ? std::string(Utf8Prefix(s, 57)) + "..." : s;
}

Status ValidateAt(const json& v, const json& schema, const std::string& path) {
  if (v.is_null() && schema.value("nullable", false)) return Status::Ok();
  if (auto t = schema.find("type"); t != schema.end()) {
    std::vector<std::string> types;
    if (t->is_array()) {
      for (const json& n : *t) types.push_back(n.get<std::string>());
    } else {
      types.push_back(t->get<std::string>());
    }
    bool ok = false;
    for (const std::string& type : types) ok = ok || HasType(v, type);
    if (!ok) {
      std::string expected;
      for (const std::string& type : types) expected += (expected.empty() ? "" : " or ") + type;
      return Violation(path, fmt::format("expected {}, got {} {}", expected, TypeOf(v), Short(v)));
    }
  }
  if (auto e = schema.find("enum"); e != schema.end()) {
    bool found = false;
    for (const json& option : *e) found = found || option == v;
    if (!found) return Violation(path, fmt::format("{} is not one of {}", Short(v), e->dump()));
  }
  if (v.is_number()) {
    const double d = v.get<double>();
    if (auto m = schema.find("minimum"); m != schema.end() && d < m->get<double>()) {
      return Violation(path, fmt::format("{} is below the minimum {}", Short(v), m->dump()));
    }
    if (auto m = schema.find("maximum"); m != schema.end() && d > m->get<double>()) {
      return Violation(path, fmt::format("{} is above the maximum {}", Short(v), m->dump()));
    }
  }
  if (v.is_string()) {
    size_t n = 0;  // JSON Schema counts characters (code points), not bytes
    for (unsigned char c : v.get_ref<const std::string&>()) n += (c & 0xC0) != 0x80;
    if (auto m = schema.find("minLength"); m != schema.end() && n < m->get<size_t>()) {
      return Violation(path, fmt::format("string shorter than {}", m->get<size_t>()));
    }
    if (auto m = schema.find("maxLength"); m != schema.end() && n > m->get<size_t>()) {
      return Violation(path, fmt::format("string longer than {}", m->get<size_t>()));
    }
  }
  if (v.is_array()) {
    if (auto m = schema.find("minItems"); m != schema.end() && v.size() < m->get<size_t>()) {
      return Violation(path, fmt::format("{} items, fewer than {}", v.size(), m->get<size_t>()));
    }
    if (auto m = schema.find("maxItems"); m != schema.end() && v.size() > m->get<size_t>()) {
      return Violation(path, fmt::format("{} items, more than {}", v.size(), m->get<size_t>()));
    }
    if (auto items = schema.find("items"); items != schema.end()) {
      for (size_t i = 0; i < v.size(); ++i) {
        SM_RETURN_IF_ERROR(ValidateAt(v[i], *items, fmt::format("{}[{}]", path, i)));
      }
    }
  }
  if (v.is_object()) {
    const json empty = json::object();
    auto props_it = schema.find("properties");
    const json& props = props_it != schema.end() ? *props_it : empty;
    if (auto req = schema.find("required"); req != schema.end()) {
      for (const json& name : *req) {
        if (!v.contains(name.get<std::string>())) {
          return Violation(
              path, fmt::format("missing required property \"{}\"", name.get<std::string>()));
        }
      }
    }
    const bool closed = !schema.value("additionalProperties", true);
    // Properties in key order (nlohmann objects are sorted), so the first error is stable.
    for (const auto& [key, value] : v.items()) {
      auto sub = props.find(key);
      if (sub == props.end()) {
        if (closed) return Violation(path, fmt::format("unexpected property \"{}\"", key));
        continue;
      }
      SM_RETURN_IF_ERROR(ValidateAt(value, *sub, path + "." + key));
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckSchemaSupported(const json& schema) { return CheckAt(schema, "$"); }

Status ValidateJson(const json& value, const json& schema) {
  return ValidateAt(value, schema, "$");
}

}  // namespace schedmate::llm
