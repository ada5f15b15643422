#!/usr/bin/env bash
# The malformed-input corpus: makes broken inputs of every kind from small valid
# ones and runs the `stagehand` commands on each under `ulimit -v` (1 GiB) and a timeout. It
# fails if any run ends in a signal, std::bad_alloc (or another std:: allocation message), a
# timeout, an exit with an error that does not name the file, or a malformed binary input
# accepted where it must be refused.
#
#   scripts/malformed-inputs.sh [--stagehand PATH] [--make-circuit PATH] [--work DIR] [--all-truncations]
#
# Inputs (valid ones from stagehand_make_circuit and `stagehand setup`, no npm needed):
#   .zkey, .wtns, .r1cs  every truncation of the .wtns and .r1cs; of the .zkey every one in its
#                        first 1 KiB, around each section boundary and every 16th byte after
#                        (--all-truncations: every one); huge and zero values in each header
#                        count, in the section count, ids and sizes; wrong magic, versions 0, 3
#                        and 0xFFFFFFFF; trailing bytes; each file given as another kind; a
#                        directory; a FIFO fed the valid file and a truncated one; /dev/zero,
#                        /dev/urandom and a FIFO with no writer (also as `prove --r1cs`), each of
#                        which must end within 5 s with the error that says what it is.
#   run TOML, fixture    every truncation; each value replaced by 2^40 + 1, -1, nan, inf, 1e308,
#   TOML                 0 and a string; a directory; a FIFO; fixtures naming themselves or each
#                        other, and kernels that do not exist.
# Prints the counts per kind and outcome, and every failure with its command
# (MALFORMED_SHOW_ACCEPTED=1: also each input that was accepted, where acceptance is allowed).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
stagehand="$root/build/src/cli/stagehand"
make_circuit="$root/build/tests/groth16/stagehand_make_circuit"
work=""
all_truncations=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --stagehand) stagehand="$2"; shift 2 ;;
    --make-circuit) make_circuit="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --all-truncations) all_truncations=1; shift ;;
    *) echo "malformed-inputs.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
for tool in "$stagehand" "$make_circuit"; do
  [[ -x "$tool" ]] || { echo "malformed-inputs.sh: $tool is missing: build first (scripts/build.sh)" >&2; exit 2; }
done
command -v python3 >/dev/null || { echo "malformed-inputs.sh: needs python3" >&2; exit 2; }
if [[ -z "$work" ]]; then
  work="$(mktemp -d "${TMPDIR:-/tmp}/stagehand-malformed.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work/valid"
"$make_circuit" --constraints 4 --out "$work/valid" 2>/dev/null
"$stagehand" setup --r1cs "$work/valid/circuit.r1cs" --zkey "$work/valid/circuit.zkey" --vk "$work/valid/vk.json" --seed 1 \
  --threads 1 >/dev/null 2>&1
"$stagehand" prove --zkey "$work/valid/circuit.zkey" --wtns "$work/valid/circuit.wtns" --proof "$work/valid/proof.json" \
  --public "$work/valid/public.json" --seed 1 --threads 1 >/dev/null 2>&1 ||
  { echo "malformed-inputs.sh: the valid inputs do not prove" >&2; exit 1; }

cd "$root"
exec python3 - "$stagehand" "$work" "$all_truncations" "$root" <<'PYTHON'
import concurrent.futures, os, resource, struct, subprocess, sys, threading, time

stagehand, work, all_truncations, root = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4]
valid = os.path.join(work, "valid")
cases_dir = os.path.join(work, "cases")
os.makedirs(cases_dir, exist_ok=True)
# MALFORMED_MEMORY_LIMIT_MIB=0 lifts the limit: AddressSanitizer reserves terabytes of address
# space for its shadow, so the sanitizer builds run the corpus without it (ASan then reports any
# huge allocation itself).
MEMORY_LIMIT = int(os.environ.get("MALFORMED_MEMORY_LIMIT_MIB", "1024")) << 20
TIMEOUT_S = 20
# Endless or writerless inputs are refused at once: a guard against a hang, not a measure of speed.
ENDLESS_TIMEOUT_S = 5
ALLOCATION_WORDS = ("bad_alloc", "std::length_error", "vector::", "basic_string::", "cannot create std::")

def read(name):
    with open(os.path.join(valid, name), "rb") as f:
        return f.read()

zkey, wtns, r1cs = read("circuit.zkey"), read("circuit.wtns"), read("circuit.r1cs")

# A case: kind, a label, the input's path, how the command uses it, whether it must be refused,
# and for a FIFO, the bytes to feed it.
cases = []
counter = [0]

def new_path(kind, suffix):
    counter[0] += 1
    return os.path.join(cases_dir, f"{kind}-{counter[0]}{suffix}")

def add_bytes(kind, label, data, must_fail, suffix):
    path = new_path(kind, suffix)
    with open(path, "wb") as f:
        f.write(data)
    cases.append((kind, label, path, must_fail, None))

def command_for(kind, path):
    out = os.path.join(work, "out", kind)
    os.makedirs(out, exist_ok=True)
    if kind == "zkey":
        return [stagehand, "prove", "--zkey", path, "--wtns", os.path.join(valid, "circuit.wtns"), "--proof", out + "/p.json",
                "--public", out + "/pub.json", "--seed", "1", "--threads", "1"]
    if kind == "wtns":
        return [stagehand, "prove", "--zkey", os.path.join(valid, "circuit.zkey"), "--wtns", path, "--proof", out + "/p.json",
                "--public", out + "/pub.json", "--seed", "1", "--threads", "1"]
    if kind == "r1cs":
        return [stagehand, "setup", "--r1cs", path, "--zkey", out + "/k.zkey", "--vk", out + "/vk.json", "--seed", "1", "--threads", "1"]
    if kind == "prove-r1cs":
        return [stagehand, "prove", "--zkey", os.path.join(valid, "circuit.zkey"), "--wtns", os.path.join(valid, "circuit.wtns"),
                "--r1cs", path, "--proof", out + "/p.json", "--public", out + "/pub.json", "--seed", "1", "--threads", "1"]
    if kind == "run-toml":
        return [stagehand, "run", "--config", path, "--trace", out + "/traces"]
    if kind == "prove-toml":
        return [stagehand, "prove", "--zkey", os.path.join(valid, "circuit.zkey"), "--wtns", os.path.join(valid, "circuit.wtns"),
                "--config", path, "--proof", out + "/p.json", "--public", out + "/pub.json", "--seed", "1", "--threads", "1"]
    if kind == "fixture-toml":
        return [stagehand, "replay", path, "--trace", out + "/trace.json"]
    raise ValueError(kind)

def sections(data):
    """(offset of the section header, id, size) for each section of a container."""
    count = struct.unpack_from("<I", data, 8)[0]
    offset, found = 12, []
    for _ in range(count):
        sid, size = struct.unpack_from("<IQ", data, offset)
        found.append((offset, sid, size))
        offset += 12 + size
    return found

def put(data, offset, fmt, value):
    data = bytearray(data)
    struct.pack_into(fmt, data, offset, value)
    return bytes(data)

HUGE = [0, 1, 1 << 24, 1 << 27, 1 << 28, 1 << 31, 0xFFFFFFFF]
# The header counts of each format: (section id, offset in the section, name, format).
HEADER_FIELDS = {
    "zkey": [(1, 0, "protocol", "<I"), (2, 0, "n8q", "<I"), (2, 52, "n8r", "<I"), (2, 88, "nVars", "<I"), (2, 92, "nPublic", "<I"),
             (2, 96, "domainSize", "<I"), (4, 0, "coefficient count", "<I")],
    "wtns": [(1, 0, "n8", "<I"), (1, 36, "nWitness", "<I")],
    "r1cs": [(1, 0, "n8", "<I"), (1, 36, "nWires", "<I"), (1, 40, "nOutputs", "<I"), (1, 44, "nPubInputs", "<I"),
             (1, 48, "nPrvInputs", "<I"), (1, 52, "nLabels", "<Q"), (1, 60, "nConstraints", "<I")],
}
MAX_VERSION = {"zkey": 2, "wtns": 2, "r1cs": 1}

def binary_cases(kind, data):
    suffix = "." + kind
    table = sections(data)
    boundaries = set()
    for offset, _, size in table:
        boundaries.update(range(max(0, offset - 2), offset + 15))
        boundaries.update(range(offset + 12 + size - 2, offset + 12 + size + 1))
    for length in range(len(data)):
        if all_truncations or kind != "zkey" or length < 1024 or length in boundaries or length % 16 == 0:
            add_bytes(kind, f"truncated to {length} bytes", data[:length], True, suffix)
    for magic in (b"xxxx", b"zkey" if kind != "zkey" else b"wtns", b"\0\0\0\0"):
        add_bytes(kind, f"magic {magic!r}", magic + data[4:], True, suffix)
    for version in (0, MAX_VERSION[kind] + 1, 0xFFFFFFFF):
        add_bytes(kind, f"version {version}", put(data, 4, "<I", version), True, suffix)
    original_count = struct.unpack_from("<I", data, 8)[0]
    for count in (0, original_count - 1, original_count + 1, 0xFFFFFFFF):
        add_bytes(kind, f"section count {count}", put(data, 8, "<I", count), True, suffix)
    for offset, sid, size in table:
        add_bytes(kind, f"section {sid} id 0xFFFFFFFF", put(data, offset, "<I", 0xFFFFFFFF), False, suffix)
        for new_size in {0, max(size, 1) - 1, size + 1, 1 << 32, 1 << 63, (1 << 64) - 1} - {size}:
            add_bytes(kind, f"section {sid} size {new_size}", put(data, offset + 4, "<Q", new_size), True, suffix)
    starts = {sid: offset + 12 for offset, sid, _ in table}
    for sid, field_offset, name, fmt in HEADER_FIELDS[kind]:
        at = starts[sid] + field_offset
        original = struct.unpack_from(fmt, data, at)[0]
        values = HUGE + ([1 << 40, (1 << 64) - 1] if fmt == "<Q" else [])
        for value in values:
            if value == original:
                continue
            must_fail = value >= (1 << 24) and name != "nLabels"
            add_bytes(kind, f"{name} = {value}", put(data, at, fmt, value), must_fail, suffix)
    for extra in (b"\0", b"\x07" * 7, b"\0" * 4096):
        add_bytes(kind, f"{len(extra)} trailing bytes", data + extra, True, suffix)
    for other_name, other in (("zkey", zkey), ("wtns", wtns), ("r1cs", r1cs)):
        if other_name != kind:
            add_bytes(kind, f"a .{other_name} given as .{kind}", other, True, suffix)
    directory = new_path(kind, ".dir")
    os.makedirs(directory)
    cases.append((kind, "a directory", directory, True, None))
    for label, feed, must_fail in (("a FIFO fed the valid file", data, False), ("a FIFO fed half the file", data[: len(data) // 2], True)):
        fifo = new_path(kind, ".fifo")
        os.mkfifo(fifo)
        cases.append((kind, label, fifo, must_fail, feed))

RUN_TOML = """[run]
policies = ["budgeted"]
seed = 3
[sim]
device_model = "h200"
duration_jitter = 0.02
[gpus]
count = 1
workers_per_device = 2
vram_cap_gib = 16
safety_margin_mib = 512
[workload]
proofs = 1
partitions_per_proof = 2
domain_log2 = 10
"""
FIXTURE_TOML = """[fixture]
description = "a small budgeted run"
policy = "budgeted"
[sim]
device_model = "h200"
[gpus]
vram_cap_gib = 16
[workload]
proofs = 1
partitions_per_proof = 2
domain_log2 = 10
[faults]
fail_kernel_name = "ntt_forward"
fail_kernel_occurrence = 1
[expect]
partitions_failed = 1
fallbacks_max = 4
compute_busy_max = 1.0
seconds_per_proof_max = 100
"""
BAD_VALUES = ["1099511627777", "-1", "nan", "inf", "1e308", "0", '"x"', "-9223372036854775808"]

def toml_cases(kind, text):
    suffix = ".toml"
    data = text.encode()
    for length in range(len(data)):
        add_bytes(kind, f"truncated to {length} bytes", data[:length], False, suffix)
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if "=" not in line:
            continue
        key = line.split("=")[0].strip()
        for value in BAD_VALUES:
            changed = lines[:index] + [f"{key} = {value}"] + lines[index + 1:]
            add_bytes(kind, f"{key} = {value}", ("\n".join(changed) + "\n").encode(), False, suffix)
    add_bytes(kind, "an unknown key", (text + "surprise = 1\n").encode(), True, suffix)
    add_bytes(kind, "binary garbage", zkey[:300], True, suffix)
    directory = new_path(kind, ".dir")
    os.makedirs(directory)
    cases.append((kind, "a directory", directory, True, None))
    fifo = new_path(kind, ".fifo")
    os.mkfifo(fifo)
    cases.append((kind, "a FIFO fed the valid file", fifo, False, data))

# (kind, label) of the endless and writerless inputs -> the text their error must hold.
endless = {}

def endless_cases(kind):
    for device in ("/dev/zero", "/dev/urandom"):
        cases.append((kind, device, device, True, None))
        endless[(kind, device)] = device + ": is a character or block device"
    fifo = new_path(kind, ".fifo")
    os.mkfifo(fifo)
    cases.append((kind, "a FIFO with no writer", fifo, True, None))
    endless[(kind, "a FIFO with no writer")] = fifo + ": no process opened it for writing"

binary_cases("zkey", zkey)
binary_cases("wtns", wtns)
binary_cases("r1cs", r1cs)
for kind in ("zkey", "wtns", "r1cs", "prove-r1cs"):
    endless_cases(kind)
toml_cases("run-toml", RUN_TOML)
toml_cases("prove-toml", RUN_TOML.replace('policies = ["budgeted"]\n', ""))
toml_cases("fixture-toml", FIXTURE_TOML)
# References that go round, and kernels that do not exist.
refs = os.path.join(cases_dir, "refs")
os.makedirs(refs)
for name, target in (("self.toml", "self.toml"), ("a.toml", "b.toml"), ("b.toml", "a.toml"), ("dangling.toml", "absent.toml")):
    with open(os.path.join(refs, name), "w") as f:
        f.write(FIXTURE_TOML + f'seconds_per_proof_no_worse_than = "{target}"\n')
for name in ("self.toml", "a.toml", "dangling.toml"):
    cases.append(("fixture-toml", f"a reference: {name}", os.path.join(refs, name), True, None))
add_bytes("fixture-toml", "an unknown kernel", FIXTURE_TOML.replace('"ntt_forward"', '"ntt_fwd"').encode(), True, ".toml")

def limit_memory():
    if MEMORY_LIMIT:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

def feed_fifo(path, data, done):
    # Open for writing once the command opens it for reading (non-blocking until then, so that
    # a command that never opens it does not leave this thread waiting).
    while not done.is_set():
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            time.sleep(0.005)
            continue
        os.set_blocking(fd, True)
        try:
            os.write(fd, data)
        except OSError:
            pass
        os.close(fd)
        return

def run(case):
    kind, label, path, must_fail, feed = case
    command = command_for(kind, path)
    done = threading.Event()
    feeder = None
    if feed is not None:
        feeder = threading.Thread(target=feed_fifo, args=(path, feed, done), daemon=True)
        feeder.start()
    timeout = ENDLESS_TIMEOUT_S if (kind, label) in endless else TIMEOUT_S
    try:
        result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, preexec_fn=limit_memory, cwd=root)
        output = result.stdout.decode(errors="replace")
        rc = result.returncode
    except subprocess.TimeoutExpired:
        done.set()
        return (kind, label, command, "timeout", f"no exit after {timeout} s")
    finally:
        done.set()
    if rc < 0:
        return (kind, label, command, "signal", f"killed by signal {-rc}\n{output[-2000:]}")
    if any(word in output for word in ALLOCATION_WORDS):
        return (kind, label, command, "allocation", output[-2000:])
    if rc == 0:
        if must_fail:
            return (kind, label, command, "accepted", "exit 0 for an input that must be refused")
        return (kind, label, command, "ok-accepted", "")
    names = [path, os.path.basename(path), os.path.splitext(os.path.basename(path))[0]]
    if not any(name in output for name in names):
        return (kind, label, command, "unnamed", f"exit {rc} without naming {path}:\n{output[-2000:]}")
    if (kind, label) in endless and endless[(kind, label)] not in output:
        return (kind, label, command, "unclear", f"exit {rc} without '{endless[(kind, label)]}':\n{output[-2000:]}")
    return (kind, label, command, "ok-refused", "")

start = time.monotonic()
workers = max(1, min(4, os.cpu_count() or 1))
results = []
with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
    results = list(pool.map(run, cases))
elapsed = time.monotonic() - start

counts = {}
failures = []
for kind, label, command, outcome, detail in results:
    counts.setdefault(kind, {}).setdefault(outcome, 0)
    counts[kind][outcome] += 1
    if not outcome.startswith("ok"):
        failures.append((kind, label, command, outcome, detail))
print(f"malformed-inputs: {len(results)} runs in {elapsed:.1f} s ({workers} at a time, ulimit -v {MEMORY_LIMIT >> 20} MiB, "
      f"timeout {TIMEOUT_S} s)")
for kind in counts:
    parts = ", ".join(f"{outcome} {count}" for outcome, count in sorted(counts[kind].items()))
    print(f"  {kind:<13} {sum(counts[kind].values()):>6} runs: {parts}")
if os.environ.get("MALFORMED_SHOW_ACCEPTED"):
    for kind, label, command, outcome, detail in results:
        if outcome == "ok-accepted":
            print(f"  accepted {kind}: {label}")
for kind, label, command, outcome, detail in failures[:50]:
    print(f"FAILED [{outcome}] {kind}: {label}\n  $ {' '.join(command)}\n  {detail.strip()}")
if len(failures) > 50:
    print(f"... and {len(failures) - 50} more failures")
print("malformed-inputs: " + ("every malformed input was refused cleanly" if not failures else f"{len(failures)} failures"))
sys.exit(1 if failures else 0)
PYTHON
