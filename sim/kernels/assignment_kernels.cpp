#include "sim/kernels/assignment_kernels.hpp"

#include "device/kernel_abi.hpp"
#include "math/fr.hpp"
#include "math/h_polynomial.hpp"
#include "math/ntt.hpp"

#include <fmt/format.h>

#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <tuple>

namespace stagehand::sim {
namespace {

static_assert(sizeof(math::Fr) == kernel::kFrBytes,
              "Fr must be its four Montgomery limbs, so that Fr arrays are device bytes");

math::Fr fr_of_words(const std::vector<std::uint64_t>& arguments, std::size_t first) {
  math::Fr::LimbArray limbs{};
  for (std::size_t i = 0; i < limbs.size(); ++i) limbs[i] = arguments.at(first + i);
  const auto value = math::Fr::from_montgomery_limbs(limbs);
  if (!value) throw std::invalid_argument(fmt::format("{}: a root argument is not below r", kernel::ntt_domain_init));
  return *value;
}

void ntt_domain_init(KernelContext& context) {
  const auto& arguments = context.launch().arguments;
  if (arguments.size() != 9)
    throw std::invalid_argument(fmt::format("{}: expects [log_size, ω w0..w3, g w0..w3]", kernel::ntt_domain_init));
  auto domain = context.write(0);
  if (domain.size() < kAssignmentDomainBytes)
    throw std::invalid_argument(fmt::format("{}: the domain buffer is too small", kernel::ntt_domain_init));
  const std::uint64_t log_size = arguments[0];
  const math::Fr root = fr_of_words(arguments, 1), coset = fr_of_words(arguments, 5);
  std::memcpy(domain.data(), &log_size, sizeof log_size);
  std::memcpy(domain.data() + 8, &root, sizeof root);
  std::memcpy(domain.data() + 8 + sizeof root, &coset, sizeof coset);
}

// The CPU domain a device domain stands for, built once per (log_size, ω, g): the host function
// runs for every proof. `name` is the launching kernel's, for the error.
const math::Domain& cpu_domain(std::span<const std::byte> domain_bytes, unsigned expected_log, const char* name) {
  std::uint64_t log_size = 0;
  math::Fr root, coset;
  std::memcpy(&log_size, domain_bytes.data(), sizeof log_size);
  std::memcpy(&root, domain_bytes.data() + 8, sizeof root);
  std::memcpy(&coset, domain_bytes.data() + 8 + sizeof root, sizeof coset);
  if (log_size != expected_log) {
    throw std::invalid_argument(
        fmt::format("{}: the domain is of 2^{}, the launch of 2^{}", name, log_size, expected_log));
  }
  using Key = std::tuple<std::uint64_t, math::Fr::LimbArray, math::Fr::LimbArray>;
  static std::mutex mutex;
  static std::map<Key, std::unique_ptr<math::Domain>> domains;
  std::lock_guard lock(mutex);
  auto& slot = domains[Key{log_size, root.montgomery_limbs(), coset.montgomery_limbs()}];
  if (!slot)
    slot = std::make_unique<math::Domain>(math::Domain::from_root(static_cast<unsigned>(log_size), root, coset));
  return *slot;
}

// An H kernel's launch after the checks they all make, each naming the kernel: arguments
// [log_size], reads [domain], `Count` writes of at least the domain's 2^log_size Fr each.
template <std::size_t Count>
struct HLaunch {
  const math::Domain& domain;
  std::array<std::span<math::Fr>, Count> values;
};

template <std::size_t Count>
HLaunch<Count> h_launch(KernelContext& context, const char* name, const char* writes) {
  const auto& launch = context.launch();
  if (launch.arguments.empty() || launch.reads.empty() || launch.writes.size() < Count)
    throw std::invalid_argument(fmt::format("{}: expects [log_size], reads [domain], writes {}", name, writes));
  if (launch.arguments[0] > math::Fr::two_adicity) {
    throw std::invalid_argument(
        fmt::format("{}: log_size {} is beyond the field's 2^{}", name, launch.arguments[0], math::Fr::two_adicity));
  }
  const auto log_size = static_cast<unsigned>(launch.arguments[0]);
  const std::size_t n = std::size_t{1} << log_size;
  auto domain_bytes = context.read(0);
  if (domain_bytes.size() < kAssignmentDomainBytes)
    throw std::invalid_argument(fmt::format("{}: the domain buffer is too small", name));
  std::array<std::span<math::Fr>, Count> values;
  for (std::size_t i = 0; i < Count; ++i) {
    auto bytes = context.write(i);
    if (bytes.size() < n * kernel::kFrBytes)
      throw std::invalid_argument(fmt::format("{}: a buffer is smaller than the domain", name));
    values[i] = std::span<math::Fr>(reinterpret_cast<math::Fr*>(bytes.data()), n);
  }
  return {cpu_domain(domain_bytes, log_size, name), values};
}

void h_polynomial_classic(KernelContext& context) {
  const auto h = h_launch<3>(context, kernel::h_polynomial_classic, "[a, b, c]");
  math::h_coefficients_classic(h.values[0], h.values[1], h.values[2], h.domain);
}

void h_classic_product(KernelContext& context) {
  const auto h = h_launch<2>(context, kernel::h_classic_product, "[a, b]");
  math::h_classic_product(h.values[0], h.values[1], h.domain);
}

void h_classic_finish(KernelContext& context) {
  const auto h = h_launch<2>(context, kernel::h_classic_finish, "[a, c]");
  math::h_classic_finish(h.values[0], h.values[1], h.domain);
}

}  // namespace

void register_assignment_kernels(SimSystem& system) {
  // Its one write is the domain: the scratch size tells its callers how large to make it.
  system.register_kernel(kernel::ntt_domain_init, ntt_domain_init, kAssignmentDomainBytes);
  system.register_kernel(kernel::h_polynomial_classic, h_polynomial_classic);
  system.register_kernel(kernel::h_classic_product, h_classic_product);
  system.register_kernel(kernel::h_classic_finish, h_classic_finish);
}

}  // namespace stagehand::sim
