#!/usr/bin/env bash
# The Debian package as a farm would install it: `cpack -G DEB` in the build folder, the package's
# control data and files checked, then the packaged binary, extracted with `dpkg -x` into a
# temporary root (no install on this machine), proves a fixture circuit with the packaged
# configuration and the proof is checked by `snarkjs groth16 verify`.
#
#   package_test.sh <build dir> <circuits dir>
set -euo pipefail
build=$1
circuits=$2
source "$(dirname "$0")/../groth16/verify_lib.sh"
snarkjs="node $circuits/node_modules/snarkjs/build/cli.cjs"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd "$build" && cpack -G DEB -B "$work/out" >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log" >&2; fail "cpack -G DEB failed"; finish ""; }
deb=$(ls "$work"/out/*.deb)
[ "$(echo "$deb" | wc -l)" = 1 ] || fail "expected one package, found: $deb"
echo "ok: built $(basename "$deb") ($(du -h "$deb" | cut -f1))"

control=$(dpkg-deb -f "$deb")
grep -Eq '^Package: stagehand(-cuda)?$' <<<"$control" || fail "the package's name: $control"
grep -q '^Depends: .*libfmt' <<<"$control" || fail "dpkg-shlibdeps did not declare fmt: $control"
dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles 2>/dev/null | grep -qx /etc/stagehand/serve.toml ||
  fail "/etc/stagehand/serve.toml is not a conffile"

dpkg -x "$deb" "$work/root"
root=$work/root
before=$failures
# exists WHAT GLOB...: one of the globs matches a file in the package (libdir is lib or lib/<multiarch>).
exists() {
  local what=$1 glob
  shift
  for glob in "$@"; do compgen -G "$root/$glob" >/dev/null && return 0; done
  fail "the package lacks $what"
}
exists "the binary" usr/bin/stagehand
exists "the serve configuration" etc/stagehand/serve.toml
exists "the systemd unit" usr/lib/systemd/system/stagehand-serve.service lib/systemd/system/stagehand-serve.service
exists "the header" usr/include/stagehand/stagehand.h
exists "SupraSeal C2's header" usr/include/stagehand/supraseal_c2.h
exists "libstagehand.so" "usr/lib/libstagehand.so.*" "usr/lib/*/libstagehand.so.*"
exists "stagehand.pc" usr/lib/pkgconfig/stagehand.pc "usr/lib/*/pkgconfig/stagehand.pc"
exists "the CMake package files" usr/lib/cmake/Stagehand/StagehandConfig.cmake "usr/lib/*/cmake/Stagehand/StagehandConfig.cmake"
grep -qs '^ExecStart=/usr/bin/stagehand serve' "$root"/usr/lib/systemd/system/stagehand-serve.service ||
  fail "the packaged unit does not start /usr/bin/stagehand"
[ "$failures" != "$before" ] || echo "ok: the package's files are in place"

# The packaged binary alone (no build tree on its library path) serving with the packaged
# configuration, as the packaged unit starts it; one proof over HTTP, checked by snarkjs.
source "$(dirname "$0")/../../scripts/lib/serve.sh"
server_pid=""
trap 'serve_clean_up_package' EXIT
serve_clean_up_package() { [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true; rm -rf "$work"; }
LD_LIBRARY_PATH="" serve_start "$root/usr/bin/stagehand" "$work/serve.log" --config "$root/etc/stagehand/serve.toml" \
  --key multiplier="$circuits/multiplier/multiplier.zkey" || fail "the packaged stagehand serve did not start"
if [ -n "$url" ]; then
  curl -s -o "$work/answer.json" --data-binary @"$circuits/multiplier/multiplier.wtns" "$url/v1/proofs?key=multiplier&wait=true" || true
  node -e '
    const fs = require("fs");
    const answer = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
    fs.writeFileSync(process.argv[2], JSON.stringify(answer.proof));
    fs.writeFileSync(process.argv[3], JSON.stringify(answer.public));
  ' "$work/answer.json" "$work/proof.json" "$work/public.json" 2>"$work/node.log" ||
    fail "the packaged server's answer is not a proof: $(head -c 300 "$work/answer.json")"
  verify "$circuits/multiplier/vk.json" "$work/public.json" "$work/proof.json" ok "the packaged stagehand's proof"
fi
finish "ok: the Debian package"
