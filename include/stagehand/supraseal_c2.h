/* SupraSeal C2's C ABI (supranational/supra_seal, c2/cuda/groth16_cuda.cu and groth16_srs.cuh),
 * exported by libstagehand.so with the same names, argument order and layouts, so that the Rust
 * crate `supraseal-c2` and its callers (filecoin-proofs, bellperson) link against Stagehand
 * instead. SupraSeal declares them in C++ with references; a reference is a pointer in the ABI:
 *
 *   RustError::by_value generate_groth16_proofs_c(const Assignment<fr_t> provers[], size_t num_circuits,
 *                                                 const fr_t r_s[], const fr_t s_s[],
 *                                                 groth16_proof proofs[], SRS& srs);
 *   RustError::by_value create_SRS(SRS& ret, const char* srs_path, bool cache);
 *   void evict_SRS(const SRS& ref);
 *   void drop_SRS(SRS& ref);
 *   SRS::by_value clone_SRS(const SRS& rhs);
 *
 * where RustError::by_value is {int code; char* message;} and SRS::by_value {void* ptr;}, the
 * RustError and SRS below. Beside them, cuzk's form with a GPU index, under a name of its own:
 * generate_groth16_proofs_gpu_c (below).
 *
 * Proofs are made on the devices of the engine configuration that the environment variable
 * STAGEHAND_SUPRASEAL_CONFIG names (CUDA or the simulator, as its [run] table says; opened by the
 * first call), or without it by Stagehand's CPU reference of SupraSeal's prover; both give the
 * same bytes (docs/supraseal-c2.md). Every proof is pairing-checked against the
 * parameters' verifying key before it is returned: an assignment that does not satisfy its
 * circuit is an error, never a wrong proof.
 *
 * Errors: RustError.code is 0 on success; otherwise an errno value (EINVAL: a NULL pointer, a
 * size that disagrees with the parameters, a parameters file that cannot be read or is malformed,
 * a proof that does not verify; ENOMEM: out of memory; EIO: anything else) and
 * RustError.message a NUL-terminated text the caller frees with free() (it may be NULL where
 * even that allocation failed). No C++ exception crosses this boundary.
 *
 * Threads: any number of calls at once, from any threads (SupraSeal serialises them all; here
 * they run side by side on the CPU, and take turns on the devices, where a call's circuits run
 * side by side). An SRS handle is reference-counted: clone_SRS takes a reference,
 * drop_SRS gives one back, and the parameters are freed with the last; a handle may be used
 * from several threads, but not during or after its own drop_SRS.
 */
#ifndef STAGEHAND_SUPRASEAL_C2_H
#define STAGEHAND_SUPRASEAL_C2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* An element of BLS12-381's scalar field Fr in Montgomery form (R = 2^256 mod r): four
   little-endian u64 limbs, below r (blst's blst_fr, blstrs's Scalar). */
typedef struct {
  uint64_t limbs[4];
} fr_t;

/* Affine points as blst lays them out: each Fq coordinate six little-endian u64 limbs in
   Montgomery form (R = 2^384 mod p); G2's coordinates are c0 then c1. The point at infinity is
   all zeros. */
typedef struct {
  uint64_t x[6], y[6];
} supraseal_g1_affine_t;
typedef struct {
  uint64_t x[2][6], y[2][6];
} supraseal_g2_affine_t;

/* A proof, 384 bytes: bellperson's #[repr(C)] Proof. */
typedef struct {
  supraseal_g1_affine_t a;
  supraseal_g2_affine_t b;
  supraseal_g1_affine_t c;
} groth16_proof;

/* One circuit's assignment (bellperson's ProvingAssignment), in SupraSeal's field order. Density
   bitmaps are u64 words, bit i of the map in bit i % 64 of word i / 64: a_aux over the aux
   values (those with a point in the A query), b_inp over the inputs and b_aux over the aux
   values (those in the B query); each with its length in bits and its number of set bits. a, b
   and c are the per-constraint evaluations (abc_size each, at most the parameters' domain);
   inp_assignment_data starts with the constant one. */
typedef struct {
  const uint64_t* a_aux_density;
  size_t a_aux_bit_len;
  size_t a_aux_popcount;

  const uint64_t* b_inp_density;
  size_t b_inp_bit_len;
  size_t b_inp_popcount;

  const uint64_t* b_aux_density;
  size_t b_aux_bit_len;
  size_t b_aux_popcount;

  const fr_t* a;
  const fr_t* b;
  const fr_t* c;
  size_t abc_size;

  const fr_t* inp_assignment_data;
  size_t inp_assignment_size;

  const fr_t* aux_assignment_data;
  size_t aux_assignment_size;
} Assignment;

/* A reference-counted handle on one Filecoin parameters (.params) file, read and checked. */
typedef struct {
  void* ptr;
} SRS;

typedef struct {
  int code;
  char* message;
} RustError;

/* Reads and checks the parameters file at srs_path into *ret. With cache, the handle shares the
   parameters of an earlier call for the same path (the four most recently used paths are kept;
   evict_SRS forgets one). *ret is left as it was on failure. */
RustError create_SRS(SRS* ret, const char* srs_path, bool cache);
/* Forgets ref's path in the cache (handles already made stay valid). NULL is ignored. */
void evict_SRS(const SRS* ref);
/* Gives back ref's reference and sets ref->ptr to NULL. NULL, or a ptr of NULL, is ignored. */
void drop_SRS(SRS* ref);
/* A new reference on rhs's parameters (ptr NULL where rhs or its ptr is NULL). */
SRS clone_SRS(const SRS* rhs);

/* One proof per circuit into proofs[0 .. num_circuits), with r_s[i] and s_s[i] (Montgomery) as
   circuit i's r and s. Every assignment is checked against the parameters before any proof is
   made (the message names the circuit and the field); proofs is written only on success. */
RustError generate_groth16_proofs_c(const Assignment provers[], size_t num_circuits, const fr_t r_s[], const fr_t s_s[],
                                    groth16_proof proofs[], SRS* srs);

/* cuzk's form (Filecoin's proving daemon on SupraSeal, curio's extern/supraseal-c2), which gives
   generate_groth16_proofs_c itself two more arguments: an opaque per-GPU mutex and a GPU index.
   C holds one function per name, so it is exported under this one, the arguments in cuzk's order.
   The same as generate_groth16_proofs_c, on the device gpu_index picks among the devices of the
   STAGEHAND_SUPRASEAL_CONFIG deployment (0 first, in the order its configuration opens them), or
   with -1 on every device (without a deployment: on the CPU). An index with no device (any index
   without a deployment, another negative one) is EINVAL, naming the index and the devices'
   count. gpu_mtx is not used and may be NULL: calls take turns on the devices in Stagehand's own
   locks. */
RustError generate_groth16_proofs_gpu_c(const Assignment provers[], size_t num_circuits, const fr_t r_s[],
                                        const fr_t s_s[], groth16_proof proofs[], SRS* srs, void* gpu_mtx,
                                        int gpu_index);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}  // extern "C"
#endif

#endif /* STAGEHAND_SUPRASEAL_C2_H */
