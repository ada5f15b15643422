# serve-stream[:RATE]: scripts/bench-serve.sh on the GPU: a Poisson stream of RATE (default 6)
# proofs per second through `stagehand serve` against `stagehand prove` on the same witnesses,
# with a critical proof every CRITICAL_EVERY seconds (default 1; 0: none). Log: serve-stream.log.
#   LOG2 (20)  the synthetic circuit's domain    PROOFS (128)  CLIENTS (8)  ROUNDS (1)  SEED (1)
#   SERVE_CONFIG  the server's configuration (an engine configuration, config/serve.toml's keys)
# shellcheck shell=bash disable=SC2034,SC2154  # declarations read by, and variables set by, scripts/gpu.sh
description="a Poisson stream of proofs through stagehand serve against stagehand prove (serve-stream:RATE)"
targets=(stagehand stagehand_make_circuit)

check_run() {
  local critical=() serve_config=() status=0 log=$logs/serve-stream.log
  serve_tree "$work/tree" "$bin/stagehand"
  ensure_curl "$work/shim"
  [[ ${CRITICAL_EVERY:-1} != 0 ]] && critical=(--critical-every "${CRITICAL_EVERY:-1}")
  [[ -n ${SERVE_CONFIG:-} ]] && serve_config=(--serve-config "$SERVE_CONFIG")
  scripts/bench-serve.sh --build "$work/tree" --domain-log2 "${LOG2:-20}" --proofs "${PROOFS:-128}" \
    --clients "${CLIENTS:-8}" --rounds "${ROUNDS:-1}" --arrivals "poisson:${arg:-6}" --seed "${SEED:-1}" \
    ${critical[@]+"${critical[@]}"} ${serve_config[@]+"${serve_config[@]}"} 2>&1 | tee "$log" || status=1
  figure "$(grep -E 'median:' "$log" | sed 's/^ *//' | cut -c1-220)"
  return $status
}
