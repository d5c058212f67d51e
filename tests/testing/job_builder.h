#pragma once
// JobBuilder: a fluent builder for hand-made JobRecords (simulator, policy and advisor tests);
// Table() numbers jobs without an id "j0", "j1", ... in list order.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

#include "core/job.h"

namespace schedmate::testing {

class JobBuilder {
 public:
  JobBuilder& Id(std::string id) {
    j_.id = std::move(id);
    return *this;
  }
  JobBuilder& Vc(std::string vc) {
    j_.vc = std::move(vc);
    return *this;
  }
  JobBuilder& User(std::string u) {
    j_.user = std::move(u);
    return *this;
  }
  JobBuilder& Gpus(int64_t g) {
    j_.gpus = GpuAmount::Whole(g);
    return *this;
  }
  JobBuilder& Cpus(int32_t c) {
    j_.cpus = c;
    return *this;
  }
  JobBuilder& SubmitAt(int64_t s) {
    j_.submit = SimTime::FromSeconds(s);
    return *this;
  }
  JobBuilder& Runtime(int64_t s) {
    j_.duration = Duration::Seconds(s);
    return *this;
  }
  JobBuilder& Estimate(int64_t s) {
    j_.estimate = Duration::Seconds(s);
    return *this;
  }
  JobBuilder& Limit(int64_t s) {
    j_.time_limit = Duration::Seconds(s);
    return *this;
  }
  JobBuilder& Model(std::string m) {
    j_.model = std::move(m);
    return *this;
  }
  // Model, dataset, batch size and AMP at once (the Helios/Lucid workload columns).
  JobBuilder& Model(std::string m, std::string ds, int bs, int amp) {
    j_.amp = static_cast<int8_t>(amp);
    return Model(std::move(m)).Dataset(std::move(ds)).Batch(bs);
  }
  JobBuilder& Dataset(std::string d) {
    j_.dataset = std::move(d);
    return *this;
  }
  JobBuilder& Batch(int32_t b) {
    j_.batch_size = b;
    return *this;
  }
  JobBuilder& Steps(int64_t s) {
    j_.iterations = s;
    return *this;
  }
  JobBuilder& Gmem(double mib) {
    j_.gmem_mib = mib;
    return *this;
  }
  JobRecord Build() const { return j_; }

 private:
  JobRecord j_;
};

inline JobTable Table(std::initializer_list<JobBuilder> jobs) {
  JobTable t;
  int i = 0;
  for (const auto& b : jobs) {
    JobRecord r = b.Build();
    if (r.id.empty()) r.id = "j" + std::to_string(i);
    ++i;
    t.jobs.push_back(std::move(r));
  }
  return t;
}

}  // namespace schedmate::testing
