#!/usr/bin/env bash
# The Rust crate bindings/rust/supraseal-c2 against an installed prefix: `cmake --install` into a
# temporary prefix, `cargo test --offline` with Debian's cargo and rustc linking that prefix's
# libstagehand.so through pkg-config, on a fixture circuit's parameters (`stagehand setup --format
# params`) and assignment (supraseal_c2_tool); the proofs the crate wrote are then checked by
# `snarkjs groth16 verify` against `stagehand export-vk`'s vk, and a tampered public signal is
# rejected. Without cargo the test is skipped (exit 77) with a message: scripts/install-deps.sh
# installs it.
#
#   rust_crate_test.sh <cargo or empty> <build dir> <source dir> <stagehand> <supraseal_c2_tool> <circuits dir>
set -euo pipefail
cargo=$1
build=$2
source_dir=$3
stagehand=$4
tool=$5
circuits=$6
if [ -z "$cargo" ] || [ ! -x "$cargo" ]; then
  echo "SKIPPED: cargo is not installed (scripts/install-deps.sh installs Debian's cargo and rustc)"
  exit 77
fi
source "$(dirname "$0")/../groth16/verify_lib.sh"
snarkjs="node $circuits/node_modules/snarkjs/build/cli.cjs"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
export PKG_CONFIG_PATH=$(dirname "$(find "$prefix" -name stagehand.pc)")
export LD_LIBRARY_PATH=$(dirname "$(find "$prefix" -name 'libstagehand.so' | head -1)")
# The rustc beside the cargo found (Debian's), not whichever a PATH puts first.
[ -x "$(dirname "$cargo")/rustc" ] && export RUSTC=$(dirname "$cargo")/rustc
# Kept in the build tree between runs, so that only a changed crate is compiled again.
export CARGO_TARGET_DIR=$build/cargo

circuit=multiplier
export STAGEHAND_TEST_DIR=$work
"$stagehand" setup --format params --r1cs "$circuits/$circuit/$circuit.r1cs" --params "$work/key.params" --seed 11 2>/dev/null
"$stagehand" export-vk --params "$work/key.params" --out "$work/vk.json" 2>/dev/null
"$tool" assignment "$circuits/$circuit/$circuit.r1cs" "$circuits/$circuit/$circuit.wtns" "$work/assignment.bin" "$work/public.json"
"$cargo" test --offline --quiet --manifest-path "$source_dir/bindings/rust/supraseal-c2/Cargo.toml" ||
  fail "cargo test of the supraseal-c2 crate failed"
[ -f "$work/proofs.bin" ] || { fail "the crate's test wrote no proofs.bin"; finish "unreachable"; }
for index in 0 1 2; do
  "$tool" proof-json "$work/proofs.bin" "$index" "$work/proof-$index.json"
  verify "$work/vk.json" "$work/public.json" "$work/proof-$index.json" ok "Rust crate supraseal-c2, $circuit: proof $index"
done
tamper "$work/public.json" "$work/tampered.json"
verify "$work/vk.json" "$work/tampered.json" "$work/proof-0.json" reject "Rust crate supraseal-c2, $circuit: a changed public signal"
finish "ok: the Rust crate supraseal-c2 against the installed library"
