#include "core/guarded_mapping.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>

namespace schedmate {
namespace {

constexpr int kSlots = 64;

// One live guarded mapping: [begin, end). `begin` is written last on registration and cleared
// first on removal, so the handler never sees a half-written slot as live.
struct Slot {
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  std::atomic<int> cut{0};
  std::atomic<int> used{0};
};
Slot g_slots[kSlots];
std::atomic<uintptr_t> g_page_size{4096};
struct sigaction g_previous {};
std::once_flag g_install_once;

static_assert(std::atomic<uintptr_t>::is_always_lock_free,
              "the signal handler needs lock-free atomics");

// Only async-signal-safe work here: atomics, mmap (a plain system call on Linux), sigaction, raise.
extern "C" void OnSigbus(int sig, siginfo_t* info, void* context) {
  const uintptr_t addr = reinterpret_cast<uintptr_t>(info->si_addr);
  for (Slot& slot : g_slots) {
    const uintptr_t begin = slot.begin.load(std::memory_order_acquire);
    const uintptr_t end = slot.end.load(std::memory_order_acquire);
    if (begin == 0 || addr < begin || addr >= end) continue;
    const uintptr_t page = addr & ~(g_page_size.load(std::memory_order_relaxed) - 1);
    // The file ends before `page` now: zero pages from here to the end of the mapping. The
    // faulting read is retried on return and sees zeros; the owner learns of it from `cut`.
    void* r = ::mmap(reinterpret_cast<void*>(page), end - page, PROT_READ,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (r != MAP_FAILED) {
      slot.cut.store(1, std::memory_order_release);
      return;
    }
    break;
  }
  // Not ours (or the repair failed): what would have happened without us.
  if ((g_previous.sa_flags & SA_SIGINFO) != 0 && g_previous.sa_sigaction != nullptr) {
    g_previous.sa_sigaction(sig, info, context);
    return;
  }
  if ((g_previous.sa_flags & SA_SIGINFO) == 0 && g_previous.sa_handler != SIG_DFL &&
      g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(sig);
    return;
  }
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(SIGBUS, &dfl, nullptr);
  ::raise(SIGBUS);  // blocked until we return: then delivered with the default action
}

void InstallHandler() {
  const long page = ::sysconf(_SC_PAGESIZE);
  if (page > 0) g_page_size.store(static_cast<uintptr_t>(page));
  struct sigaction sa {};
  sa.sa_sigaction = OnSigbus;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGBUS, &sa, &g_previous);
}

int Register(void* addr, size_t size) {
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (!g_slots[i].used.compare_exchange_strong(expected, 1)) continue;
    g_slots[i].cut.store(0);
    g_slots[i].end.store(reinterpret_cast<uintptr_t>(addr) + size, std::memory_order_release);
    g_slots[i].begin.store(reinterpret_cast<uintptr_t>(addr), std::memory_order_release);
    return i;
  }
  return -1;
}

void Unregister(int slot) {
  g_slots[slot].begin.store(0, std::memory_order_release);
  g_slots[slot].end.store(0, std::memory_order_release);
  g_slots[slot].cut.store(0);
  g_slots[slot].used.store(0, std::memory_order_release);
}

}  // namespace

Result<std::unique_ptr<GuardedMapping>> GuardedMapping::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    const int e = errno;
    if (e == ENOENT || e == ENOTDIR) return Status::NotFound(path + ": no such file");
    return Status::DataLoss(path + ": cannot open: " + std::strerror(e));
  }
  std::unique_ptr<GuardedMapping> m(new GuardedMapping());
  m->fd_ = fd;
  m->path_ = path;
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    return Status::DataLoss(path + ": cannot stat: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return Status::InvalidArgument(path + ": not a regular file");
  const size_t size = static_cast<size_t>(st.st_size);
  SM_ASSIGN_OR_RETURN(m->identity_, CaptureFileIdentity(fd, size));
  if (size == 0) return m;
  std::call_once(g_install_once, InstallHandler);
  void* addr = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (addr == MAP_FAILED) {
    return Status::DataLoss(path + ": cannot map: " + std::strerror(errno));
  }
  m->slot_ = Register(addr, size);
  if (m->slot_ < 0) {
    ::munmap(addr, size);
    return Status::ResourceExhausted(path + ": too many files mapped at once");
  }
  m->addr_ = addr;
  m->size_ = size;
  return m;
}

GuardedMapping::~GuardedMapping() {
  if (slot_ >= 0) Unregister(slot_);
  if (addr_ != nullptr) ::munmap(addr_, size_);
  if (fd_ >= 0) ::close(fd_);
}

Status GuardedMapping::CheckIntact() const {
  if (slot_ >= 0 && g_slots[slot_].cut.load(std::memory_order_acquire) != 0) {
    return Status::DataLoss(path_ + ": truncated while it was read (log rotation?)");
  }
  return CheckFileUnchanged(fd_, identity_, path_);
}

}  // namespace schedmate
