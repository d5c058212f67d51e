#pragma once
// BoundedHttpServer: cpp-httplib's Server with a deadline per request and a cap on connections.
//
// Why: httplib hands every accepted connection to a worker thread that reads the request with
// per-recv timeouts only, so a client sending one header line every few seconds keeps its worker
// for ever, and `threads` such clients stop the whole API (/healthz included).
//
// How: one poll() thread (the reactor) owns every connection while a request arrives; it buffers
// the bytes without a thread per connection and hands the connection to a worker only once the
// request's headers and its Content-Length body are complete. Workers run httplib's own request
// processing (routing, handlers, the answer) over the buffered bytes, then give a keep-alive
// connection back to the reactor.
//   * deadlines: a request's headers and body must arrive within `request_timeout` (measured
//     from the connection's accept, or from the first byte of a later keep-alive request); the
//     next keep-alive request must start within `idle_timeout`; an answer must be written within
//     `write_timeout`. Late requests get 408 and are closed.
//   * cap: at most `max_connections` open connections; one more closes the connection that has
//     been waiting longest in the reactor (503), or, when every connection is being answered,
//     the new one.
//   * framing limits: headers above `max_header_bytes` get 431, a Content-Length above
//     `max_body_bytes` gets 413 (without reading the body), a chunked request body 411.
// Error answers are JSON {"error": ..., "code": ...} with "Connection: close".
//
// Thread-safety: construct, bind and listen as with httplib::Server; Shutdown() after stop().

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace schedmate::api {

struct ConnectionLimits {
  std::chrono::milliseconds request_timeout{5000};
  std::chrono::milliseconds idle_timeout{5000};
  std::chrono::milliseconds write_timeout{5000};
  int max_connections = 256;
  size_t max_header_bytes = 64 << 10;
  size_t max_body_bytes = 1 << 20;
  int threads = 8;
  int keep_alive_max_count = 1000;  // requests per connection
};

struct ConnectionStats {
  int64_t open = 0;       // connections open now
  int64_t accepted = 0;   // since start
  int64_t timed_out = 0;  // closed at a deadline (408, or an idle keep-alive)
  int64_t evicted = 0;    // closed by the connection cap (503)
  int64_t rejected = 0;   // bad framing: 400, 411, 413, 431
};

class BoundedHttpServer : public httplib::Server {
 public:
  explicit BoundedHttpServer(ConnectionLimits limits);
  ~BoundedHttpServer() override;

  // Stops the reactor and the workers and closes every connection. Call after stop() and after
  // the thread running listen_after_bind() returned. Idempotent.
  void Shutdown();

  ConnectionStats Stats() const;

  // httplib listens with a backlog of 5: a burst of connections beyond it waits for SYN
  // retransmits (1 s, 3 s, ...). Call after bind_to_port(): widens it to max_connections.
  void WidenBacklog();

 private:
  using TimePoint = std::chrono::steady_clock::time_point;
  // One connection while the reactor owns it (or a worker, between Dispatch and GiveBack).
  struct Conn {
    int fd = -1;
    std::string buf;     // received bytes not yet handed to httplib
    TimePoint deadline;  // see the file comment; for a lingering close, when to give up
    bool idle = false;   // a keep-alive connection waiting for its next request
    bool lingering = false;
    bool continue_sent = false;  // "100 Continue" answered to "Expect: 100-continue"
    int served = 0;              // requests answered on this connection
    uint64_t seq = 0;            // accept order: the cap closes the oldest first
  };
  enum class Next { kKeep, kClose, kHandedOff };
  class BufferedSocketStream;

  // httplib calls this for each accepted socket (on the accepting thread: see the constructor's
  // task queue); the reactor takes it from here.
  bool process_and_close_socket(socket_t sock) override;

  void ReactorLoop();
  // What becomes of one connection at `now`; `got_data`: bytes arrived since the last call.
  Next Advance(Conn& c, TimePoint now, bool got_data);
  // Closes reactor-held connections beyond max_connections, oldest waiting first.
  void EnforceCap(std::vector<Conn>& conns);
  void Dispatch(Conn c);
  void Serve(Conn c);
  void GiveBack(Conn c);
  void CloseConn(Conn& c);
  // A JSON error answer and a lingering close (the client's unread bytes are drained, so it
  // sees the answer rather than a reset).
  void Refuse(Conn& c, int status, const char* code, const std::string& message);
  void Wake();

  ConnectionLimits limits_;
  int wake_fd_ = -1;
  std::thread reactor_;
  std::unique_ptr<httplib::ThreadPool> workers_;

  std::mutex mu_;  // guards incoming_ and stopping_
  std::deque<Conn> incoming_;
  bool stopping_ = false;
  bool shut_down_ = false;
  uint64_t next_seq_ = 0;

  std::atomic<int64_t> open_{0};
  std::atomic<int64_t> accepted_{0};
  std::atomic<int64_t> timed_out_{0};
  std::atomic<int64_t> evicted_{0};
  std::atomic<int64_t> rejected_{0};
};

}  // namespace schedmate::api
