#pragma once
// ScanJsonObjects: the fast path of ParseSqueueJson. squeue --json prints ~110 fields per job
// (~3.7 KB pretty-printed; 39 MB for 12,000 jobs) of which the parser reads 33; nlohmann's lexer
// needs most of a second for that much text. This scanner walks the document once, checking the
// JSON grammar as it goes (strings' UTF-8 and control characters, numbers, literals, nesting)
// but decoding only the values it keeps: the scalar values of the `keep` keys of each object
// element of the top-level object's `array_key` array. Kept values follow a DOM's rules: a
// repeated key keeps its last value, a nested value drops the key (the field readers treat a
// nested value as absent), elements that are not objects are skipped.
//
// It answers only what it is sure of: anything it does not decode itself (a \u escape, a kept
// number with a fraction or exponent or beyond int64, nesting deeper than 64, a document that
// is not an object with an `array_key` array) or any grammar error gives nullopt, and the caller
// parses the text with nlohmann instead (which then gives the same answer or the error).

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

namespace schedmate::slurm::internal {

std::optional<std::vector<nlohmann::json>> ScanJsonObjects(
    std::string_view text, std::string_view array_key,
    const std::function<bool(std::string_view)>& keep);

}  // namespace schedmate::slurm::internal
