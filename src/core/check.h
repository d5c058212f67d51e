#pragma once
// SM_CHECK(cond) << "belief": aborts with a message when an internal invariant is broken.
// Never use it on user input: bad input gets a Status.

#include <cstdlib>
#include <iostream>
#include <sstream>

namespace schedmate::internal {

class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* cond) {
    stream_ << file << ":" << line << ": check failed: " << cond << " ";
  }
  ~CheckFailure() {
    std::cerr << stream_.str() << std::endl;
    std::abort();
  }
  template <typename T>
  CheckFailure& operator<<(const T& v) {
    stream_ << v;
    return *this;
  }

 private:
  std::ostringstream stream_;
};

struct Voidify {
  void operator&(const CheckFailure&) {}
};

}  // namespace schedmate::internal

#define SM_CHECK(cond)                        \
  (cond) ? (void)0                            \
         : ::schedmate::internal::Voidify() & \
               ::schedmate::internal::CheckFailure(__FILE__, __LINE__, #cond)
