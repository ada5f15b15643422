#!/usr/bin/env bash
# The checks of a GPU machine, each one file in scripts/gpu/ (its header says what it runs and
# which arguments it takes):
#
#   scripts/gpu.sh list                  every check with what it does
#   scripts/gpu.sh bundle CHECK...       here, no GPU needed: configures and builds through CMake
#       exactly the targets the checks need (build-cuda, Release; build-cpu, CUDA off, for the ones
#       that need no GPU), strips them, compresses them with xz and packs them with the shared
#       libraries the GPU machine lacks and the data the checks need (the fixture circuits' keys)
#       into .gpu/, which is what to carry there. Refuses (exit 2) when the bundle would weigh more
#       than GPU_BUNDLE_MIB (56), what the bundle may weigh (the working tree beside it within
#       64 MiB): then bundle and run the checks in several goes.
#   scripts/gpu.sh run CHECK...          there, from the repository root with .gpu/ carried: unpacks
#       the binaries once, runs each check in order and writes under $OUT (or /tmp/gpu-out) one
#       tar per check (its logs) and summary.txt (one line per check: passed or failed, seconds,
#       its key figure). Exit 1 if any check failed.
#   scripts/gpu.sh verify CHECK DIR      here: checks what a run brought back into DIR (the proofs,
#       with snarkjs), for the checks that can.
#
# CHECK is a name or NAME:ARG (e.g. bench-proofs:stream:20:16); a check's further settings are
# environment variables, the same for bundle and run. CIRCUITS=DIR names the groth16_circuits
# fixture to take keys from (default: the first build*/tests/groth16/circuits with them).
set -euo pipefail
caller_dir=$PWD
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[[ -z ${CIRCUITS:-} ]] || CIRCUITS=$(cd "$caller_dir" && readlink -f "$CIRCUITS")
checks_dir=scripts/gpu
bundle=.gpu
gpu_bin=${GPU_BIN:-/tmp/gpu-bin}
max_mib=${GPU_BUNDLE_MIB:-56}

die() { echo "gpu.sh: $*" >&2; exit 2; }

# load_check SPEC: the check's declarations and functions, with name and arg set from SPEC.
# shellcheck disable=SC2034  # arg, description, targets...: read by the checks and the callers
load_check() {
  name=${1%%:*}
  arg=""  # the checks read it
  [[ $1 == *:* ]] && arg=${1#*:}
  [[ -f $checks_dir/$name.sh ]] || die "no check '$name' (scripts/gpu.sh list)"
  description="" targets=() cpu_targets=() keys=() needs_gpu=1
  unset -f check_run check_bundle check_verify
  # shellcheck source=/dev/null
  source "$checks_dir/$name.sh"
  declare -F check_run >/dev/null || die "$checks_dir/$name.sh defines no check_run"
}

list() {
  local file
  for file in "$checks_dir"/*.sh; do
    load_check "$(basename "$file" .sh)"
    printf '%-18s %s\n' "$name" "$description"
  done
}

# circuits_dir: the groth16_circuits fixture with the keys (and, for verify, snarkjs).
circuits_dir() {
  local dir
  for dir in ${CIRCUITS:-} build*/tests/groth16/circuits; do
    [[ -f $dir/chain/chain.zkey ]] && { echo "$dir"; return; }
  done
  die "no groth16_circuits fixture with keys: run 'ctest -R groth16' in a build, or set CIRCUITS=DIR"
}

# snarkjs_cli: the snarkjs the test suite installed, else one on the path.
snarkjs_cli() {
  local dir
  for dir in ${CIRCUITS:-} build*/tests/groth16/circuits; do
    [[ -f $dir/node_modules/snarkjs/build/cli.cjs ]] && { echo "node $dir/node_modules/snarkjs/build/cli.cjs"; return; }
  done
  command -v snarkjs >/dev/null || die "no snarkjs: run 'ctest -R groth16' in a build, or set CIRCUITS=DIR"
  echo snarkjs
}

# build_targets TREE CMAKE_ARGS TARGET...: configures TREE as the build scripts do (so that the
# compiler cache hits) and builds the targets.
build_targets() {
  local tree=$1 args=$2
  shift 2
  export CCACHE_BASEDIR="$root"
  # shellcheck disable=SC2086  # $args is a word list
  cmake -S . -B "$tree" -G Ninja -DCMAKE_BUILD_TYPE=Release $args >/dev/null
  nice -n 5 cmake --build "$tree" -j "${JOBS:-2}" --target "$@"
}

# target_file TREE TARGET: the built executable.
target_file() {
  local file
  file=$(find "$1" -path '*/CMakeFiles' -prune -o -type f -name "$2" -perm -u+x -print | head -1)
  [[ -n $file ]] || die "$1: no executable $2 after the build"
  echo "$file"
}

# pack_binary FILE NAME: FILE stripped into the staging folder as bin/NAME, with the shared
# libraries it needs that the GPU machine lacks (Boost, fmt, TOML++, the CUDA runtime) in lib/.
pack_binary() {
  strip -o "$staging/bin/$2" "$1"
  ldd "$1" | awk '/=> \// {print $3}' | grep -E 'boost|fmt|toml|cudart' | xargs -r -I{} cp -L {} "$staging/lib/"
}

# pack_key NAME: the fixture circuit NAME's zkey, witness and vk (as NAME.vk.json).
pack_key() {
  local dir
  dir=$(circuits_dir)
  cp "$dir/$1/$1.zkey" "$dir/$1/$1.wtns" "$bundle/keys/"
  cp "$dir/$1/vk.json" "$bundle/keys/$1.vk.json"
}

# compress_staging: the staging folder as one solid bin.tar.xz. The CUDA binaries share most of
# their fatbins (the same kernel library), so one stream whose window spans them all stores the
# shared part once: three such binaries weigh hardly more than one.
compress_staging() {
  echo "gpu.sh: compressing $(du -sh "$staging" | cut -f1) of binaries and libraries"
  tar -C "$staging" -cf - bin lib | nice -n 5 xz -T1 --lzma2=preset=6,dict=256MiB >"$bundle/bin.tar.xz"
}

# check_size: the bundle's weight, or exit 2 naming its binaries and sizes when it is too heavy.
check_size() {
  local bytes
  bytes=$(du -sb "$bundle" | cut -f1)
  printf 'gpu.sh: %s weighs %.1f MiB (at most %d)\n' "$bundle" "$(awk -v b="$bytes" 'BEGIN { print b / 1048576 }')" "$max_mib"
  if ((bytes > max_mib * 1048576)); then
    {
      echo "gpu.sh: too heavy to carry; bin.tar.xz holds these (stripped, before compression):"
      find "$staging" -type f -printf '%s %P\n' | sort -rn | awk '{ printf "  %6.1f MiB  %s\n", $1 / 1048576, $2 }'
      echo "  and beside it:"
      find "$bundle" -type f ! -name bin.tar.xz -printf '%s %P\n' | sort -rn | awk '{ printf "  %6.1f MiB  %s\n", $1 / 1048576, $2 }'
      echo "gpu.sh: bundle and run these checks in several goes"
    } >&2
    rm -rf "$bundle" "$staging"
    exit 2
  fi
  rm -rf "$staging"
}

bundle_checks() {
  (($#)) || die "bundle: name one check or more (scripts/gpu.sh list)"
  local spec cuda=() cpu=() key_names=() hooks=() target key
  for spec in "$@"; do
    load_check "$spec"
    cuda+=(${targets[@]+"${targets[@]}"})
    cpu+=(${cpu_targets[@]+"${cpu_targets[@]}"})
    key_names+=(${keys[@]+"${keys[@]}"})
    declare -F check_bundle >/dev/null && hooks+=("$spec")
  done
  mapfile -t cuda < <(printf '%s\n' ${cuda[@]+"${cuda[@]}"} | sed '/^$/d' | sort -u)
  mapfile -t cpu < <(printf '%s\n' ${cpu[@]+"${cpu[@]}"} | sed '/^$/d' | sort -u)
  mapfile -t key_names < <(printf '%s\n' ${key_names[@]+"${key_names[@]}"} | sed '/^$/d' | sort -u)
  ((${#cuda[@]} == 0)) || build_targets build-cuda "" "${cuda[@]}"
  ((${#cpu[@]} == 0)) || build_targets build-cpu "-DSTAGEHAND_CUDA=OFF" "${cpu[@]}"
  staging=$bundle.staging
  rm -rf "$bundle" "$staging" && mkdir -p "$bundle/keys" "$staging/bin" "$staging/lib"
  for target in ${cuda[@]+"${cuda[@]}"}; do pack_binary "$(target_file build-cuda "$target")" "$target"; done
  for target in ${cpu[@]+"${cpu[@]}"}; do pack_binary "$(target_file build-cpu "$target")" "$target-cpu"; done
  for key in ${key_names[@]+"${key_names[@]}"}; do pack_key "$key"; done
  for spec in ${hooks[@]+"${hooks[@]}"}; do
    load_check "$spec"
    check_bundle
  done
  compress_staging
  printf '%s\n' "$@" >"$bundle/checks"
  echo "$(git rev-parse HEAD)$(git diff --quiet HEAD || echo ' with changes')" >"$bundle/commit"
  check_size
}

# describe_machine: the date, the commit, the host's cores and memory, each GPU.
describe_machine() {
  date -u '+%Y-%m-%d %H:%M:%S UTC'
  echo "commit: $(cat "$bundle/commit" 2>/dev/null || echo unknown)"
  echo "host: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv,noheader 2>/dev/null || echo "no GPU found"
}

# gpu_present: whether nvidia-smi lists a GPU.
gpu_present() { nvidia-smi -L 2>/dev/null | grep -q '^GPU '; }

unpack() {
  [[ -f $bundle/checks ]] || die "run: no $bundle/checks: run 'scripts/gpu.sh bundle CHECK...' here and carry $bundle"
  # Afresh: a binary an earlier bundle left must not stand in for one this bundle lacks.
  rm -rf "$gpu_bin" && mkdir -p "$gpu_bin"
  xz -dc "$bundle/bin.tar.xz" | tar -C "$gpu_bin" -xf -
  bin=$gpu_bin/bin
  export LD_LIBRARY_PATH="$gpu_bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
}

# missing_binaries: the binaries the loaded check declares that are not unpacked, each after a space.
missing_binaries() {
  local target
  for target in ${targets[@]+"${targets[@]}"}; do [[ -x $bin/$target ]] || printf ' %s' "$target"; done
  for target in ${cpu_targets[@]+"${cpu_targets[@]}"}; do [[ -x $bin/$target-cpu ]] || printf ' %s' "$target-cpu"; done
}

# tag_of SPEC: the name of the check's tar and work folder.
tag_of() { echo "${1//[^a-zA-Z0-9._-]/-}"; }

# run_one SPEC: the check in a fresh work folder; its logs tarred into $out; a line in the summary.
run_one() {
  local spec=$1 tag started status=0 missing
  tag=$(tag_of "$spec")
  work=/tmp/gpu-work/$tag
  logs=$work/logs
  rm -rf "$work" && mkdir -p "$logs"
  figure=""  # the summary's; the checks set it through figure()
  started=$SECONDS
  echo "== $spec"
  describe_machine >"$logs/machine.txt"
  if ! grep -qxF -- "$spec" "$bundle/checks"; then
    figure "not in this bundle (it holds: $(paste -sd, "$bundle/checks")): bundle it here first"
    status=1
  elif missing=$(missing_binaries) && [[ -n $missing ]]; then
    figure "the bundle lacks$missing (bundled with other settings? bundle it again with this run's)"
    status=1
  elif ((needs_gpu)) && ! gpu_present; then
    figure "needs a GPU, and nvidia-smi finds none on this machine"
    status=1
  else
    (set +e; check_run) 2>&1 | tee "$logs/console.log"
    status=${PIPESTATUS[0]}
  fi
  [[ -f $work/figure ]] && figure=$(head -1 "$work/figure")
  local verdict=passed
  ((status == 0)) || verdict="failed (exit $status)"
  tar -C "$work" -cf "$out/$tag.tar" logs
  echo "$spec: $verdict in $((SECONDS - started)) s${figure:+; $figure}" | tee -a "$out/summary.txt"
  return "$status"
}

run_checks() {
  (($#)) || die "run: name one check or more (scripts/gpu.sh list)"
  out=${OUT:-/tmp/gpu-out}
  mkdir -p "$out"
  : >"$out/summary.txt"
  unpack
  local spec failed=0
  for spec in "$@"; do
    load_check "$spec"
    run_one "$spec" || failed=1
  done
  return "$failed"
}

verify_check() {
  spec=${1:-}
  local dir=${2:-}
  [[ -n $spec && -n $dir ]] || die "verify: CHECK DIR"
  load_check "$spec"
  declare -F check_verify >/dev/null || die "verify: the check $name has nothing to verify here"
  dir=$(cd "$caller_dir" && readlink -f "$dir")
  [[ -d $dir ]] || die "verify: no folder $2"
  check_verify "$dir"
}

# Helpers for the checks' run functions, which see $bin (the binaries), $bundle (.gpu: keys/),
# $work (a fresh scratch folder), $logs (what comes back, as one tar) and $arg (after CHECK:).

# figure TEXT: the check's key figure for the summary (a check's run is in a subshell).
figure() { echo "$*" >"$work/figure"; }

# run_logged LOG BINARY ARG...: a check binary's output into LOG; prints what is not an "ok" line
# and counts those; returns the binary's exit status.
run_logged() {
  local log=$1 status=0
  shift
  "$@" >"$log" 2>&1 || status=$?
  grep -v '^ok ' "$log" || true
  { grep -c '^ok ' "$log" || true; } | sed 's/^/check: lines ok: /'  # grep -c exits 1 on none
  echo "check exit status: $status"
  return "$status"
}

# serve_tree DIR BINARY: a build folder's layout for scripts/bench-serve.sh (--build DIR) around
# the carried BINARY (a stagehand) and stagehand_make_circuit.
serve_tree() {
  rm -rf "$1" && mkdir -p "$1/src/cli" "$1/tests/groth16"
  ln -s "$2" "$1/src/cli/stagehand"
  ln -s "$bin/stagehand_make_circuit" "$1/tests/groth16/stagehand_make_circuit"
}

# ensure_curl DIR: where the machine lacks curl, the few forms the serve checks use, in Python,
# put on the PATH from DIR.
ensure_curl() {
  command -v curl >/dev/null && return
  mkdir -p "$1"
  cat >"$1/curl" <<'PY'
#!/usr/bin/env python3
import sys, time, urllib.request, urllib.error
args, out, fmt, data, url, method = sys.argv[1:], None, None, None, None, None
i = 0
while i < len(args):
    a = args[i]
    if a == '-s': pass
    elif a == '-o': i += 1; out = args[i]
    elif a == '-w': i += 1; fmt = args[i]
    elif a == '-X': i += 1; method = args[i]
    elif a == '--data-binary': i += 1; data = open(args[i][1:], 'rb').read()
    else: url = a
    i += 1
start = time.monotonic()
try:
    r = urllib.request.urlopen(urllib.request.Request(url, data=data, method=method), timeout=3600); code, body = r.status, r.read()
except urllib.error.HTTPError as e:
    code, body = e.code, e.read()
took = time.monotonic() - start
(open(out, 'wb').write(body) if out and out != '/dev/null' else None if out else sys.stdout.buffer.write(body))
if fmt: sys.stdout.write(fmt.replace('%{http_code}', str(code)).replace('%{time_total}', '%.6f' % took).replace('\\n', '\n'))
PY
  chmod +x "$1/curl"
  export PATH="$1:$PATH"
}

# verify_proof_runs TAR: snarkjs verifies every proof in TAR against the vk.json beside it
# (N.proof.json beside N.public.json, or a lone proof.json beside public.json).
verify_proof_runs() {
  local snarkjs check ok=0 bad=0 vk run proof
  snarkjs=$(snarkjs_cli)
  check=$(mktemp -d)
  tar -C "$check" -xf "$1"
  for vk in $(find "$check" -name vk.json | sort); do
    run=$(dirname "$vk")
    compgen -G "$run/*proof.json" >/dev/null || continue
    for proof in "$run"/*proof.json; do
      if $snarkjs groth16 verify "$vk" "${proof%proof.json}public.json" "$proof" 2>&1 | grep -q "OK!"; then ok=$((ok + 1))
      else bad=$((bad + 1)); echo "FAIL: $(basename "$run")/$(basename "$proof") does not verify"; fi
    done
    echo "${run#"$check"/}: $(find "$run" -maxdepth 1 -name '*proof.json' | wc -l) proofs checked"
  done
  echo "snarkjs: $ok proofs verify, $bad do not"
  rm -rf "$check"
  [[ $bad -eq 0 ]]
}

# unpack_logs DIR TAG: the folder where DIR/TAG.tar (a run's logs of one check) is unpacked.
unpack_logs() {
  [[ -f $1/$2.tar ]] || die "verify: no $1/$2.tar (the run's logs of that check)"
  local into
  into=$(mktemp -d)
  tar -C "$into" -xf "$1/$2.tar"
  echo "$into/logs"
}

command=${1:-}
shift || true
case $command in
  list) list ;;
  bundle) bundle_checks "$@" ;;
  run) run_checks "$@" ;;
  verify) verify_check "$@" ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2 ;;
esac
