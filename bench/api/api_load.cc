// api_load: a small, bounded, loopback-only load generator for schedmate's HTTP API, and a
// self-contained scenario that measures the service itself.
//
//   api_load --self [--running 1000] [--pending 200] [--rate 500] [--seconds 10]
//       builds a Companion over a FakeCluster with N running jobs (each with a growing log file)
//       and M pending ones, ticks it every second in the background, serves the API on a free
//       loopback port, fires GET requests at a fixed rate (open loop) and prints latency
//       percentiles, the tick time and the process's RSS.
//   api_load --port P [--rate 500] [--seconds 10] [--path /v1/jobs]
//       the same load against a running `schedmate serve` on 127.0.0.1:P.
//
// Bounds: rate <= 5000/s, duration <= 60 s, target 127.0.0.1 only.

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api/api_server.h"
#include "core/file_util.h"
#include "service/engines.h"
#include "service/fake_cluster.h"

using namespace schedmate;
using Steady = std::chrono::steady_clock;

namespace {

int64_t RssKib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  }
  return -1;
}

struct LoadResult {
  std::vector<double> latencies_ms;
  int64_t errors = 0;
  double seconds = 0;
};

// Open loop: request i is due at t0 + i/rate, whichever of `threads` workers is free sends it.
LoadResult Fire(int port, const std::vector<std::string>& paths, int rate, int seconds,
                int threads) {
  LoadResult r;
  std::mutex mu;
  std::atomic<int64_t> next{0};
  int64_t total = static_cast<int64_t>(rate) * seconds;
  auto t0 = Steady::now();
  std::vector<std::thread> workers;
  for (int w = 0; w < threads; ++w) {
    workers.emplace_back([&] {
      httplib::Client client("127.0.0.1", port);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      client.set_read_timeout(5);
      std::vector<double> local;
      int64_t errors = 0;
      while (true) {
        int64_t i = next.fetch_add(1);
        if (i >= total) break;
        auto due = t0 + std::chrono::microseconds(i * 1'000'000 / rate);
        std::this_thread::sleep_until(due);
        // Latency counts from when the request was due: queueing in the generator is included.
        auto res = client.Get(paths[static_cast<size_t>(i) % paths.size()].c_str());
        double ms = std::chrono::duration<double, std::milli>(Steady::now() - due).count();
        if (!res || res->status != 200) ++errors;
        local.push_back(ms);
      }
      std::lock_guard lock(mu);
      r.latencies_ms.insert(r.latencies_ms.end(), local.begin(), local.end());
      r.errors += errors;
    });
  }
  for (auto& t : workers) t.join();
  r.seconds = std::chrono::duration<double>(Steady::now() - t0).count();
  std::sort(r.latencies_ms.begin(), r.latencies_ms.end());
  return r;
}

double Pct(const std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

void Report(const LoadResult& r, int rate) {
  fmt::print("requests {} in {:.1f}s (target {}/s, achieved {:.0f}/s), errors {}\n",
             r.latencies_ms.size(), r.seconds, rate,
             static_cast<double>(r.latencies_ms.size()) / r.seconds, r.errors);
  fmt::print("latency ms: p50 {:.2f}  p90 {:.2f}  p99 {:.2f}  max {:.2f}\n",
             Pct(r.latencies_ms, 0.5), Pct(r.latencies_ms, 0.9), Pct(r.latencies_ms, 0.99),
             r.latencies_ms.empty() ? 0 : r.latencies_ms.back());
}

}  // namespace

int main(int argc, char** argv) {
  bool self = false;
  int port = 0, rate = 500, seconds = 10, running = 1000, pending = 200;
  std::string path;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto val = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--self")
      self = true;
    else if (a == "--port")
      port = std::stoi(val());
    else if (a == "--rate")
      rate = std::stoi(val());
    else if (a == "--seconds")
      seconds = std::stoi(val());
    else if (a == "--running")
      running = std::stoi(val());
    else if (a == "--pending")
      pending = std::stoi(val());
    else if (a == "--path")
      path = val();
    else {
      fmt::print(stderr,
                 "usage: api_load --self [--running N] [--pending M] [--rate R] [--seconds S] "
                 "\n"
                 "       api_load --port P [--rate R] [--seconds S] [--path /v1/jobs]\n");
      return 2;
    }
  }
  rate = std::clamp(rate, 1, 5000);
  seconds = std::clamp(seconds, 1, 60);
  if (!self) {
    if (port <= 0) return fmt::print(stderr, "api_load: --port or --self\n"), 2;
    Report(Fire(port, {path.empty() ? "/v1/jobs" : path}, rate, seconds, 8), rate);
    return 0;
  }

  // ---- self-contained scenario
  char tmpl[] = "/tmp/schedmate-apiload-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  int64_t rss_start = RssKib();
  auto db = std::move(store::SqliteDb::Open(dir + "/s.db").value());
  auto history = std::move(store::SqliteHistoryStore::Attach(*db).value());
  auto st = std::move(service::ServiceStore::Attach(*db).value());
  auto read_db = std::move(store::SqliteDb::Open(dir + "/s.db").value());
  auto read_history = std::move(store::SqliteHistoryStore::Attach(*read_db).value());
  auto read_st = std::move(service::ServiceStore::Attach(*read_db).value());
  slurm::FakeCommandRunner fake;
  service::testing::FakeCluster cluster(fake);
  int nodes = (running + 7) / 8 + 1;
  for (int n = 1; n <= nodes; ++n) cluster.AddNode(fmt::format("gpu{}", n), 8);
  SystemClock clock;
  int64_t now = clock.Now().seconds();
  for (int i = 0; i < running + pending; ++i) {
    std::string id = std::to_string(1000 + i);
    auto& j = cluster.Job(id);
    j.id = id;
    j.name = fmt::format("train-{}", i % 50);
    j.gpus_per_node = 1;
    j.submit = now - 600;
    if (i < running) {
      j.state = "RUNNING";
      j.node = fmt::format("gpu{}", i / 8 + 1);
      j.start = now - 300;
      j.std_out = fmt::format("{}/job-{}.out", dir, id);
      std::string log;
      for (int s = 1; s <= 50; ++s)
        log += fmt::format("step {}/1000 loss {:.3f} step_time 0.5s\n", s, 2.0 / s);
      (void)WriteStringToFile(j.std_out, log);
    } else {
      j.reason = "Resources";
      j.gpus_per_node = 8;
    }
  }
  cluster.Render();
  service::ServiceConfig config;
  config.data_dir = dir;
  config.metrics_interval = Duration::Seconds(10);
  config.threads = 32;
  auto eng = service::MakeEngines(config, *history);
  if (!eng.ok()) return fmt::print(stderr, "api_load: {}\n", eng.status().ToString()), 1;
  slurm::SlurmBackend backend(fake, {});
  service::Companion companion(
      {backend, *history, *st, *eng->advisor, *eng->tracker, *eng->diagnoser, clock}, config);
  (void)companion.Load();
  auto t0 = Steady::now();
  (void)companion.Tick();
  double first_tick = std::chrono::duration<double>(Steady::now() - t0).count();
  std::vector<double> tick_s;
  for (int k = 0; k < 3; ++k) {
    auto t1 = Steady::now();
    (void)companion.Tick();
    tick_s.push_back(std::chrono::duration<double>(Steady::now() - t1).count());
  }
  std::sort(tick_s.begin(), tick_s.end());
  int64_t rss_tracking = RssKib();
  fmt::print(
      "engines {}: {} running + {} pending jobs; first tick {:.3f}s, steady tick median {:.3f}s\n",
      eng->description, running, pending, first_tick, tick_s[1]);
  fmt::print("RSS: {:.1f} MiB at start, {:.1f} MiB tracking {} running jobs ({} logs tailed)\n",
             rss_start / 1024.0, rss_tracking / 1024.0, running, companion.View()->tracked_logs);

  api::ApiServer server(companion, {*read_st, *read_history}, "");
  if (!server.Start("127.0.0.1", 0).ok()) return 1;
  std::atomic<bool> stop{false};
  std::thread ticker([&] {
    while (!stop) {
      (void)companion.Tick();
      for (int k = 0; k < 10 && !stop; ++k)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  std::vector<std::string> paths = {
      "/healthz", "/v1/jobs/1000", "/v1/nodes",   "/v1/start-estimates?x=1",
      "/metrics", "/v1/jobs/1500", "/v1/actions", "/v1/failures"};
  if (!path.empty()) paths = {path};
  LoadResult r = Fire(server.port(), paths, rate, seconds, 8);
  stop = true;
  ticker.join();
  fmt::print("mix: {}\n", fmt::join(paths, " "));
  Report(r, rate);
  LoadResult list = Fire(server.port(), {"/v1/jobs"}, 20, 2, 2);
  fmt::print("GET /v1/jobs (all {} jobs in one answer): p50 {:.2f} ms, p99 {:.2f} ms\n",
             running + pending, Pct(list.latencies_ms, 0.5), Pct(list.latencies_ms, 0.99));
  fmt::print("RSS after load: {:.1f} MiB\n", RssKib() / 1024.0);
  server.Stop();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return 0;
}
