/* Stagehand's C ABI: a long-lived Groth16 prover (snarkjs formats; BLS12-381 and BN254 keys side
 * by side, each witness of its key's curve) for callers in C, Go (cgo), Rust and anything else with
 * a C FFI.
 *
 * An engine opens the devices once (a GPU where the configuration and the machine have one,
 * otherwise the simulator's functional mode), keeps proving keys by name in host memory (each
 * .zkey read once), and makes proofs from the bytes of snarkjs .wtns files, from any thread.
 *
 * Conventions: functions that can fail return 0 on success and a STAGEHAND_* code otherwise,
 * writing a message (NUL-terminated, cut to err_len) to `err` where err is not NULL and err_len
 * is not 0. No C++ exception crosses this boundary. Strings handed out are freed with
 * stagehand_free. Every function is safe to call from any thread, except that nothing may use
 * an engine during or after its stagehand_engine_destroy.
 *
 * Link: pkg-config --cflags --libs stagehand, or CMake's find_package(Stagehand) and the target
 * Stagehand::stagehand.
 */
#ifndef STAGEHAND_STAGEHAND_H
#define STAGEHAND_STAGEHAND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Everything declared here is the library's interface (it is built with hidden visibility). */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* Status codes. */
#define STAGEHAND_OK 0
#define STAGEHAND_ERROR_ARGUMENT 1      /* a NULL pointer or an empty name where one is needed */
#define STAGEHAND_ERROR_CONFIG 2        /* the configuration cannot be read, or the devices opened */
#define STAGEHAND_ERROR_UNKNOWN_KEY 3   /* no key of that name (or it is being unloaded) */
#define STAGEHAND_ERROR_KEY_EXISTS 4    /* a key of that name is loaded already */
#define STAGEHAND_ERROR_BAD_KEY 5       /* the .zkey cannot be read, or does not fit the devices */
#define STAGEHAND_ERROR_BAD_WITNESS 6   /* the .wtns bytes are malformed or not for this key */
#define STAGEHAND_ERROR_QUEUE_FULL 7    /* the queue is at capacity (non-blocking submit only) */
#define STAGEHAND_ERROR_UNKNOWN_PROOF 8 /* no proof of that id (or it was forgotten) */
#define STAGEHAND_ERROR_STOPPED 9       /* the engine is shutting down */
#define STAGEHAND_ERROR_PROOF_FAILED 10 /* the proof was accepted but failed (the message says why) */
#define STAGEHAND_ERROR_CANCELLED 11    /* the proof was cancelled */
#define STAGEHAND_ERROR_INTERNAL 12     /* anything else (out of memory, ...) */
#define STAGEHAND_PENDING 13            /* stagehand_poll: the proof is queued or running */
#define STAGEHAND_ALREADY_ENDED 14      /* stagehand_cancel: the proof had ended already */
#define STAGEHAND_ERROR_NO_GPU 15       /* every GPU of the engine is lost: restart it */
#define STAGEHAND_ERROR_DEADLINE \
  16                                        /* the proof's deadline passed before it could start: refused at
                                           submit, or failed unrun while it was queued */
#define STAGEHAND_ERROR_REQUEST_CONFLICT 17 /* the request id names a proof of another key */

typedef struct stagehand_engine stagehand_engine;

/* config_path may be NULL (defaults); on failure returns NULL and writes a message to err. */
stagehand_engine* stagehand_engine_create(const char* config_path, char* err, size_t err_len);
/* Finishes every accepted proof (their callbacks run), then frees the engine. NULL is ignored. */
void stagehand_engine_destroy(stagehand_engine* engine);
/* 0 on success; non-zero with a message in err. */
int stagehand_key_load(stagehand_engine* engine, const char* key_name, const char* zkey_path, char* err,
                       size_t err_len);
/* New proofs for the key are refused at once; it is freed once its queued and running proofs
   have ended (they finish first). */
int stagehand_key_unload(stagehand_engine* engine, const char* key_name, char* err, size_t err_len);
/* Blocking: one proof from the bytes of a snarkjs .wtns file. On success *proof_json and
   *public_json hold snarkjs's proof.json and public.json texts, freed with stagehand_free. */
int stagehand_prove(stagehand_engine* engine, const char* key_name, const uint8_t* wtns, size_t wtns_len,
                    char** proof_json, char** public_json, char* err, size_t err_len);
/* The engine's status as JSON, freed with stagehand_free. */
char* stagehand_status_json(stagehand_engine* engine);
void stagehand_free(void* p);

/* ---- Asynchronous proofs ---- */

/* Called once when a submitted proof ends, on one of the engine's threads: status is
   STAGEHAND_OK (proof_json and public_json hold the texts), STAGEHAND_ERROR_PROOF_FAILED or
   STAGEHAND_ERROR_CANCELLED or STAGEHAND_ERROR_DEADLINE (error says why; the texts are NULL). The strings are valid during
   the call only. Keep it short: the engine's next proofs wait for it. */
typedef void (*stagehand_proof_callback)(void* user_data, uint64_t proof_id, int status, const char* proof_json,
                                         const char* public_json, const char* error);

/* Queues one proof and returns at once with its id in *proof_id. A full queue: with
   wait_when_full non-zero the call waits for room, otherwise it returns
   STAGEHAND_ERROR_QUEUE_FULL. callback may be NULL (then poll). The witness bytes are copied. */
int stagehand_submit(stagehand_engine* engine, const char* key_name, const uint8_t* wtns, size_t wtns_len,
                     int wait_when_full, stagehand_proof_callback callback, void* user_data, uint64_t* proof_id,
                     char* err, size_t err_len);
/* STAGEHAND_PENDING while the proof is queued or running; STAGEHAND_OK once done, with the
   texts in *proof_json and *public_json (freed with stagehand_free; either pointer may be NULL
   when not wanted); STAGEHAND_ERROR_PROOF_FAILED, _CANCELLED or _DEADLINE with the reason in err. */
int stagehand_poll(stagehand_engine* engine, uint64_t proof_id, char** proof_json, char** public_json, char* err,
                   size_t err_len);
/* Blocks until the proof ends, then as stagehand_poll. */
int stagehand_wait(stagehand_engine* engine, uint64_t proof_id, char** proof_json, char** public_json, char* err,
                   size_t err_len);
/* Cancels a queued proof at once, a running one before its next step. 0 when the cancellation
   was made (the proof ends cancelled unless it ends first); STAGEHAND_ALREADY_ENDED when it had
   ended already; STAGEHAND_ERROR_UNKNOWN_PROOF. */
int stagehand_cancel(stagehand_engine* engine, uint64_t proof_id, char* err, size_t err_len);

/* ---- Priorities, request ids, deadlines and timings ---- */

/* Priority classes: the queue takes a higher class first, then the earlier submit, across keys.
   A queued proof's class rises by one every [engine] promote_after_s it waits, so a low one is
   not starved. A critical proof of the running batch's key joins it at its next free place;
   one of another key waits for the batch's unended proofs (kernels are not preempted). */
#define STAGEHAND_PRIORITY_LOW (-1)
#define STAGEHAND_PRIORITY_NORMAL 0
#define STAGEHAND_PRIORITY_HIGH 1
#define STAGEHAND_PRIORITY_CRITICAL 2

/* The options of stagehand_submit_ex and stagehand_prove_ex. Versioned by struct_size: set it
   with stagehand_submit_options_init (or to sizeof), then change the fields wanted; a later
   version of the library reads only the fields a caller's struct_size covers. */
typedef struct stagehand_submit_options {
  size_t struct_size;
  int priority;           /* STAGEHAND_PRIORITY_*; NORMAL by default */
  const char* request_id; /* NULL or "": none. The caller's name for the proof: submitted again while the proof is
                             queued, running or ended within [engine] request_id_retention_s, the same proof id
                             comes back (and *repeated is 1) and no second proof is made; the string is copied */
  int64_t deadline_ms;    /* 0: none. Otherwise the proof must start within this many milliseconds of the call, or
                             it fails unrun with STAGEHAND_ERROR_DEADLINE; negative: already past, refused */
  int wait_when_full;     /* non-zero: a full queue makes the call wait for room instead of refusing */
} stagehand_submit_options;

void stagehand_submit_options_init(stagehand_submit_options* options);

/* Where an ended proof's time went, in consecutive parts that add up to total_s: in the queue
   (and waiting for a worker of its batch), its batch's start (other keys' device memory given
   back, its key set up on the GPU), its host step before the GPU with its uploads and the wait
   for the GPU, its GPU program, the host step after it, the pairing check. Versioned as the
   options: set struct_size to sizeof(stagehand_timings) before the call. */
typedef struct stagehand_timings {
  size_t struct_size;
  double queue_s;
  double setup_s;
  double host_before_s;
  double gpu_s;
  double host_after_s;
  double check_s;
  double total_s;
} stagehand_timings;

/* stagehand_submit with options (NULL: the defaults). *repeated (may be NULL) says whether the
   request id named an earlier proof: then *proof_id is that proof's, and the callback (once,
   as for any submit) reports its outcome, at once when it has ended. */
int stagehand_submit_ex(stagehand_engine* engine, const char* key_name, const uint8_t* wtns, size_t wtns_len,
                        const stagehand_submit_options* options, stagehand_proof_callback callback, void* user_data,
                        uint64_t* proof_id, int* repeated, char* err, size_t err_len);
/* stagehand_prove with options (NULL: the defaults, but waiting for room as stagehand_prove does;
   given, wait_when_full is taken as set) and the proof's timings (may be NULL), written whatever
   its outcome once it was accepted. */
int stagehand_prove_ex(stagehand_engine* engine, const char* key_name, const uint8_t* wtns, size_t wtns_len,
                       const stagehand_submit_options* options, char** proof_json, char** public_json,
                       stagehand_timings* timings, char* err, size_t err_len);
/* The timings of an ended proof (any outcome): STAGEHAND_OK; STAGEHAND_PENDING while it is queued
   or running; STAGEHAND_ERROR_UNKNOWN_PROOF. May be called from a proof's callback. */
int stagehand_proof_timings(stagehand_engine* engine, uint64_t proof_id, stagehand_timings* timings, char* err,
                            size_t err_len);

/* A constant name of a status code ("ok", "unknown_key", ...). */
const char* stagehand_status_name(int status);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* STAGEHAND_STAGEHAND_H */
