#pragma once
// A workload with a BatchListener's look at each job's steps and each device's set-up: the Groth16
// batches' (proof_batch.cpp) and the engine's runs of a .params key (assignment_batch.hpp).

#include "coordinator/job.hpp"
#include "proving/proof_batch.hpp"

#include <algorithm>
#include <span>
#include <vector>

namespace stagehand::proving {

// `inner` with the listener's look at each job's steps and each device's set-up (a throw of the
// listener's step stops the job there).
class ListenedWorkload final : public Workload {
 public:
  ListenedWorkload(Workload& inner, BatchListener& listener, const std::vector<Device*>& devices)
      : inner_(inner), listener_(listener), devices_(devices) {}

  int job_count() const override { return inner_.job_count(); }
  int proof_count() const override { return inner_.proof_count(); }
  int proof_of(int job) const override { return inner_.proof_of(job); }
  JobMemoryPlan memory_plan(int job) const override { return inner_.memory_plan(job); }
  Bytes resident_bytes() const override { return inner_.resident_bytes(); }
  asio::awaitable<void> set_up(Device& device, int device_index) override {
    co_await inner_.set_up(device, device_index);
    listener_.set_up_ended(device_index);
  }
  asio::awaitable<void> tear_down(Device& device, int device_index) override {
    return inner_.tear_down(device, device_index);
  }
  asio::awaitable<void> prepare(int job, Device& device, std::span<const HostRange> abc) override {
    listener_.step(job, BatchStep::prepare, index_of(device));
    co_await inner_.prepare(job, device, abc);
  }
  asio::awaitable<JobTimes> run_program(int job, JobContext& context) override {
    listener_.step(job, BatchStep::program, context.device_index);
    auto times = co_await inner_.run_program(job, context);
    listener_.step(job, BatchStep::program_ended, context.device_index);
    co_return times;
  }
  asio::awaitable<void> finish(int job, Device& device) override {
    listener_.step(job, BatchStep::finish, index_of(device));
    return inner_.finish(job, device);
  }
  void abandon(int job) override { inner_.abandon(job); }

 private:
  int index_of(const Device& device) const {
    const auto where = std::find(devices_.begin(), devices_.end(), &device);
    return where != devices_.end() ? static_cast<int>(where - devices_.begin()) : -1;
  }

  Workload& inner_;
  BatchListener& listener_;
  const std::vector<Device*>& devices_;
};

}  // namespace stagehand::proving
