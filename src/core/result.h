#pragma once
// Result<T>: a value or a non-OK Status, over std::variant.

#include <cstdlib>
#include <type_traits>
#include <utility>
#include <variant>

#include "core/check.h"
#include "core/status.h"

namespace schedmate {

template <typename T>
class [[nodiscard]] Result {
  static_assert(!std::is_same_v<T, Status>, "Result<Status> makes no sense");

 public:
  Result(const T& value) : v_(value) {}            // NOLINT: implicit by design
  Result(T&& value) : v_(std::move(value)) {}      // NOLINT
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    SM_CHECK(!std::get<Status>(v_).ok()) << "Result constructed from an OK status";
  }
  template <typename U>
  requires(std::is_convertible_v<U&&, T> && !std::is_same_v<std::decay_t<U>, T> &&
           !std::is_same_v<std::decay_t<U>, Status>) Result(U&& value)
      : v_(T(std::forward<U>(value))) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  // REQUIRES: ok().
  T& value() & { return Checked(); }
  const T& value() const& { return const_cast<Result*>(this)->Checked(); }
  T&& value() && { return std::move(Checked()); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T value_or(T fallback) const& { return ok() ? std::get<T>(v_) : std::move(fallback); }

 private:
  T& Checked() {
    SM_CHECK(ok()) << "value() on error Result: " << std::get<Status>(v_).ToString();
    return std::get<T>(v_);
  }
  std::variant<T, Status> v_;
};

}  // namespace schedmate

#define SM_CONCAT_INNER_(a, b) a##b
#define SM_CONCAT_(a, b) SM_CONCAT_INNER_(a, b)
// SM_ASSIGN_OR_RETURN(auto x, Foo()); returns Foo()'s status on error.
#define SM_ASSIGN_OR_RETURN(lhs, expr) \
  SM_ASSIGN_OR_RETURN_IMPL_(SM_CONCAT_(sm_result_, __LINE__), lhs, expr)
#define SM_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()
