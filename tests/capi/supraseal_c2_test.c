/* SupraSeal C2's C ABI (include/stagehand/supraseal_c2.h) called from C, as the Rust crate
 * supraseal-c2 calls it: parameters through create_SRS (cached and not), clone_SRS, evict_SRS and
 * drop_SRS, three circuits in one generate_groth16_proofs_c call, the same proof from four threads
 * at once byte for byte, and every kind of bad argument returned as a RustError naming it, the
 * proofs left untouched; cuzk's form (generate_groth16_proofs_gpu_c) on each device of the
 * deployment and on all of them gives the same bytes, and an index with no device is refused,
 * naming it and the count. The proofs are written to <out>/proofs.bin for snarkjs to verify
 * (tests/capi/supraseal_c2_test.sh).
 *
 *   supraseal_c2_test <key.params> <assignment.bin> <out dir> <devices>
 * devices: how many the STAGEHAND_SUPRASEAL_CONFIG deployment has (0 without one).
 * assignment.bin: the layout tests/capi/supraseal_c2_tool.cpp writes. */
#include "stagehand/supraseal_c2.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

static void check(int ok, const char* what) {
  if (ok) {
    printf("ok: %s\n", what);
  } else {
    fprintf(stderr, "FAIL: %s\n", what);
    ++failures;
  }
}

/* The call failed with code EINVAL and a message containing `part`; the message is freed. */
static void check_error(RustError error, const char* part, const char* what) {
  int ok = error.code == EINVAL && error.message != NULL && strstr(error.message, part) != NULL;
  if (!ok) {
    fprintf(stderr, "  code %d, message '%s', expected '%s'\n", error.code,
            error.message != NULL ? error.message : "(null)", part);
  }
  check(ok, what);
  free(error.message);
}

static unsigned char* read_file(const char* path, size_t* size) {
  FILE* file = fopen(path, "rb");
  if (file == NULL) return NULL;
  fseek(file, 0, SEEK_END);
  *size = (size_t)ftell(file);
  fseek(file, 0, SEEK_SET);
  unsigned char* bytes = malloc(*size);
  if (bytes != NULL && fread(bytes, 1, *size, file) != *size) {
    free(bytes);
    bytes = NULL;
  }
  fclose(file);
  return bytes;
}

/* Points the assignment's fields into the file's bytes (aligned: malloc'd, u64 and 32-byte
   fields in whole units). */
static Assignment parse_assignment(unsigned char* bytes) {
  const uint64_t* header = (const uint64_t*)bytes;
  size_t inputs = header[0], aux = header[1], abc = header[2];
  const uint64_t* words = header + 6;
  Assignment assignment;
  assignment.a_aux_density = words, assignment.a_aux_bit_len = aux, assignment.a_aux_popcount = header[3];
  words += (aux + 63) / 64;
  assignment.b_inp_density = words, assignment.b_inp_bit_len = inputs, assignment.b_inp_popcount = header[4];
  words += (inputs + 63) / 64;
  assignment.b_aux_density = words, assignment.b_aux_bit_len = aux, assignment.b_aux_popcount = header[5];
  words += (aux + 63) / 64;
  const fr_t* values = (const fr_t*)words;
  assignment.a = values, assignment.b = values + abc, assignment.c = values + 2 * abc, assignment.abc_size = abc;
  assignment.inp_assignment_data = values + 3 * abc, assignment.inp_assignment_size = inputs;
  assignment.aux_assignment_data = values + 3 * abc + inputs, assignment.aux_assignment_size = aux;
  return assignment;
}

/* Small r and s: any value below r is a valid Montgomery form. */
static fr_t scalar(uint64_t value) {
  fr_t out = {{value, 0, 0, 0}};
  return out;
}

struct thread_call {
  const Assignment* assignment;
  SRS* srs;
  groth16_proof proof;
  int code;
};

static void* prove_in_thread(void* argument) {
  struct thread_call* call = argument;
  fr_t r = scalar(11), s = scalar(12);
  RustError error = generate_groth16_proofs_c(call->assignment, 1, &r, &s, &call->proof, call->srs);
  call->code = error.code;
  free(error.message);
  return NULL;
}

static void check_bad_calls(const Assignment* good, SRS* srs) {
  groth16_proof proof;
  memset(&proof, 0xAB, sizeof(proof));
  fr_t r = scalar(1), s = scalar(2);
  Assignment bad = *good;
  bad.a_aux_popcount += 1;
  check_error(generate_groth16_proofs_c(&bad, 1, &r, &s, &proof, srs), "circuit 0: a_aux_popcount",
              "a wrong a_aux_popcount is refused");
  bad = *good;
  bad.aux_assignment_data = NULL;
  check_error(generate_groth16_proofs_c(&bad, 1, &r, &s, &proof, srs), "aux_assignment_data is NULL",
              "a NULL aux assignment is refused");
  bad = *good;
  bad.abc_size = 1u << 20;
  check_error(generate_groth16_proofs_c(&bad, 1, &r, &s, &proof, srs), "abc_size is 1048576, above the key's domain",
              "an abc_size above the domain is refused");
  fr_t unreduced = {{~0ull, ~0ull, ~0ull, ~0ull}};
  check_error(generate_groth16_proofs_c(good, 1, &unreduced, &s, &proof, srs), "r_s[0] is not below r",
              "an r not below the modulus is refused");
  /* A changed public input: the assignment no longer satisfies the circuit's input rows. */
  fr_t* inputs = malloc(good->inp_assignment_size * sizeof(fr_t));
  memcpy(inputs, good->inp_assignment_data, good->inp_assignment_size * sizeof(fr_t));
  inputs[1].limbs[0] ^= 1;
  bad = *good;
  bad.inp_assignment_data = inputs;
  check_error(generate_groth16_proofs_c(&bad, 1, &r, &s, &proof, srs), "does not verify",
              "a changed public input fails the pairing check");
  free(inputs);
  SRS none = {NULL};
  check_error(generate_groth16_proofs_c(good, 1, &r, &s, &proof, &none), "the SRS is NULL", "a NULL SRS is refused");
  check_error(generate_groth16_proofs_c(good, 1, &r, &s, NULL, srs), "is NULL for 1 circuits",
              "NULL proofs are refused");
  unsigned char untouched[sizeof(proof)];
  memset(untouched, 0xAB, sizeof(untouched));
  check(memcmp(&proof, untouched, sizeof(proof)) == 0, "failed calls leave the proofs untouched");
}

/* cuzk's form: gpu_index -1 and each of the `devices` give `expected` (r 11, s 12) byte for byte;
   an index past them, or another negative one, is refused naming it, the proof untouched. */
static void check_gpu_calls(const Assignment* good, SRS* srs, const groth16_proof* expected, int devices) {
  fr_t r = scalar(11), s = scalar(12);
  char what[128];
  for (int index = -1; index < devices; ++index) {
    groth16_proof proof;
    memset(&proof, 0, sizeof(proof));
    RustError error = generate_groth16_proofs_gpu_c(good, 1, &r, &s, &proof, srs, NULL, index);
    if (error.code != 0) fprintf(stderr, "generate_groth16_proofs_gpu_c: %s\n", error.message);
    snprintf(what, sizeof(what), "gpu_index %d gives generate_groth16_proofs_c's proof byte for byte", index);
    check(error.code == 0 && memcmp(&proof, expected, sizeof(proof)) == 0, what);
    free(error.message);
  }
  groth16_proof proof;
  memset(&proof, 0xAB, sizeof(proof));
  char part[128];
  snprintf(part, sizeof(part), "gpu_index %d is out of range", devices);
  snprintf(what, sizeof(what), "gpu_index %d, past the deployment's devices, is refused", devices);
  check_error(generate_groth16_proofs_gpu_c(good, 1, &r, &s, &proof, srs, NULL, devices), part, what);
  snprintf(part, sizeof(part), "%d device", devices);
  check_error(generate_groth16_proofs_gpu_c(good, 1, &r, &s, &proof, srs, NULL, devices + 1), part,
              "the refusal names the devices' count");
  check_error(generate_groth16_proofs_gpu_c(good, 1, &r, &s, &proof, srs, NULL, -2), "gpu_index -2 is neither",
              "a negative gpu_index other than -1 is refused");
  unsigned char untouched[sizeof(proof)];
  memset(untouched, 0xAB, sizeof(untouched));
  check(memcmp(&proof, untouched, sizeof(proof)) == 0, "refused gpu_index calls leave the proof untouched");
}

static void check_srs_calls(const char* params) {
  SRS srs = {NULL};
  check_error(create_SRS(&srs, "/nonexistent/key.params", false), "/nonexistent/key.params", "a missing file is named");
  check(srs.ptr == NULL, "a failed create_SRS leaves the handle as it was");
  check_error(create_SRS(NULL, params, true), "ret is NULL", "a NULL ret is refused");
  check_error(create_SRS(&srs, NULL, true), "srs_path is NULL", "a NULL path is refused");
  SRS first = {NULL}, second = {NULL};
  RustError error = create_SRS(&first, params, true);
  check(error.code == 0 && error.message == NULL && first.ptr != NULL, "create_SRS with the cache");
  error = create_SRS(&second, params, true);
  check(error.code == 0 && second.ptr != NULL, "create_SRS again from the cache");
  evict_SRS(&first);
  drop_SRS(&first);
  check(first.ptr == NULL, "drop_SRS clears the handle");
  drop_SRS(&first); /* a no-op */
  drop_SRS(&second);
  SRS cleared = clone_SRS(&first);
  check(cleared.ptr == NULL, "a clone of a dropped handle is NULL");
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: supraseal_c2_test KEY.params ASSIGNMENT.bin OUT_DIR DEVICES\n");
    return 2;
  }
  const int devices = atoi(argv[4]);
  size_t size = 0;
  unsigned char* bytes = read_file(argv[2], &size);
  if (bytes == NULL) {
    fprintf(stderr, "cannot read %s\n", argv[2]);
    return 2;
  }
  const Assignment assignment = parse_assignment(bytes);
  check_srs_calls(argv[1]);

  SRS srs = {NULL};
  RustError error = create_SRS(&srs, argv[1], false);
  if (error.code != 0) fprintf(stderr, "create_SRS: %s\n", error.message);
  check(error.code == 0, "create_SRS without the cache");
  free(error.message);
  SRS clone = clone_SRS(&srs);
  drop_SRS(&srs); /* the clone keeps the parameters */

  const Assignment three[3] = {assignment, assignment, assignment};
  const fr_t r_s[3] = {scalar(11), scalar(21), scalar(31)}, s_s[3] = {scalar(12), scalar(22), scalar(32)};
  groth16_proof proofs[3];
  error = generate_groth16_proofs_c(three, 3, r_s, s_s, proofs, &clone);
  if (error.code != 0) fprintf(stderr, "generate_groth16_proofs_c: %s\n", error.message);
  check(error.code == 0 && error.message == NULL, "three circuits in one call");
  free(error.message);
  check(memcmp(&proofs[0], &proofs[1], sizeof(groth16_proof)) != 0, "other r and s give another proof");

  struct thread_call calls[4];
  pthread_t threads[4];
  for (int i = 0; i < 4; ++i) {
    calls[i].assignment = &assignment, calls[i].srs = &clone, calls[i].code = -1;
    pthread_create(&threads[i], NULL, prove_in_thread, &calls[i]);
  }
  for (int i = 0; i < 4; ++i) {
    pthread_join(threads[i], NULL);
    check(calls[i].code == 0 && memcmp(&calls[i].proof, &proofs[0], sizeof(groth16_proof)) == 0,
          "a call from another thread gives the same proof byte for byte");
  }
  check_bad_calls(&assignment, &clone);
  check_gpu_calls(&assignment, &clone, &proofs[0], devices);
  drop_SRS(&clone);

  char path[4096];
  snprintf(path, sizeof(path), "%s/proofs.bin", argv[3]);
  FILE* out = fopen(path, "wb");
  check(out != NULL && fwrite(proofs, sizeof(proofs), 1, out) == 1 && fclose(out) == 0, "proofs.bin written");
  free(bytes);
  return failures == 0 ? 0 : 1;
}
