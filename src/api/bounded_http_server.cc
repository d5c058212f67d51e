#include "api/bounded_http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>

#include "core/json_dump.h"
#include "core/strings.h"

namespace schedmate::api {

namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// httplib enqueues each accepted socket here; running it at once on the accepting thread just
// hands the socket to the reactor (BoundedHttpServer::process_and_close_socket).
class InlineTaskQueue final : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override {}
};

// poll() timeout until `deadline`, rounded up to whole milliseconds, at least 0.
int MillisUntil(SteadyClock::time_point deadline, SteadyClock::time_point now) {
  if (deadline <= now) return 0;
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(deadline - now).count();
  return static_cast<int>(std::min<int64_t>((us + 999) / 1000, 1000 * 60));
}

// Waits until `fd` has one of `events` or `deadline` passes; false on the deadline.
bool WaitFor(int fd, short events, SteadyClock::time_point deadline) {
  while (true) {
    auto now = SteadyClock::now();
    if (now >= deadline) return false;
    pollfd p{fd, events, 0};
    int n = poll(&p, 1, MillisUntil(deadline, now));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

bool IEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// What the reactor needs to know about a request's head to tell when the request is complete.
struct Head {
  enum class State { kIncomplete, kComplete, kError } state = State::kIncomplete;
  size_t end = 0;  // just past the blank line
  size_t content_length = 0;
  std::optional<std::pair<size_t, size_t>> expect_line;  // [begin, end) of "Expect: 100-continue"
  int status = 0;
  const char* code = "";
  std::string message;
};

Head ErrorHead(int status, const char* code, std::string message) {
  Head h;
  h.state = Head::State::kError;
  h.status = status;
  h.code = code;
  h.message = std::move(message);
  return h;
}

Head ParseHead(const std::string& buf, const ConnectionLimits& limits) {
  size_t blank = buf.find("\r\n\r\n");
  if (blank == std::string::npos || blank + 4 > limits.max_header_bytes) {
    if (buf.size() <= limits.max_header_bytes) return Head{};
    return ErrorHead(431, "headers_too_large",
                     fmt::format("request headers exceed {} bytes", limits.max_header_bytes));
  }
  Head h;
  h.end = blank + 4;
  std::optional<size_t> length;
  size_t pos = buf.find("\r\n");  // end of the request line
  while (pos < blank) {
    size_t begin = pos + 2;
    size_t line_end = buf.find("\r\n", begin);
    std::string_view line(buf.data() + begin, line_end - begin);
    pos = line_end;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view name = line.substr(0, colon);
    std::string_view value = Trim(line.substr(colon + 1));
    if (IEquals(name, "Content-Length")) {
      auto v = value.size() <= 18 && !value.empty() &&
                       std::all_of(value.begin(), value.end(),
                                   [](char c) { return c >= '0' && c <= '9'; })
                   ? ParseInt(value)
                   : std::nullopt;
      if (!v || (length && *length != static_cast<size_t>(*v))) {
        return ErrorHead(400, "bad_content_length", "invalid or conflicting Content-Length");
      }
      length = static_cast<size_t>(*v);
    } else if (IEquals(name, "Transfer-Encoding") && !IEquals(value, "identity")) {
      return ErrorHead(411, "length_required",
                       "a request body needs Content-Length (chunked bodies are not accepted)");
    } else if (IEquals(name, "Expect") && IEquals(value, "100-continue")) {
      h.expect_line = std::make_pair(begin, line_end + 2);
    }
  }
  h.content_length = length.value_or(0);
  if (h.content_length > limits.max_body_bytes) {
    return ErrorHead(413, "body_too_large",
                     fmt::format("request body of {} bytes exceeds api.max_body_bytes ({})",
                                 h.content_length, limits.max_body_bytes));
  }
  h.state = Head::State::kComplete;
  return h;
}

const char* Reason(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 408:
      return "Request Timeout";
    case 411:
      return "Length Required";
    case 413:
      return "Payload Too Large";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

// Best effort, never blocks: the answer is small and the socket's buffer empty.
void SendNow(int fd, std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

std::string ErrorAnswer(int status, const char* code, const std::string& message) {
  std::string body = DumpJson(nlohmann::json{{"error", message}, {"code", code}});
  return fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n"
      "Connection: close\r\n\r\n{}",
      status, Reason(status), body.size(), body);
}

void AddressOf(int fd, bool peer, std::string& ip, int& port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  auto* sa = reinterpret_cast<sockaddr*>(&addr);
  if ((peer ? getpeername(fd, sa, &len) : getsockname(fd, sa, &len)) != 0) return;
  char host[NI_MAXHOST];
  char serv[NI_MAXSERV];
  if (getnameinfo(sa, len, host, sizeof(host), serv, sizeof(serv),
                  NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
    ip = host;
    port = std::atoi(serv);
  }
}

}  // namespace

// The bytes the reactor buffered, then (only if httplib asks for more) the socket, under the
// request's read deadline; writes under the answer's write deadline.
class BoundedHttpServer::BufferedSocketStream final : public httplib::Stream {
 public:
  BufferedSocketStream(int fd, std::string buf, SteadyClock::time_point read_deadline,
                       milliseconds write_timeout)
      : fd_(fd),
        buf_(std::move(buf)),
        read_deadline_(read_deadline),
        write_timeout_(write_timeout) {}

  bool is_readable() const override {
    return pos_ < buf_.size() || WaitFor(fd_, POLLIN, read_deadline_);
  }
  bool is_writable() const override { return WaitFor(fd_, POLLOUT, WriteDeadline()); }
  ssize_t read(char* ptr, size_t size) override {
    if (pos_ < buf_.size()) {
      size_t n = std::min(size, buf_.size() - pos_);
      std::memcpy(ptr, buf_.data() + pos_, n);
      pos_ += n;
      return static_cast<ssize_t>(n);
    }
    while (true) {
      if (!WaitFor(fd_, POLLIN, read_deadline_)) return -1;
      ssize_t n = recv(fd_, ptr, size, 0);
      if (n >= 0 || (errno != EINTR && errno != EAGAIN)) return n;
    }
  }
  ssize_t write(const char* ptr, size_t size) override {
    while (true) {
      if (!WaitFor(fd_, POLLOUT, WriteDeadline())) return -1;
      ssize_t n = send(fd_, ptr, size, MSG_NOSIGNAL);
      if (n >= 0 || (errno != EINTR && errno != EAGAIN)) return n;
    }
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    AddressOf(fd_, /*peer=*/true, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    AddressOf(fd_, /*peer=*/false, ip, port);
  }
  socket_t socket() const override { return fd_; }

  // Bytes after the request (a pipelined next request), for the reactor.
  std::string TakeUnread() { return buf_.substr(pos_); }

 private:
  SteadyClock::time_point WriteDeadline() const {
    if (!write_deadline_) write_deadline_ = SteadyClock::now() + write_timeout_;
    return *write_deadline_;
  }

  int fd_;
  std::string buf_;
  size_t pos_ = 0;
  SteadyClock::time_point read_deadline_;
  milliseconds write_timeout_;
  mutable std::optional<SteadyClock::time_point> write_deadline_;  // from the first write
};

BoundedHttpServer::BoundedHttpServer(ConnectionLimits limits) : limits_(limits) {
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  set_payload_max_length(limits_.max_body_bytes);
  set_keep_alive_max_count(static_cast<size_t>(std::max(1, limits_.keep_alive_max_count)));
  new_task_queue = [] { return new InlineTaskQueue(); };
  workers_ = std::make_unique<httplib::ThreadPool>(static_cast<size_t>(limits_.threads));
  reactor_ = std::thread([this] { ReactorLoop(); });
}

BoundedHttpServer::~BoundedHttpServer() {
  Shutdown();
  if (wake_fd_ >= 0) close(wake_fd_);
}

void BoundedHttpServer::Shutdown() {
  {
    std::lock_guard lock(mu_);
    if (shut_down_) return;
    shut_down_ = true;
    stopping_ = true;
  }
  Wake();
  if (reactor_.joinable()) reactor_.join();
  workers_->shutdown();  // running answers finish; GiveBack() closes their connections
  std::lock_guard lock(mu_);
  for (auto& c : incoming_) CloseConn(c);
  incoming_.clear();
}

ConnectionStats BoundedHttpServer::Stats() const {
  return ConnectionStats{open_.load(), accepted_.load(), timed_out_.load(), evicted_.load(),
                         rejected_.load()};
}

void BoundedHttpServer::WidenBacklog() {
  socket_t sock = svr_sock_;
  if (sock != INVALID_SOCKET) ::listen(sock, std::max(128, limits_.max_connections));
}

void BoundedHttpServer::Wake() {
  uint64_t one = 1;
  ssize_t n = ::write(wake_fd_, &one, sizeof(one));
  (void)n;  // a full counter already wakes the reactor
}

bool BoundedHttpServer::process_and_close_socket(socket_t sock) {
  int flags = fcntl(sock, F_GETFL, 0);
  if (flags >= 0) fcntl(sock, F_SETFL, flags | O_NONBLOCK);
  int one = 1;
  setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));  // small JSON answers
  Conn c;
  c.fd = sock;
  c.deadline = SteadyClock::now() + limits_.request_timeout;
  ++open_;
  ++accepted_;
  std::lock_guard lock(mu_);
  if (stopping_) {
    CloseConn(c);
    return false;
  }
  c.seq = next_seq_++;
  incoming_.push_back(std::move(c));
  Wake();
  return true;
}

void BoundedHttpServer::CloseConn(Conn& c) {
  if (c.fd < 0) return;
  shutdown(c.fd, SHUT_RDWR);
  close(c.fd);
  c.fd = -1;
  --open_;
}

void BoundedHttpServer::Refuse(Conn& c, int status, const char* code, const std::string& message) {
  SendNow(c.fd, ErrorAnswer(status, code, message));
  shutdown(c.fd, SHUT_WR);
  c.lingering = true;
  c.buf.clear();
  c.deadline =
      SteadyClock::now() + std::min<milliseconds>(limits_.request_timeout, milliseconds(2000));
}

BoundedHttpServer::Next BoundedHttpServer::Advance(Conn& c, TimePoint now, bool got_data) {
  if (c.lingering) return now >= c.deadline ? Next::kClose : Next::kKeep;
  if (c.idle && !c.buf.empty()) {  // the next keep-alive request started
    c.idle = false;
    c.deadline = now + limits_.request_timeout;
  }
  if (got_data && !c.buf.empty()) {
    Head h = ParseHead(c.buf, limits_);
    if (h.state == Head::State::kError) {
      ++rejected_;
      Refuse(c, h.status, h.code, h.message);
      return Next::kKeep;
    }
    if (h.state == Head::State::kComplete) {
      if (c.buf.size() >= h.end + h.content_length) {
        // httplib would answer "100 Continue" itself, after the body is already here.
        if (h.expect_line)
          c.buf.erase(h.expect_line->first, h.expect_line->second - h.expect_line->first);
        Dispatch(std::move(c));
        return Next::kHandedOff;
      }
      if (h.expect_line && !c.continue_sent) {
        SendNow(c.fd, "HTTP/1.1 100 Continue\r\n\r\n");
        c.continue_sent = true;
      }
    }
  }
  if (now < c.deadline) return Next::kKeep;
  ++timed_out_;
  if (c.idle) return Next::kClose;  // an idle keep-alive connection just ends
  Refuse(c, 408, "request_timeout",
         fmt::format("request not received within {} ms", limits_.request_timeout.count()));
  return Next::kKeep;
}

void BoundedHttpServer::EnforceCap(std::vector<Conn>& conns) {
  while (open_.load() > limits_.max_connections && !conns.empty()) {
    // Already answered first, then idle keep-alives, then the longest waiting request.
    auto rank = [](const Conn& c) { return c.lingering ? 0 : c.idle ? 1 : 2; };
    auto victim = std::min_element(conns.begin(), conns.end(), [&](const Conn& a, const Conn& b) {
      return std::make_pair(rank(a), a.seq) < std::make_pair(rank(b), b.seq);
    });
    if (!victim->lingering) {
      ++evicted_;
      if (!victim->idle) {
        SendNow(victim->fd,
                ErrorAnswer(503, "too_many_connections",
                            fmt::format("more than api.max_connections ({}) connections",
                                        limits_.max_connections)));
      }
    }
    CloseConn(*victim);
    conns.erase(victim);
  }
}

void BoundedHttpServer::ReactorLoop() {
  std::vector<Conn> conns;
  std::vector<pollfd> fds;
  const size_t max_buffer = limits_.max_header_bytes + limits_.max_body_bytes + 1;
  char chunk[16384];
  while (true) {
    std::deque<Conn> arrived;
    {
      std::lock_guard lock(mu_);
      if (stopping_) break;
      arrived.swap(incoming_);
    }
    auto now = SteadyClock::now();
    for (auto& c : arrived) {
      // Handed back with the next request already buffered (pipelining): no poll needed.
      Next next = c.buf.empty() ? Next::kKeep : Advance(c, now, /*got_data=*/true);
      if (next == Next::kHandedOff) continue;
      if (next == Next::kClose) {
        CloseConn(c);
        continue;
      }
      conns.push_back(std::move(c));
    }
    EnforceCap(conns);
    int timeout = 1000;
    fds.assign(1, pollfd{wake_fd_, POLLIN, 0});
    for (const auto& c : conns) {
      fds.push_back(pollfd{c.fd, POLLIN, 0});
      timeout = std::min(timeout, MillisUntil(c.deadline, now));
    }
    int ready = poll(fds.data(), fds.size(), timeout);
    if (ready < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) {
      uint64_t drained = 0;
      ssize_t n = ::read(wake_fd_, &drained, sizeof(drained));
      (void)n;
    }
    now = SteadyClock::now();
    std::vector<Conn> keep;
    keep.reserve(conns.size());
    for (size_t i = 0; i < conns.size(); ++i) {
      Conn& c = conns[i];
      bool closed_by_peer = false;
      size_t before = c.buf.size();
      if (fds[i + 1].revents != 0) {
        while (true) {
          size_t room = c.lingering ? sizeof(chunk)
                                    : std::min(sizeof(chunk),
                                               max_buffer - std::min(max_buffer, c.buf.size()));
          if (room == 0) break;
          ssize_t n = recv(c.fd, chunk, room, MSG_DONTWAIT);
          if (n > 0) {
            if (!c.lingering) c.buf.append(chunk, static_cast<size_t>(n));
            if (static_cast<size_t>(n) < room) break;
            continue;
          }
          if (n < 0 && errno == EINTR) continue;
          if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) closed_by_peer = true;
          break;
        }
      }
      Next next = Advance(c, now, /*got_data=*/c.buf.size() > before);
      if (next == Next::kHandedOff) continue;
      if (next == Next::kClose || (closed_by_peer && next == Next::kKeep)) {
        CloseConn(c);
        continue;
      }
      keep.push_back(std::move(c));
    }
    conns = std::move(keep);
  }
  for (auto& c : conns) CloseConn(c);
  std::lock_guard lock(mu_);
  for (auto& c : incoming_) CloseConn(c);
  incoming_.clear();
}

void BoundedHttpServer::Dispatch(Conn c) {
  workers_->enqueue([this, c = std::move(c)]() mutable { Serve(std::move(c)); });
}

void BoundedHttpServer::Serve(Conn c) {
  bool close_connection = c.served + 1 >= limits_.keep_alive_max_count;
  {
    std::lock_guard lock(mu_);
    close_connection = close_connection || stopping_;
  }
  BufferedSocketStream stream(c.fd, std::move(c.buf), SteadyClock::now() + limits_.request_timeout,
                              limits_.write_timeout);
  bool connection_closed = false;
  bool ok = process_request(stream, close_connection, connection_closed, nullptr);
  ++c.served;
  if (!ok || connection_closed || close_connection) {
    CloseConn(c);
    return;
  }
  c.buf = stream.TakeUnread();
  c.idle = c.buf.empty();
  c.continue_sent = false;
  c.deadline = SteadyClock::now() + (c.idle ? limits_.idle_timeout : limits_.request_timeout);
  GiveBack(std::move(c));
}

void BoundedHttpServer::GiveBack(Conn c) {
  std::lock_guard lock(mu_);
  if (stopping_) {
    CloseConn(c);
    return;
  }
  incoming_.push_back(std::move(c));
  Wake();
}

}  // namespace schedmate::api
