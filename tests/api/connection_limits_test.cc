// Slow and abusive clients against the real server over loopback sockets (defect: a connection
// sending one header line every few seconds stayed open for ever, and `threads` of them made
// /healthz time out).

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api_fixture.h"

namespace schedmate::api {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// One raw client connection.
struct RawClient {
  int fd = -1;
  Clock::time_point opened;
  std::optional<Clock::time_point> closed;  // when the server closed it
  std::string received;
};

int Connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool SendAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Reads what is there without blocking; marks the client closed on EOF or reset.
void Drain(RawClient& c) {
  char buf[4096];
  while (!c.closed) {
    ssize_t n = recv(c.fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n > 0) {
      c.received.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    c.closed = Clock::now();
  }
}

// Reads until the server closes or `deadline`; returns everything received.
std::string ReadUntilClosed(int fd, Clock::time_point deadline) {
  RawClient c;
  c.fd = fd;
  while (!c.closed && Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    poll(&p, 1, 100);
    Drain(c);
  }
  return c.received;
}

class ConnectionLimitsTest : public testing::ApiFixture {
 protected:
  void TearDown() override {
    for (auto& c : clients_)
      if (c.fd >= 0) close(c.fd);
  }
  // Opens `n` connections that send a request line and one header, and no more.
  void OpenSlowClients(int n) {
    for (int i = 0; i < n; ++i) {
      RawClient c;
      c.fd = Connect(server_->port());
      ASSERT_GE(c.fd, 0);
      c.opened = Clock::now();
      ASSERT_TRUE(SendAll(c.fd, "GET /healthz HTTP/1.1\r\nHost: slow\r\n"));
      clients_.push_back(c);
    }
  }
  // GET /healthz on a fresh connection: (status, seconds taken); status 0 = no answer in 3 s.
  std::pair<int, double> TimedHealthz() {
    httplib::Client fresh("127.0.0.1", server_->port());
    fresh.set_connection_timeout(3);
    fresh.set_read_timeout(3);
    auto start = Clock::now();
    auto res = fresh.Get("/healthz");
    double took = std::chrono::duration<double>(Clock::now() - start).count();
    return {res ? res->status : 0, took};
  }
  int64_t MetricValue(const std::string& series) {
    auto res = client_->Get("/metrics");
    if (!res) return -1;
    auto at = res->body.find("\n" + series + " ");
    if (at == std::string::npos) return -1;
    return std::stoll(res->body.substr(at + series.size() + 2));
  }
  std::vector<RawClient> clients_;
};

TEST_F(ConnectionLimitsTest, SlowHeaderClientsAreCutAtTheDeadlineAndHealthzStaysFast) {
  config_.request_timeout = Duration::Seconds(3);
  cluster_.Render();
  CreateCompanion();
  StartServer();
  const int kSlow = 40;  // more than the 32 worker threads
  OpenSlowClients(kSlow);
  // Each slow client sends one more header line every 300 ms (well inside any per-recv timeout)
  // until the server closes it; bounded by the deadline plus a margin.
  const auto limit = Clock::now() + milliseconds(3000 + 3000);
  auto next_drip = Clock::now() + milliseconds(300);
  bool checked_health = false;
  std::pair<int, double> health{0, 0};
  int line = 0;
  auto open_count = [&] {
    return std::count_if(clients_.begin(), clients_.end(),
                         [](const RawClient& c) { return !c.closed; });
  };
  while (open_count() > 0 && Clock::now() < limit) {
    std::vector<pollfd> fds;
    for (const auto& c : clients_) fds.push_back(pollfd{c.fd, POLLIN, 0});
    int wait = static_cast<int>(std::max<int64_t>(
        0, std::chrono::duration_cast<milliseconds>(next_drip - Clock::now()).count()));
    poll(fds.data(), fds.size(), wait);
    for (auto& c : clients_) Drain(c);
    if (Clock::now() >= next_drip) {
      ++line;
      for (auto& c : clients_) {
        if (!c.closed) SendAll(c.fd, "X-Drip-" + std::to_string(line) + ": x\r\n");
      }
      next_drip += milliseconds(300);
    }
    if (!checked_health && line >= 2) {  // all 40 connected and dripping
      health = TimedHealthz();
      checked_health = true;
    }
  }
  ASSERT_TRUE(checked_health);
  EXPECT_EQ(health.first, 200);
  EXPECT_LT(health.second, 2.0) << "/healthz took " << health.second << " s";
  double slowest = 0;
  for (const auto& c : clients_) {
    ASSERT_TRUE(c.closed.has_value())
        << "a slow client is still open after "
        << std::chrono::duration<double>(Clock::now() - c.opened).count() << " s";
    slowest = std::max(slowest, std::chrono::duration<double>(*c.closed - c.opened).count());
    // It was told why: 408 (or nothing, if the close raced the answer).
    if (!c.received.empty()) {
      EXPECT_EQ(c.received.rfind("HTTP/1.1 408", 0), 0u) << c.received;
    }
  }
  EXPECT_GE(slowest, 2.5);  // not before the deadline...
  EXPECT_LT(slowest, 4.0);  // ...and soon after it (3 s)
  std::cout << "[measure] " << kSlow << " slow clients closed by " << slowest
            << " s (request_timeout 3 s); /healthz answered in " << health.second << " s\n";
  EXPECT_GE(MetricValue("schedmate_http_connections_closed_total{reason=\"deadline\"}"), kSlow);
}

TEST_F(ConnectionLimitsTest, ConnectionCapClosesTheLongestWaitingConnections) {
  config_.max_connections = 8;
  config_.request_timeout = Duration::Seconds(20);  // only the cap can close them here
  cluster_.Render();
  CreateCompanion();
  StartServer();
  OpenSlowClients(20);
  auto health = TimedHealthz();
  EXPECT_EQ(health.first, 200);
  EXPECT_LT(health.second, 2.0);
  // The oldest were closed (with 503) to make room; at most 8 connections are open.
  const auto deadline = Clock::now() + milliseconds(2000);
  auto closed = [&] {
    for (auto& c : clients_) Drain(c);
    return std::count_if(clients_.begin(), clients_.end(),
                         [](const RawClient& c) { return c.closed.has_value(); });
  };
  while (closed() < 13 && Clock::now() < deadline) {
    std::vector<pollfd> fds;
    for (const auto& c : clients_) fds.push_back(pollfd{c.fd, POLLIN, 0});
    poll(fds.data(), fds.size(), 100);
  }
  EXPECT_GE(closed(), 13);
  EXPECT_FALSE(clients_.back().closed.has_value()) << "the newest should be kept";
  EXPECT_TRUE(clients_.front().closed.has_value()) << "the oldest should go first";
  EXPECT_NE(clients_.front().received.find("503"), std::string::npos);
  EXPECT_LE(MetricValue("schedmate_http_connections_open"), 8);
  EXPECT_GE(MetricValue("schedmate_http_connections_closed_total{reason=\"cap\"}"), 13);
}

TEST_F(ConnectionLimitsTest, WellBehavedClientsKeepAliveContinueAndPipeline) {
  config_.request_timeout = Duration::Seconds(5);
  config_.max_body_bytes = 4096;
  cluster_.Render();
  CreateCompanion();
  StartServer();
  // Keep-alive: one connection, many requests.
  client_->set_keep_alive(true);
  for (int i = 0; i < 50; ++i) {
    auto res = client_->Get("/healthz");
    ASSERT_TRUE(res) << i;
    EXPECT_EQ(res->status, 200);
  }
  const auto deadline = [] { return Clock::now() + milliseconds(3000); };
  // Two pipelined requests in one write: two answers, in order.
  int fd = Connect(server_->port());
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(SendAll(fd,
                      "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"
                      "GET /v1/nodes HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"));
  std::string both = ReadUntilClosed(fd, deadline());
  close(fd);
  auto first = both.find("HTTP/1.1 200");
  ASSERT_NE(first, std::string::npos) << both;
  EXPECT_NE(both.find("HTTP/1.1 200", first + 1), std::string::npos) << both;
  EXPECT_NE(both.find("\"nodes\""), std::string::npos) << both;
  // Expect: 100-continue gets its interim answer before the body is sent.
  fd = Connect(server_->port());
  ASSERT_GE(fd, 0);
  std::string body = R"({"script":"x","name":"bert","gpus":1})";
  ASSERT_TRUE(SendAll(fd,
                      "POST /v1/estimate HTTP/1.1\r\nHost: a\r\nContent-Type: "
                      "application/json\r\nExpect: 100-continue\r\nConnection: close\r\n"
                      "Content-Length: " +
                          std::to_string(body.size()) + "\r\n\r\n"));
  std::string interim;
  {
    RawClient c;
    c.fd = fd;
    auto until = deadline();
    while (c.received.find("\r\n\r\n") == std::string::npos && !c.closed && Clock::now() < until) {
      pollfd p{fd, POLLIN, 0};
      poll(&p, 1, 100);
      Drain(c);
    }
    interim = c.received;
  }
  EXPECT_EQ(interim.rfind("HTTP/1.1 100", 0), 0u) << interim;
  ASSERT_TRUE(SendAll(fd, body));
  std::string answer = ReadUntilClosed(fd, deadline());
  close(fd);
  EXPECT_NE(answer.find("HTTP/1.1 200"), std::string::npos) << answer;
  EXPECT_EQ(answer.find("100 Continue"), std::string::npos) << "a second interim answer";
  EXPECT_NE(answer.find("estimate_s"), std::string::npos) << answer;
  // Framing errors are answered in JSON and closed.
  struct Bad {
    std::string request;
    std::string status;
  };
  const std::vector<Bad> bad = {
      {"POST /v1/estimate HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", "411"},
      {"GET /healthz HTTP/1.1\r\nX-Big: " + std::string(70000, 'a') + "\r\n\r\n", "431"},
      {"POST /v1/estimate HTTP/1.1\r\nHost: a\r\nContent-Length: 99999\r\n\r\n", "413"},
      {"POST /v1/estimate HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", "400"},
  };
  for (const auto& b : bad) {
    SCOPED_TRACE(b.status);
    fd = Connect(server_->port());
    ASSERT_GE(fd, 0);
    SendAll(fd, b.request);
    std::string got = ReadUntilClosed(fd, deadline());
    close(fd);
    EXPECT_EQ(got.rfind("HTTP/1.1 " + b.status, 0), 0u) << got.substr(0, 200);
    auto json_at = got.find("\r\n\r\n");
    ASSERT_NE(json_at, std::string::npos);
    auto parsed = nlohmann::json::parse(got.substr(json_at + 4), nullptr, false);
    EXPECT_TRUE(parsed.contains("code")) << got;
  }
}

}  // namespace
}  // namespace schedmate::api
