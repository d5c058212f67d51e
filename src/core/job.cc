#include "core/job.h"

#include <string>

#include "core/strings.h"

namespace schedmate {

std::string_view JobStateName(JobState s) {
  switch (s) {
    case JobState::kUnknown:
      return "UNKNOWN";
    case JobState::kCompleted:
      return "COMPLETED";
    case JobState::kFailed:
      return "FAILED";
    case JobState::kCancelled:
      return "CANCELLED";
    case JobState::kTimeout:
      return "TIMEOUT";
    case JobState::kNodeFail:
      return "NODE_FAIL";
    case JobState::kPreempted:
      return "PREEMPTED";
    case JobState::kOutOfMemory:
      return "OUT_OF_MEMORY";
  }
  return "UNKNOWN";
}

JobState ParseJobState(std::string_view text) {
  std::string t = ToLower(text);
  if (t == "completed" || t == "pass" || t == "passed" || t == "succeeded" || t == "success")
    return JobState::kCompleted;
  if (t == "failed" || t == "fail" || t == "error") return JobState::kFailed;
  if (t == "cancelled" || t == "canceled" || t == "killed" || t.rfind("cancelled", 0) == 0)
    return JobState::kCancelled;
  if (t == "timeout") return JobState::kTimeout;
  if (t == "node_fail") return JobState::kNodeFail;
  if (t == "preempted") return JobState::kPreempted;
  if (t == "out_of_memory" || t == "oom") return JobState::kOutOfMemory;
  return JobState::kUnknown;
}

std::string_view TraceFormatName(TraceFormat f) {
  switch (f) {
    case TraceFormat::kAuto:
      return "auto";
    case TraceFormat::kLucid:
      return "lucid";
    case TraceFormat::kGpw:
      return "gpw";
    case TraceFormat::kChronus:
      return "chronus";
    case TraceFormat::kGavel:
      return "gavel";
    case TraceFormat::kPollux:
      return "pollux";
    case TraceFormat::kOpenb:
      return "openb";
    case TraceFormat::kSwf:
      return "swf";
    case TraceFormat::kSacct:
      return "sacct";
  }
  return "auto";
}

std::optional<TraceFormat> ParseTraceFormat(std::string_view name) {
  for (auto f : {TraceFormat::kAuto, TraceFormat::kLucid, TraceFormat::kGpw, TraceFormat::kChronus,
                 TraceFormat::kGavel, TraceFormat::kPollux, TraceFormat::kOpenb, TraceFormat::kSwf,
                 TraceFormat::kSacct}) {
    if (ToLower(name) == TraceFormatName(f)) return f;
  }
  return std::nullopt;
}

}  // namespace schedmate
