#pragma once
// Small string helpers used across components: exact number parsing (std::from_chars, no locale),
// trimming, splitting, case folding.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace schedmate {

std::string_view Trim(std::string_view s);
std::vector<std::string_view> Split(std::string_view s, char sep);
// The words of `s` separated by runs of blanks (spaces and tabs), into `out` (cleared first, so a
// caller reading many lines reuses its storage).
void SplitWhitespace(std::string_view s, std::vector<std::string_view>& out);
std::vector<std::string_view> SplitWhitespace(std::string_view s);
std::string ToLower(std::string_view s);
bool StartsWith(std::string_view s, std::string_view prefix);
bool EndsWith(std::string_view s, std::string_view suffix);
bool IContains(std::string_view haystack, std::string_view needle);  // case-insensitive
// `s` safe in XML/HTML text and double-quoted attributes: & < > " as entities.
std::string XmlEscape(std::string_view s);
// The longest prefix of `s` of at most `max_bytes` bytes that does not end inside a UTF-8
// sequence (so cutting valid UTF-8 keeps it valid). Invalid bytes are treated as whole characters.
std::string_view Utf8Prefix(std::string_view s, size_t max_bytes);

// Whole-string parses (surrounding blanks allowed); nullopt on anything else.
std::optional<int64_t> ParseInt(std::string_view s);
std::optional<double> ParseDouble(std::string_view s);  // accepts "nan", "inf", exponents

}  // namespace schedmate
