#include "service/log_ranks.h"

#include <re2/re2.h>

#include <string>

namespace schedmate::service {
namespace {

constexpr int kMaxRanks = 1 << 20;
constexpr size_t kMaxTags = 4096;
constexpr size_t kMaxLine = 4096;  // longer lines are read up to here

// Each pattern captures the world size.
const RE2& DeclaredSize(int i) {
  static const RE2* patterns[] = {
      // torch.distributed / DeepSpeed / most launchers: world_size=8, WORLD_SIZE: 8, world size 8
      new RE2(R"((?i)\bworld[ _]?size\b["']?\s*[=:]?\s*(\d{1,7})\b)"),
      // accelerate's state: "Num processes: 8"; HF Trainer's "Number of processes = 8"
      new RE2(R"((?i)\bnum(?:ber of)?[ _]processes\s*[=:]\s*(\d{1,7})\b)"),
      // Lightning: "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/8"
      new RE2(R"(\bMEMBER:\s*\d{1,7}/(\d{1,7})\b)"),
      // "rank 3 of 8", "Rank 0/8"
      new RE2(R"((?i)\brank\s*\d{1,7}\s*(?:/|of)\s*(\d{1,7})\b)"),
  };
  return *patterns[i];
}
constexpr int kDeclaredPatterns = 4;

const RE2& RankTag() {
  static const RE2 re(R"(^\s*\[(?:rank|RANK)\s*(\d{1,7})\]\s*:)");
  return re;
}

}  // namespace

void LogRankScanner::AddLine(std::string_view line) {
  if (line.size() > kMaxLine) line = line.substr(0, kMaxLine);
  // Cheap filter: every pattern needs one of these letters' words.
  if (line.find_first_of("rRwWnNM") == std::string_view::npos) return;
  int tag = 0;
  if (tags_.size() < kMaxTags && RE2::PartialMatch(line, RankTag(), &tag)) tags_.insert(tag);
  for (int i = 0; i < kDeclaredPatterns; ++i) {
    int size = 0;
    if (RE2::PartialMatch(line, DeclaredSize(i), &size) && size >= 1 && size <= kMaxRanks) {
      declared_ = size;
      return;
    }
  }
}

std::optional<int> LogRankScanner::Ranks() const {
  if (declared_) return declared_;
  if (tags_.size() >= 2) return static_cast<int>(tags_.size());
  return std::nullopt;
}

}  // namespace schedmate::service
