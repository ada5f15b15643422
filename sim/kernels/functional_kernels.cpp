#include "sim/kernels/functional_kernels.hpp"

#include "sim/kernels/assignment_kernels.hpp"
#include "sim/kernels/groth16_kernels.hpp"
#include "sim/kernels/setup_kernels.hpp"

namespace stagehand::sim {

void register_functional_kernels(SimSystem& system) {
  register_groth16_kernels(system);
  register_setup_kernels(system);
  register_assignment_kernels(system);
}

}  // namespace stagehand::sim
