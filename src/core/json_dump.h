#pragma once
// DumpJson: nlohmann::json::dump that never throws on text which is not valid UTF-8.
//
// Logs, batch scripts and trace fields are other people's bytes: a line with Latin-1 or binary
// junk that reaches a JSON document (an LLM request, an API answer, a stored example) would make
// dump() throw type_error 316. Every dump of data that may hold such text goes through here:
// invalid bytes become U+FFFD.

#include <nlohmann/json.hpp>
#include <string>

namespace schedmate {

inline std::string DumpJson(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

}  // namespace schedmate
