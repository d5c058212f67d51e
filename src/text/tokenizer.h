#pragma once
// Tokenizer for code, config and log text: splits identifiers the way people read them.
//
//   "per_device_train_batch_size" -> per device train batch size
//   "ResNet50FPN"                 -> res net 50 fpn      (camel case and letter/digit boundaries)
//   "lr=3e-4", "7b", "--nproc_per_node=8" -> lr 3e-4 / 7b / nproc per node 8
//
// Rules: tokens are maximal runs of ASCII letters/digits (plus '.' inside numbers and an exponent
// like 3e-4), lower-cased; a run is split at '_', '-', at lower->Upper and at UPPER->Upper+lower
// boundaries, and between letters and digits, except that a number followed by a single unit
// letter ("7b", "13B", "224px" stays "224 px") keeps the unit ("7b"). Non-ASCII bytes separate
// tokens. Deterministic and locale-independent; thread-safe (no state).

#include <string>
#include <string_view>
#include <vector>

namespace schedmate::text {

struct TokenizerOptions {
  size_t min_length = 1;     // drop shorter tokens
  bool keep_numbers = true;  // keep purely numeric tokens
};

std::vector<std::string> Tokenize(std::string_view text, const TokenizerOptions& options = {});

}  // namespace schedmate::text
