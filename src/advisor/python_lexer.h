#pragma once
// The tokenizer under the Python reader (python_scanner.h): splits Python source into logical
// lines of tokens. Strings with prefixes (r, b, u, f and pairs) and triple quotes, comments
// (returned apart), numbers (hex/octal/binary, '_' separators, exponents, imaginary 'j'),
// names (any byte >= 0x80 counts as a letter), operators (longest of three, two, one
// characters), backslash continuations, and newlines inside brackets, which do not end a logical
// line. It never fails: an unterminated string ends at its line's end (single quotes) or at the
// end of the source (triple quotes).
//
// Thread-safety: a stateless function.

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace schedmate::advisor {

enum class PyTokenKind { kName, kNumber, kString, kOp, kEnd };

struct PyToken {
  PyTokenKind kind;
  std::string text;  // source text (for strings: the value, escapes decoded unless raw)
  int line;          // 1-based line of the token's first character (a string's: its opening line)
  int col;           // 0-based byte column
  bool fstring = false;
  size_t begin = 0, end = 0;  // byte offsets in the source (a string's `end` is past its quote)
};

struct PyLogicalLine {
  std::vector<PyToken> tokens;
  int indent = 0;  // column of the first token
  int line = 0;    // line of the first token
};

// The logical lines of `source` (lines without tokens are dropped); each comment's text (without
// '#', trimmed) and line are appended to `comments`.
std::vector<PyLogicalLine> LexPython(std::string_view source,
                                     std::vector<std::pair<std::string, int>>& comments);

}  // namespace schedmate::advisor
