#include "backend/backend.hpp"

#include "config/config_table.hpp"
#include "device/format.hpp"
#include "sim/device_model.hpp"
#include "sim/kernels/functional_kernels.hpp"
#include "sim/run.hpp"
#include "sim/sim_device.hpp"
#include "sim/sim_system.hpp"

#if defined(STAGEHAND_HAVE_CUDA)
#include "cuda_device.hpp"
#endif

#include <fmt/format.h>

#include <limits>
#include <optional>
#include <stdexcept>

namespace stagehand {
namespace {

// A cap above the card is an error rather than the whole card: the cap is what the run promises
// to stay within (the incident's 16 GiB card emulated on a larger one), so a cap the card cannot
// give means the configuration was written for another card, and its figures would silently
// be those of this one.
void check_cap_within_card(const RunConfig& config, Bytes card_bytes, const std::string& card) {
  if (config.vram_cap_bytes > card_bytes) {
    throw ConfigError(fmt::format("{}: a cap of {} is more than {} has ({}); 0 means the whole card",
                                  config.vram_cap_where, format_bytes(config.vram_cap_bytes), card,
                                  format_bytes(card_bytes)));
  }
}

// The configuration's device model; a model that cannot be found or read is an error naming the
// key that chose it (the model file's own errors name that file, line and key as well).
sim::DeviceModel load_model(const RunConfig& config) {
  try {
    return sim::load_device_model(sim::find_device_model(config.device_model));
  } catch (const std::exception& error) {
    throw ConfigError(fmt::format("{}: {}", config.device_model_where, error.what()));
  }
}

// The plan a backend injects: the options' where they set one, else the configuration's.
const FaultPlan& chosen_faults(const RunConfig& config, const BackendOptions& options) {
  return options.faults.any() ? options.faults : config.faults;
}

class SimulatorBackend final : public Backend {
 public:
  SimulatorBackend(const RunConfig& config, const BackendOptions& options, const FaultPlan& simulated)
      : model_name_(config.device_model) {
    sim::SimOptions sim_options;
    sim_options.seed = config.coordinator.seed;
    sim_options.duration_jitter = config.duration_jitter;
    sim_options.functional = options.functional || config.functional;
    sim_options.keep_trace_events = options.keep_trace_events;
    functional_ = sim_options.functional;
    system_ = std::make_unique<sim::SimSystem>(sim_options);
    auto model = load_model(config);
    check_cap_within_card(config, model.memory_bytes, fmt::format("the simulated {}", config.device_model));
    for (int i = 0; i < config.gpus; ++i) {
      auto& device = system_->add_device(model, simulated.applies_to(i) ? simulated : FaultPlan{});
      if (config.vram_cap_bytes > 0 && config.vram_cap_bytes < model.memory_bytes)
        device.set_memory_bytes(config.vram_cap_bytes);
      devices_.push_back(&device);
    }
    if (functional_) sim::register_functional_kernels(*system_);
  }

  bool on_gpu() const override { return false; }
  std::string describe() const override {
    return fmt::format("{} x simulated {}{}", devices_.size(), model_name_, functional_ ? " (functional)" : "");
  }
  Trace& trace() override { return system_->trace(); }
  void run(asio::awaitable<void> program, Nanoseconds time_limit_ns) override {
    sim::run_to_completion(*system_, std::move(program), time_limit_ns);
  }
  sim::SimSystem* simulator() override { return system_.get(); }
  void post_from_outside(std::function<void()> call) override { system_->post_from_outside(std::move(call)); }

 private:
  std::string model_name_;
  bool functional_ = false;
  std::unique_ptr<sim::SimSystem> system_;
};

#if defined(STAGEHAND_HAVE_CUDA)
class CudaBackend final : public Backend {
 public:
  CudaBackend(const RunConfig& config, const BackendOptions& options) : trace_(options.keep_trace_events) {
    // More GPUs than the machine has is an error, not fewer GPUs: a farm's figures would
    // silently be those of a smaller machine.
    const int present = cuda::device_count();
    if (config.gpus > present) {
      throw ConfigError(fmt::format("{}: {} GPUs asked for, {} present", config.gpus_where, config.gpus, present));
    }
    for (int i = 0; i < config.gpus; ++i) {
      gpus_.push_back(std::make_unique<cuda::CudaDevice>(i, io_.get_executor(), config.vram_cap_bytes));
      devices_.push_back(gpus_.back().get());
      // CudaDevice reports the smaller of the cap and the card.
      const auto& properties = gpus_.back()->properties();
      if (config.vram_cap_bytes > properties.total_memory_bytes) {
        check_cap_within_card(config, properties.total_memory_bytes, fmt::format("GPU {} ({})", i, properties.name));
      }
    }
  }

  bool on_gpu() const override { return true; }
  std::string describe() const override {
    const auto& properties = gpus_.front()->properties();
    return fmt::format("{} x CUDA {} ({})", gpus_.size(), properties.name, format_bytes(properties.total_memory_bytes));
  }
  Trace& trace() override { return trace_; }
  void run(asio::awaitable<void> program, Nanoseconds) override {
    std::exception_ptr failure;
    asio::co_spawn(io_, std::move(program), [&](std::exception_ptr error) { failure = error; });
    io_.run();
    io_.restart();
    if (failure) std::rethrow_exception(failure);
  }
  void trace_kernels(Trace* trace) override {
    for (auto& gpu : gpus_) gpu->trace_kernels(trace);
  }
  void post_from_outside(std::function<void()> call) override { asio::post(io_, std::move(call)); }

 private:
  asio::io_context io_;
  Trace trace_;
  std::vector<std::unique_ptr<cuda::CudaDevice>> gpus_;
};
#endif

}  // namespace

void Backend::run(asio::awaitable<void> program) { run(std::move(program), std::numeric_limits<Nanoseconds>::max()); }

int Backend::cuda_device_count() {
#if defined(STAGEHAND_HAVE_CUDA)
  return cuda::device_count();
#else
  return 0;
#endif
}

void Backend::wrap_devices(const FaultPlan& faults) {
  if (!faults.any()) return;
  for (std::size_t index = 0; index < devices_.size(); ++index) {
    if (!faults.applies_to(static_cast<int>(index))) continue;
    auto& device = devices_[index];
    auto ordinal_faults = faults;
    ordinal_faults.seed ^= static_cast<std::uint64_t>(device->properties().ordinal) * 0x9e3779b97f4a7c15ULL;
    faulty_devices_.push_back(std::make_unique<FaultyDevice>(*device, ordinal_faults));
    device = faulty_devices_.back().get();
  }
}

std::unique_ptr<Backend> Backend::open_simulator(const RunConfig& config, BackendOptions options) {
  const auto& faults = chosen_faults(config, options);
  auto backend = std::make_unique<SimulatorBackend>(config, options,
                                                    options.faults_by_adaptor ? FaultPlan{} : faults.simulated_part());
  backend->wrap_devices(options.faults_by_adaptor ? faults : faults.adaptor_part());
  return backend;
}

std::unique_ptr<Backend> Backend::open_cuda(const RunConfig& config, BackendOptions options) {
  // Refused before anything else, so that a configuration says so in every build.
  const auto& faults = chosen_faults(config, options);
  if (faults.simulator_only()) {
    throw ConfigError(
        fmt::format("{}: pcie_slowdown_factor is the simulator's alone (a GPU's link cannot be slowed); on a GPU, "
                    "copy_delay_ms delays each copy instead",
                    options.faults.any() ? std::string("BackendOptions::faults") : config.faults_where));
  }
#if defined(STAGEHAND_HAVE_CUDA)
  if (cuda::device_count() == 0) {
    throw std::runtime_error(
        fmt::format("{}: backend = \"cuda\" but no CUDA device is present", config.source.string()));
  }
  // A GPU run with injected faults wraps each CudaDevice here (BackendOptions::faults).
  auto backend = std::make_unique<CudaBackend>(config, options);
  backend->wrap_devices(faults);
  return backend;
#else
  throw std::runtime_error(
      fmt::format("{}: backend = \"cuda\": this stagehand was built without CUDA; use \"sim\" or \"auto\" (the "
                  "simulator on the CPU)",
                  config.source.string()));
#endif
}

std::unique_ptr<Backend> Backend::open(const RunConfig& config, BackendOptions options) {
  switch (config.backend) {
    case BackendKind::cuda: return open_cuda(config, std::move(options));
    case BackendKind::simulator: return open_simulator(config, std::move(options));
    case BackendKind::automatic: break;
  }
  if (cuda_device_count() > 0) return open_cuda(config, std::move(options));
  return open_simulator(config, std::move(options));
}

}  // namespace stagehand
