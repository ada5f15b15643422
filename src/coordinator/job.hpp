#pragma once
// The job interface: what the coordinator runs, what a job needs from it and what it gives back.
//
// A Workload is a list of jobs. Each job has host work before the GPU (filling its device inputs,
// a, b and c and, where its plan has one, the extra input, into host buffers the policy staged), a GPU program run while the job
// holds its GPU's compute lock, and host work after it. The coordinator owns the policy (locks,
// budget, staging, pre-staging) and knows only the Device interface and this file; a workload
// owns what a job computes (src/workloads/: the synthetic PoRep-shaped partition and a Groth16
// proof of a snarkjs circuit).

#include "device/device.hpp"

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace stagehand {

// The memory one job needs, for the budget and the worker's buffers.
struct JobMemoryPlan {
  Bytes input_bytes = 0;  // each of a, b and c
  Bytes peak_bytes = 0;   // the most device memory it holds at once, inputs included
  Bytes peak_after_b_and_c_bytes = 0;
  Bytes peak_after_a_bytes = 0;
  // Each of the two pinned host buffers its program's results come back into.
  Bytes result_bytes = 0;
  // How many of a, b, c the job uploads: 3, or 1 when its program derives the others on the
  // device from a (a Groth16 proof whose a/b/c step runs there uploads only the witness, as a).
  int input_count = 3;
  // An input of its own size beside a, b and c (0: none), staged, uploaded and timed as they are:
  // the values a program's MSMs read beside a, b and c (an assignment's query scalars), so that
  // they cross the link before the lock instead of inside it. It lives until the program ends
  // (the worker's JobMemory frees it then), and peak_bytes and both peaks after it count it.
  Bytes extra_input_bytes = 0;
  // c and the extra input staged in pinned host buffers like a and b, but uploaded by the program
  // itself (JobInputs::c_host, extra_host), once it has freed room for them: for a program that
  // cannot hold a, b, c and the extra input at once. The budgeted policy then allocates and
  // pre-stages a and b only, and the peaks count c and the extra input where the program holds
  // them; the other policies upload all four as usual (the program takes either). Needs
  // input_count 3 and an extra input.
  bool late_inputs = false;
};

// The sizes of a job's host input buffers, in the order prepare receives them: a (and b, c when
// input_count is 3), then the extra input where the plan has one.
std::vector<Bytes> staged_input_sizes(const JobMemoryPlan& plan);

// How a job's program gets and returns device memory: the policy decides (the budget and the
// pool, or the production prover's mix of plain allocations and the pool).
class JobMemory {
 public:
  virtual ~JobMemory() = default;
  // Working memory on the compute stream.
  virtual asio::awaitable<DevicePointer> allocate(Bytes bytes, StreamHandle stream) = 0;
  virtual asio::awaitable<void> release(DevicePointer pointer, StreamHandle stream) = 0;
  // The inputs, when the program is done with them: b and c after H is formed, a after the H MSM.
  virtual asio::awaitable<void> release_b_and_c(StreamHandle stream) = 0;
  virtual asio::awaitable<void> release_a(StreamHandle stream) = 0;
  // Memory beyond the job's plan, only if it is free right now (never waits); none by default.
  // A program uses it to fetch PCIe-bound data early, while the link is idle.
  virtual asio::awaitable<std::optional<DevicePointer>> try_allocate_spare(Bytes bytes, StreamHandle stream) {
    co_return std::nullopt;
  }
};

// a, b, c and the extra input on the device, each with the event that says its upload is done
// (none: already ordered before the compute stream). A program's first kernels on a start as soon
// as a is there. b and c are null when the plan's input_count is 1, extra when its
// extra_input_bytes is 0; c and extra are null too when the policy left them to the program (the
// plan's late_inputs), which then finds their staged bytes in c_host and extra_host.
struct JobInputs {
  DevicePointer a;
  DevicePointer b;
  DevicePointer c;
  EventHandle a_uploaded;
  EventHandle b_uploaded;
  EventHandle c_uploaded;
  DevicePointer extra;
  EventHandle extra_uploaded;
  HostRange c_host;
  HostRange extra_host;
};

// How a program tells its worker's GPU when it uses the host-to-device link, so that pre-staging
// of the next job keeps off it meanwhile (a copy engine serves host-to-device copies in turn: a
// chunk queued behind one of the program's uploads waits for all of it).
struct LinkClaimHooks {
  // The PCIe-bound phases, told from the compute stream: true on entering, false on leaving.
  std::function<void(bool)> phase;
  // An upload enqueued on the upload stream starts when `started` completes: the event is the
  // hook's from here on, and is queried on the device, without a host round trip, so that no
  // chunk is issued in the time a callback would take to say the upload began.
  std::function<void(EventHandle started)> upload_enqueued;
  // That upload has ended, told from the upload stream.
  std::function<void(EventHandle started)> upload_done;
};

// A host-to-device copy on `stream`, told to `link` (where it has the upload hooks) when it
// starts and when it ends, so that pre-staging keeps off the link meanwhile.
asio::awaitable<void> claimed_upload(Device& device, LinkClaimHooks link, DevicePointer destination, HostRange source,
                                     StreamHandle stream);

// What a job's program measured and tells the run.
struct JobTimes {
  // From the program's start until the compute stream could begin (inputs uploaded).
  Nanoseconds waited_for_inputs_ns = 0;
  // Shown beside the job's GPU span in the trace, and kept in its record (e.g. "L+A fetched
  // ahead"); empty if the program has nothing to say.
  std::string note;
};

// What a job's GPU program gets from its worker, once it holds the compute lock.
struct JobContext {
  Device& device;
  int device_index;
  StreamHandle compute;
  StreamHandle upload;
  JobInputs inputs;
  JobMemory& memory;
  // Two pinned host buffers of at least the plan's result_bytes, for results coming back.
  const std::vector<HostRange>& results;
  // Where the program tells when it uses the host-to-device link.
  LinkClaimHooks link;
};

class Workload {
 public:
  virtual ~Workload() = default;

  virtual int job_count() const = 0;
  virtual int proof_count() const = 0;
  virtual int proof_of(int job) const = 0;
  virtual JobMemoryPlan memory_plan(int job) const = 0;

  // Device memory that set_up keeps on every device for the whole run, outside every job: the
  // budget's capacity leaves it out.
  virtual Bytes resident_bytes() const { return 0; }
  // Once per device before its first job, and after its last (also after failures). Every
  // device's set_up runs at once (interleaved on the run's executor): what they share, such as
  // host memory pinned once for every device, one of them makes while the others wait for it.
  virtual asio::awaitable<void> set_up(Device& device, int device_index) = 0;
  virtual asio::awaitable<void> tear_down(Device& device, int device_index) = 0;

  // Host work before the GPU: fills a, b and c (memory_plan(job).input_bytes each; only a when
  // its input_count is 1), then the extra input where the plan has one: `inputs` has
  // staged_input_sizes(memory_plan(job)) buffers of at least those sizes.
  virtual asio::awaitable<void> prepare(int job, Device& device, std::span<const HostRange> inputs) = 0;
  // The GPU program, run while the job holds the compute lock; returns once its results are on
  // the host.
  virtual asio::awaitable<JobTimes> run_program(int job, JobContext& context) = 0;
  // Host work after the GPU (for a proof: the G2 MSM and the assembly).
  virtual asio::awaitable<void> finish(int job, Device& device) = 0;
  // The job failed somewhere: drop whatever it kept.
  virtual void abandon(int job) {}
};

}  // namespace stagehand
