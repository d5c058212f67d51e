#pragma once
// Status: the outcome of an operation that can fail, in LevelDB's shape (cheap OK path, named
// constructors). The code says whose fault a failure is and whether a retry can help.

#include <string>
#include <string_view>
#include <utility>

namespace schedmate {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // bad input (trace row, config, flag): the user fixes it
  kNotFound,            // a file, job or key that does not exist
  kAlreadyExists,       // duplicate registration or id
  kFailedPrecondition,  // the system is not in a state to do this
  kOutOfRange,          // a value beyond the valid range
  kUnavailable,         // LLM, Slurm, network: a retry may help
  kDeadlineExceeded,    // timed out: a retry may help
  kResourceExhausted,   // budget or quota used up
  kDataLoss,            // corrupt or unreadable data (log, store)
  kCancelled,           // stopped on request
  kUnimplemented,       // a feature this build does not offer
  kInternal,            // our bug
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) {
    return {StatusCode::kInvalidArgument, std::move(m)};
  }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status FailedPrecondition(std::string m) {
    return {StatusCode::kFailedPrecondition, std::move(m)};
  }
  static Status OutOfRange(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status DeadlineExceeded(std::string m) {
    return {StatusCode::kDeadlineExceeded, std::move(m)};
  }
  static Status ResourceExhausted(std::string m) {
    return {StatusCode::kResourceExhausted, std::move(m)};
  }
  static Status DataLoss(std::string m) { return {StatusCode::kDataLoss, std::move(m)}; }
  static Status Cancelled(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }
  static Status Unimplemented(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // True for failures where trying again later may succeed.
  bool IsRetryable() const {
    return code_ == StatusCode::kUnavailable || code_ == StatusCode::kDeadlineExceeded;
  }
  // "INVALID_ARGUMENT: trace.csv:12: bad gpu_num" or "OK".
  std::string ToString() const;
  // A copy with `context` prepended to the message ("reading x: <message>").
  Status WithContext(std::string_view context) const;

  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.message_ == b.message_;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

}  // namespace schedmate

#define SM_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::schedmate::Status sm_status_ = (expr); \
    if (!sm_status_.ok()) return sm_status_; \
  } while (0)
