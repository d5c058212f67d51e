#pragma once
// The knowledge files compiled into the binary (config/*.yaml): each type's Builtin() parses its
// file once, on first use, and keeps it for the life of the process. A compiled-in file that does
// not parse is a build defect, so it stops the program with the parser's file:line message (the
// tests load every such file, so a defect never reaches a user).

#include <string_view>
#include <utility>

#include "core/check.h"
#include "core/result.h"

namespace schedmate {

// T::Parse(yaml, source) -> Result<T>. Call as the initialiser of a function-local static:
//   static const T& kData = ParseBuiltinOrDie<T>(BuiltinTYaml(), "builtin:t.yaml");
template <typename T>
const T& ParseBuiltinOrDie(std::string_view yaml, std::string_view source) {
  Result<T> r = T::Parse(yaml, source);
  SM_CHECK(r.ok()) << r.status().ToString();
  return *new T(std::move(r).value());  // never freed: lives as long as the process
}

}  // namespace schedmate
