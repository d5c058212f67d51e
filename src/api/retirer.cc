#include "api/retirer.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace schedmate::api {

Retirer::Retirer() : thread_([this] { Loop(); }) {}

Retirer::~Retirer() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

void Retirer::Retire(std::shared_ptr<const void> value) {
  if (!value) return;
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(value));
  }
  cv_.notify_one();
}

int64_t Retirer::released() const {
  std::lock_guard lock(mu_);
  return released_;
}

void Retirer::Loop() {
  // This thread only frees memory: it yields to request handlers (best effort; nice is per
  // thread on Linux).
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 10);
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    while (!queue_.empty()) {
      std::shared_ptr<const void> value = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      value.reset();  // the free happens here, outside the lock
      lock.lock();
      ++released_;
    }
    if (stop_) return;
  }
}

}  // namespace schedmate::api
