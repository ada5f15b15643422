#!/usr/bin/env bash
# The C ABI's example callers, each proving fixture circuits, every proof checked by
# `snarkjs groth16 verify` (tests/groth16/verify_lib.sh).
#
#   capi_test.sh in-tree <C example executable> <circuits dir>
#       the C example as built in this tree (under the sanitizers too)
#   capi_test.sh installed <build dir> <source dir> <circuits dir>
#       `cmake --install` into a temporary prefix, then against that prefix only: the C example
#       through find_package(Stagehand) and through pkg-config, and the Go example (cgo,
#       pkg-config), and SupraSeal C2's C caller built against the prefix (supraseal_c2.h and
#       its exports). A missing Go toolchain is a failure: scripts/install-deps.sh installs it.
set -euo pipefail
mode=$1
shift
source "$(dirname "$0")/../groth16/verify_lib.sh"

# run_c <executable> <circuit> <circuits dir> <what> [<curve> <config>]: with a curve, the status
# must name it, and the engine is configured by <config>.
run_c() {
  local out
  out=$(mktemp -d)
  "$1" "$3/$2/$2.zkey" "$3/$2/$2.wtns" "$out" ${6:+"$6"} | tee "$out/stdout"
  if [ -n "${5:-}" ] && ! grep -q "^ok: the key's curve: $5\$" "$out/stdout"; then fail "$4, $2: the status does not name the curve $5"; fi
  verify "$3/$2/vk.json" "$out/public.json" "$out/proof.json" ok "$4, $2: the blocking proof"
  verify "$3/$2/vk.json" "$out/async.public.json" "$out/async.proof.json" ok "$4, $2: the asynchronous proof"
  tamper "$out/public.json" "$out/tampered.json"
  verify "$3/$2/vk.json" "$out/tampered.json" "$out/proof.json" reject "$4, $2: the proof with a public signal changed"
  rm -rf "$out"
}

case "$mode" in
  in-tree)
    example=$1
    circuits=$2
    snarkjs="node $circuits/node_modules/snarkjs/build/cli.cjs"
    run_c "$example" multiplier "$circuits" "C example (in-tree)" bls12381
    # A BN254 key (circom's default prime) on the functional simulator.
    sim=$(mktemp)
    printf '[run]\nbackend = "sim"\n' >"$sim"
    run_c "$example" multiplier "$circuits/bn128" "C example (in-tree, BN254)" bn128 "$sim"
    rm -f "$sim"
    finish "ok: the C example in this tree"
    ;;
  installed)
    build=$1
    source_dir=$2
    circuits=$3
    snarkjs="node $circuits/node_modules/snarkjs/build/cli.cjs"
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    prefix=$work/prefix
    cmake --install "$build" --prefix "$prefix" >/dev/null
    # Nothing from the build tree: the examples see the prefix only.
    export PKG_CONFIG_PATH=$(dirname "$(find "$prefix" -name stagehand.pc)")
    export LD_LIBRARY_PATH=$(dirname "$(find "$prefix" -name 'libstagehand.so' | head -1)")

    cmake -S "$source_dir/examples/c" -B "$work/c" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
    cmake --build "$work/c" >/dev/null
    run_c "$work/c/stagehand_c_example" linear "$circuits" "C example (find_package)"

    cc -std=c11 -Wall -Werror -o "$work/c_pkgconfig" "$source_dir/examples/c/prove.c" $(pkg-config --cflags --libs stagehand) -lpthread
    run_c "$work/c_pkgconfig" chain "$circuits" "C example (pkg-config)"
    # SupraSeal C2's header is installed and its functions exported (capi_supraseal_c2 runs them).
    cc -std=c11 -Wall -Werror -o "$work/supraseal_c2" "$source_dir/tests/capi/supraseal_c2_test.c" \
      $(pkg-config --cflags --libs stagehand) -lpthread || fail "the SupraSeal C2 caller does not build against the prefix"

    if ! command -v go >/dev/null; then
      fail "the Go toolchain is not installed (scripts/install-deps.sh installs golang-go): the Go example cannot be built"
      finish "unreachable"
    fi
    export GOCACHE=$work/gocache GOPATH=$work/gopath GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local
    (cd "$source_dir/examples/go" && go build -o "$work/go_example" .)
    mkdir -p "$work/go"
    "$work/go_example" "$circuits/chain/chain.zkey" "$circuits/chain/chain.wtns" "$work/go"
    for n in 0 1 2 3 4; do
      verify "$circuits/chain/vk.json" "$work/go/public-$n.json" "$work/go/proof-$n.json" ok "Go example, chain: proof $n"
    done
    finish "ok: the installed package's C and Go callers"
    ;;
  *) echo "usage: capi_test.sh in-tree|installed ..." >&2; exit 2 ;;
esac
