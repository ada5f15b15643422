// The BN254 checks' registry half (bn254_checks.hpp): which kernels have BN254 launchers, and
// CudaDevice's refusal of a launch over a curve its kernel has no instance for.
#include "bn254_checks.hpp"

#include <string>

#include "check_support.hpp"
#include "cuda_device.hpp"
#include "device/kernel_abi.hpp"
#include "launch/groth16_launchers.hpp"
#include "launch/launchers.hpp"

namespace stagehand::cuda::bn254_checks {

using check_support::report;
constexpr kernel::Curve kBn254 = kernel::Curve::bn254;

Result check_wrong_curve(std::ostream& out) {
  Result result;
  result.add(report(
      out,
      find_launcher(kernel::ntt, kernel::Curve::bls12_381) != nullptr && find_launcher(kernel::ntt, kBn254) == nullptr,
      "bn254: the registry holds BLS12-381's ntt and no BN254 instance of it"));
  std::string missing;
  for (const auto table : {core_launchers(), groth16_launchers(), setup_launchers()}) {
    for (const LauncherEntry& entry : table) {
      if (entry.name != kernel::busy_wait && find_launcher(entry.name, kBn254) == nullptr) {
        missing += " " + std::string(entry.name);
      }
    }
  }
  result.add(report(out, missing.empty(), "bn254: every core, Groth16 and setup kernel has a BN254 launcher", missing));
  asio::io_context io;
  CudaDevice device(0, io.get_executor());
  KernelLaunch launch{kernel::ntt, 2, {1, 0}, {}, {}};
  launch.curve = kBn254;
  bool refused = false;
  std::string message;
  try {
    device.launch(launch, StreamHandle{});
  } catch (const DeviceError& error) {
    message = error.what();
    refused = error.errc() == DeviceErrc::unknown_kernel && message.find("'ntt' over bn254") != std::string::npos;
  }
  result.add(report(out, refused, "bn254: CudaDevice refuses a BN254 launch of ntt", message));
  return result;
}

}  // namespace stagehand::cuda::bn254_checks
