#pragma once
// The PoRep partition as a data source of the Groth16 program: a partition's key sets, sized by
// its PartitionShape, as a Groth16 key's five (KeySizes), and its jobs as Groth16TimingJobs, so
// that Stagehand's own program (workloads/groth16/) runs the seed's partitions; the same program
// that makes real proofs.
//
//   partition set                        Groth16 set
//   H (one point per domain element)     H
//   A, B_G1 batch additions              A, B1 (each with a third of the tail)
//   B_G2 batch addition                  B2
//   L batch addition                     C (with the rest of the tail)
//
// The partition program adds the batch-addition sets' points whose witness bit is set and runs
// the tail (the points whose scalars are not bits) as an MSM of its own; the Groth16 program runs
// one MSM per set over every point, its scalars the witness's. So a PoRep witness here is mostly
// bits: a share of full scalars equal to the tail's share of the G1 witness sets' points
// (porep_full_scalar_share: 34%), spread evenly over the witness, the rest 0 or 1. The a/b/c step
// is the host's, as the seed's synthesis hands a, b and c over (12 GiB a partition at 2^27).

#include "workloads/groth16/groth16_workload.hpp"
#include "workloads/porep/porep_workload.hpp"

namespace stagehand {

groth16::KeySizes porep_key_sizes(const PartitionShape& shape);

// The share of a PoRep witness's scalars that are not bits: the tail's items over every point of
// the G1 sets over the witness (A, B1, C with the tail).
double porep_full_scalar_share(const PartitionShape& shape);

// proofs × partitions jobs of the shape's sizes and host steps; host_memory and data are the
// caller's (the simulator's virtual ranges, or a GPU run's synthetic bytes).
groth16::Groth16TimingJobs porep_timing_jobs(const PoRepSettings& settings);

}  // namespace stagehand
