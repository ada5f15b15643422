/* A C caller of libstagehand: one proof through the blocking call, one through the asynchronous
 * calls (submit with a callback, then wait), the errors a caller must be able to tell apart, and
 * the options (priority, request id, deadline) with each proof's timings.
 *
 *   prove <zkey> <wtns> <out dir> [config]   writes <out dir>/proof.json, public.json (blocking
 *                                            call) and async.proof.json, async.public.json; the
 *                                            engine configured by [config] where given (a
 *                                            stagehand TOML file), else by its defaults
 * The key may be of either curve (BLS12-381 or BN254): the status names it.
 * Exit status 0 only when every step did what it should.
 */
#include <stagehand/stagehand.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

static void fail(const char* what, int status, const char* err) {
  fprintf(stderr, "FAIL: %s: %s (%d): %s\n", what, stagehand_status_name(status), status, err);
  ++failures;
}

static unsigned char* read_file(const char* path, size_t* length) {
  FILE* file = fopen(path, "rb");
  if (file == NULL) return NULL;
  fseek(file, 0, SEEK_END);
  long size = ftell(file);
  fseek(file, 0, SEEK_SET);
  unsigned char* bytes = malloc(size > 0 ? (size_t)size : 1);
  if (bytes != NULL && fread(bytes, 1, (size_t)size, file) != (size_t)size) {
    free(bytes);
    bytes = NULL;
  }
  fclose(file);
  *length = (size_t)size;
  return bytes;
}

static int write_text(const char* dir, const char* name, const char* text) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE* file = fopen(path, "w");
  if (file == NULL) return -1;
  fputs(text, file);
  return fclose(file);
}

/* The completion of the asynchronous proof: its texts kept for main. */
struct completion {
  pthread_mutex_t mutex;
  pthread_cond_t ended;
  int done;
  int status;
  char* proof;
  char* public_signals;
};

static char* copy_string(const char* text) {
  if (text == NULL) return NULL;
  char* copy = malloc(strlen(text) + 1);
  if (copy != NULL) strcpy(copy, text);
  return copy;
}

static void on_proof(void* user_data, uint64_t proof_id, int status, const char* proof_json, const char* public_json,
                     const char* error) {
  struct completion* completion = user_data;
  (void)proof_id;
  pthread_mutex_lock(&completion->mutex);
  completion->status = status;
  completion->proof = copy_string(proof_json);
  completion->public_signals = copy_string(public_json);
  if (status != STAGEHAND_OK) fprintf(stderr, "async proof: %s\n", error);
  completion->done = 1;
  pthread_cond_signal(&completion->ended);
  pthread_mutex_unlock(&completion->mutex);
}

/* Whether an ended proof's timings are all there and add up to its total within 1%. */
static int timings_add_up(const stagehand_timings* t) {
  double parts = t->queue_s + t->setup_s + t->host_before_s + t->gpu_s + t->host_after_s + t->check_s;
  double off = parts > t->total_s ? parts - t->total_s : t->total_s - parts;
  return t->total_s > 0 && t->gpu_s > 0 && t->queue_s >= 0 && t->setup_s >= 0 && t->host_before_s >= 0 &&
         t->host_after_s >= 0 && t->check_s >= 0 && off <= 0.01 * t->total_s;
}

/* The options: a critical proof named by a request id, then the same id again (the same proof,
   no second one), its timings; a blocking proof with its timings; a deadline already past. */
static void check_options(stagehand_engine* engine, const unsigned char* wtns, size_t wtns_length) {
  char err[1024];
  stagehand_submit_options options;
  stagehand_submit_options_init(&options);
  options.priority = STAGEHAND_PRIORITY_CRITICAL;
  options.request_id = "c-example-1";
  options.deadline_ms = 600000;
  uint64_t first = 0, again = 0;
  int repeated = -1;
  int status = stagehand_submit_ex(engine, "circuit", wtns, wtns_length, &options, NULL, NULL, &first, &repeated, err,
                                   sizeof err);
  if (status != STAGEHAND_OK || repeated != 0) fail("stagehand_submit_ex with a request id", status, err);
  char* proof = NULL;
  status = stagehand_wait(engine, first, &proof, NULL, err, sizeof err);
  if (status != STAGEHAND_OK) fail("the proof named by a request id", status, err);
  status = stagehand_submit_ex(engine, "circuit", wtns, wtns_length, &options, NULL, NULL, &again, &repeated, err,
                               sizeof err);
  char* repeated_proof = NULL;
  if (status != STAGEHAND_OK || repeated != 1 || again != first) {
    fail("the same request id again must give the same proof", status, err);
  } else if (stagehand_wait(engine, again, &repeated_proof, NULL, err, sizeof err) != STAGEHAND_OK || proof == NULL ||
             strcmp(proof, repeated_proof) != 0) {
    fail("the same request id again must answer the same proof text", STAGEHAND_OK, "(texts differ)");
  }
  stagehand_free(proof);
  stagehand_free(repeated_proof);
  stagehand_timings timings = {.struct_size = sizeof(stagehand_timings)};
  status = stagehand_proof_timings(engine, first, &timings, err, sizeof err);
  if (status != STAGEHAND_OK || !timings_add_up(&timings))
    fail("stagehand_proof_timings", status, "missing, or not adding up");

  char* public_signals = NULL;
  stagehand_timings blocking = {.struct_size = sizeof(stagehand_timings)};
  status = stagehand_prove_ex(engine, "circuit", wtns, wtns_length, NULL, &proof, &public_signals, &blocking, err,
                              sizeof err);
  if (status != STAGEHAND_OK || !timings_add_up(&blocking)) fail("stagehand_prove_ex with timings", status, err);
  if (status == STAGEHAND_OK) {
    stagehand_free(proof);
    stagehand_free(public_signals);
  }
  options.request_id = NULL;
  options.deadline_ms = -1;
  status =
      stagehand_submit_ex(engine, "circuit", wtns, wtns_length, &options, NULL, NULL, &first, NULL, err, sizeof err);
  if (status != STAGEHAND_ERROR_DEADLINE)
    fail("a deadline already past must be DEADLINE", status, err);
  else
    printf("ok: a deadline already past: %s\n", err);
}

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    fprintf(stderr, "usage: %s <zkey> <wtns> <out dir> [config]\n", argv[0]);
    return 2;
  }
  char err[1024];
  stagehand_engine* engine = stagehand_engine_create(argc == 5 ? argv[4] : NULL, err, sizeof err);
  if (engine == NULL) {
    fprintf(stderr, "FAIL: stagehand_engine_create: %s\n", err);
    return 1;
  }
  int status = stagehand_key_load(engine, "circuit", argv[1], err, sizeof err);
  if (status != STAGEHAND_OK) fail("stagehand_key_load", status, err);
  status = stagehand_key_load(engine, "circuit", argv[1], err, sizeof err);
  if (status != STAGEHAND_ERROR_KEY_EXISTS) fail("loading the key twice must be refused", status, err);
  /* The status lists the key with its curve, as snarkjs names it ("bls12381" or "bn128"). */
  char* status_json = stagehand_status_json(engine);
  const char* curve = status_json != NULL ? strstr(status_json, "\"curve\":\"") : NULL;
  if (curve == NULL) {
    fprintf(stderr, "FAIL: the status names no key's curve: %s\n", status_json != NULL ? status_json : "(none)");
    ++failures;
  } else {
    curve += strlen("\"curve\":\"");
    printf("ok: the key's curve: %.*s\n", (int)strcspn(curve, "\""), curve);
  }
  stagehand_free(status_json);

  size_t wtns_length = 0;
  unsigned char* wtns = read_file(argv[2], &wtns_length);
  if (wtns == NULL) {
    fprintf(stderr, "FAIL: cannot read %s\n", argv[2]);
    return 1;
  }

  /* Blocking. */
  char* proof = NULL;
  char* public_signals = NULL;
  status = stagehand_prove(engine, "circuit", wtns, wtns_length, &proof, &public_signals, err, sizeof err);
  if (status != STAGEHAND_OK) {
    fail("stagehand_prove", status, err);
  } else {
    if (write_text(argv[3], "proof.json", proof) != 0 || write_text(argv[3], "public.json", public_signals) != 0) {
      fprintf(stderr, "FAIL: cannot write into %s\n", argv[3]);
      ++failures;
    }
    stagehand_free(proof);
    stagehand_free(public_signals);
  }

  /* Asynchronous, with a callback; then the same proof's outcome through stagehand_wait. */
  struct completion completion = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, -1, NULL, NULL};
  uint64_t id = 0;
  status = stagehand_submit(engine, "circuit", wtns, wtns_length, 1, on_proof, &completion, &id, err, sizeof err);
  if (status != STAGEHAND_OK) {
    fail("stagehand_submit", status, err);
  } else {
    pthread_mutex_lock(&completion.mutex);
    while (!completion.done) pthread_cond_wait(&completion.ended, &completion.mutex);
    pthread_mutex_unlock(&completion.mutex);
    if (completion.status != STAGEHAND_OK)
      fail("the asynchronous proof", completion.status, "(see above)");
    else if (write_text(argv[3], "async.proof.json", completion.proof) != 0 ||
             write_text(argv[3], "async.public.json", completion.public_signals) != 0)
      ++failures;
    char* waited = NULL;
    status = stagehand_wait(engine, id, &waited, NULL, err, sizeof err);
    if (status != STAGEHAND_OK || waited == NULL || completion.proof == NULL || strcmp(waited, completion.proof) != 0) {
      fail("stagehand_wait must give the callback's proof", status, err);
    }
    stagehand_free(waited);
    status = stagehand_poll(engine, id, NULL, NULL, err, sizeof err);
    if (status != STAGEHAND_OK) fail("stagehand_poll of an ended proof", status, err);
    status = stagehand_cancel(engine, id, err, sizeof err);
    if (status != STAGEHAND_ALREADY_ENDED) fail("cancelling an ended proof", status, err);
    free(completion.proof);
    free(completion.public_signals);
  }

  /* The errors a caller tells apart by their codes. */
  status = stagehand_prove(engine, "circuit", wtns, wtns_length / 2, &proof, &public_signals, err, sizeof err);
  if (status != STAGEHAND_ERROR_BAD_WITNESS)
    fail("a truncated witness must be BAD_WITNESS", status, err);
  else
    printf("ok: a truncated witness: %s\n", err);
  status = stagehand_prove(engine, "no-such-key", wtns, wtns_length, &proof, &public_signals, err, sizeof err);
  if (status != STAGEHAND_ERROR_UNKNOWN_KEY) fail("an unknown key must be UNKNOWN_KEY", status, err);
  status = stagehand_poll(engine, 987654321, NULL, NULL, err, sizeof err);
  if (status != STAGEHAND_ERROR_UNKNOWN_PROOF) fail("an unknown proof must be UNKNOWN_PROOF", status, err);
  status = stagehand_key_load(engine, "broken", argv[2], err, sizeof err); /* a .wtns is no .zkey */
  if (status != STAGEHAND_ERROR_BAD_KEY) fail("a .wtns as a key must be BAD_KEY", status, err);
  status = stagehand_prove(NULL, "circuit", wtns, wtns_length, &proof, &public_signals, err, sizeof err);
  if (status != STAGEHAND_ERROR_ARGUMENT) fail("a NULL engine must be ARGUMENT", status, err);

  char* json = stagehand_status_json(engine);
  if (json == NULL || strstr(json, "\"done\":2") == NULL) {
    fprintf(stderr, "FAIL: the status must count two proofs done: %s\n", json != NULL ? json : "(null)");
    ++failures;
  } else {
    printf("status: %s\n", json);
  }
  stagehand_free(json);

  check_options(engine, wtns, wtns_length);

  status = stagehand_key_unload(engine, "circuit", err, sizeof err);
  if (status != STAGEHAND_OK) fail("stagehand_key_unload", status, err);
  status = stagehand_key_unload(engine, "circuit", err, sizeof err);
  if (status != STAGEHAND_ERROR_UNKNOWN_KEY) fail("unloading twice must be UNKNOWN_KEY", status, err);
  stagehand_engine_destroy(engine);
  free(wtns);
  if (failures != 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("ok: the C caller\n");
  return 0;
}
