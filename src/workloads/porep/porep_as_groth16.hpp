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
// the tail (the G1 points whose scalars are not bits) as an MSM of its own; the Groth16 program
// runs one MSM per set over every point, its scalars the witness's (the key's sets share its
// prefix: A, B1 and B2 from index 0, C from index 1). So a PoRep witness here is bits below B2's
// end (B_G2 has no tail), and past it full scalars spread evenly so that A, B1 and C hold as many
// as the tail has points (55.5% of the scalars there, at every domain), the rest 0 or 1. The
// a/b/c step is the host's, as the seed's synthesis hands a, b and c over (12 GiB a partition at
// 2^27).

#include "workloads/groth16/groth16_timing_workload.hpp"
#include "workloads/porep/porep_workload.hpp"

namespace stagehand {

groth16::KeySizes porep_key_sizes(const PartitionShape& shape);

// proofs × partitions jobs of the shape's sizes, host steps and witness (full_scalar_share past
// bits_below); host_memory and data are the caller's (the simulator's virtual ranges, or a GPU
// run's synthetic bytes).
groth16::Groth16TimingJobs porep_timing_jobs(const PoRepSettings& settings);

}  // namespace stagehand
