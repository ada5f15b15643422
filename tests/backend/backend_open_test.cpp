// Opening the devices (backend/backend.hpp): a configuration the simulator's devices cannot meet
// is an error naming the file, the line and the key.
#define BOOST_TEST_MODULE backend_open
#include <boost/test/unit_test.hpp>

#include "backend/backend.hpp"
#include "config/config_table.hpp"
#include "config/run_config.hpp"

#include <string>

using namespace stagehand;

// Regression: a cap above the card (which silently meant the whole card) is an error naming the
// file, line and key.
BOOST_AUTO_TEST_CASE(a_vram_cap_the_card_cannot_meet_names_the_key) {
  auto config = parse_run_config("[sim]\ndevice_model = \"h200\"\n[gpus]\nvram_cap_gib = 500\n", "deploy.toml");
  try {
    Backend::open_simulator(config, {});
    BOOST_ERROR("no error");
  } catch (const ConfigError& error) {
    BOOST_TEST(std::string(error.what())
                       .find("deploy.toml:4: key 'gpus.vram_cap_gib': a cap of 500.00 GiB is more than the simulated "
                             "h200 has") == 0,
               error.what());
  }
}

// Found by scripts/malformed-inputs.sh: a device model that does not exist was an error naming
// neither the configuration nor its key.
BOOST_AUTO_TEST_CASE(an_unknown_device_model_names_the_file_line_and_key) {
  auto config = parse_run_config("[sim]\ndevice_model = \"h201\"\n", "deploy.toml");
  try {
    Backend::open_simulator(config, {});
    BOOST_ERROR("no error");
  } catch (const ConfigError& error) {
    BOOST_TEST(
        std::string(error.what()).find("deploy.toml:2: key 'sim.device_model': device model 'h201' not found") == 0,
        error.what());
  }
}

// backend = "cuda" where there is no GPU (or no CUDA in this build) is an error naming the
// configuration, never a silent simulator; "auto" takes a GPU where one is present, else the
// simulator, with the configured count of devices.
BOOST_AUTO_TEST_CASE(cuda_without_a_gpu_names_the_configuration_and_auto_takes_what_is_present) {
  auto config = parse_run_config("[run]\nbackend = \"cuda\"\n[gpus]\ncount = 2\n", "deploy.toml");
  const bool gpu_present = Backend::cuda_device_count() > 0;
  if (!gpu_present) {
    try {
      Backend::open(config, {});
      BOOST_ERROR("no error");
    } catch (const std::runtime_error& error) {
      BOOST_TEST(std::string(error.what()).find("deploy.toml: backend = \"cuda\"") == 0, error.what());
    }
  }
  config.backend = BackendKind::automatic;
  config.gpus = gpu_present ? 1 : 2;
  auto backend = Backend::open(config, {});
  BOOST_TEST(backend->on_gpu() == gpu_present);
  BOOST_TEST(backend->devices().size() == static_cast<std::size_t>(config.gpus));
  BOOST_TEST((backend->simulator() == nullptr) == gpu_present);
}
