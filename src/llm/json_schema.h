#pragma once
// A small JSON-schema validator for the subset the llm layer's callers use: type (one name or a
// list; "integer" accepts integral floats such as 3.0), properties, required, enum, items,
// nullable, additionalProperties (bool), minimum, maximum, minItems, maxItems, minLength,
// maxLength; description, title, default and $schema are accepted and ignored. Any other keyword
// is refused by CheckSchemaSupported, so nobody believes e.g. "pattern" is enforced.
//
// Servers that ignore response_format are common, so every structured answer is validated here.

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace schedmate::llm {

// kInvalidArgument naming the JSON path of the first unsupported or ill-formed keyword.
Status CheckSchemaSupported(const nlohmann::json& schema);

// OK when `value` satisfies `schema`; otherwise kDataLoss "schema violation at $.a[2].b: ...".
// REQUIRES: CheckSchemaSupported(schema).ok().
Status ValidateJson(const nlohmann::json& value, const nlohmann::json& schema);

}  // namespace schedmate::llm
