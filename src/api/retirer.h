#pragma once
// Retirer: frees large shared values (a replaced ServiceView, a view's serialised jobs) on a
// thread of its own at nice 10, so the request that replaces them does not pay for freeing them
// (a 12,000-job view takes milliseconds). Values are released in the order given; the destructor
// releases what is left and joins.

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

namespace schedmate::api {

class Retirer {
 public:
  Retirer();
  ~Retirer();
  Retirer(const Retirer&) = delete;
  Retirer& operator=(const Retirer&) = delete;

  // Drops `value` on the retirer's thread (freed there unless someone else still holds it).
  void Retire(std::shared_ptr<const void> value);
  // Values retired so far and released (for tests).
  int64_t released() const;

 private:
  void Loop();
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<const void>> queue_;
  int64_t released_ = 0;
  bool stop_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace schedmate::api
