#!/usr/bin/env bash
# The release workflow's steps (.github/workflows/release.yml), up to and not
# including the upload:
#
#   scripts/release.sh [--key PRIVATE.pem --public-key PUBLIC.pem] [--skip-suite] [--arm64-smoke]
#
#   1. build the six binaries once (bun scripts/build.ts --all: a binary whose
#      inputs are unchanged since the last build is reused, not compiled again);
#   2. the test suite against those exact bytes (BERNSTEIN_BIN=dist/bernstein-<host>),
#      unless --skip-suite (.ci/run has just run it on the same bytes);
#   3. scripts/smoke.sh on the host's binary (and linux-arm64 under qemu with --arm64-smoke);
#   4. package: archives + SHA256SUMS, without compiling again;
#   5. the binaries are still the bytes steps 2 and 3 ran;
#   6. sign SHA256SUMS (Ed25519, openssl pkeyutl) into SHA256SUMS.sig, verify it
#      with the public key, and check every file against SHA256SUMS.
# Without --key: a throwaway key pair in a temp folder (a local rehearsal; its
# signature does not verify against release-signing.pub, on purpose).
# Prints `release: ok: …` / `release: FAILED: …` per step and ends with
# `release: N ok, M failed`; exit 0 all ok, 1 a step failed, 2 usage.
set -uo pipefail
cd "$(dirname "$0")/.."

key="" pub="" skip_suite=0 arm64=0
usage() { echo "release.sh: $* (usage: scripts/release.sh [--key PRIVATE.pem --public-key PUBLIC.pem] [--skip-suite] [--arm64-smoke])" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --key) [ $# -ge 2 ] || usage "--key needs a value"; key=$2; shift 2 ;;
    --public-key) [ $# -ge 2 ] || usage "--public-key needs a value"; pub=$2; shift 2 ;;
    --skip-suite) skip_suite=1; shift ;;
    --arm64-smoke) arm64=1; shift ;;
    *) usage "unknown argument: $1" ;;
  esac
done
if [ -n "$key" ] && [ -z "$pub" ]; then usage "--key needs --public-key (the signature is verified before anything is published)"; fi
if [ -z "$key" ] && [ -n "$pub" ]; then usage "--public-key needs --key"; fi
[ -z "$key" ] || [ -f "$key" ] || usage "--key: no such file: $key"
[ -z "$pub" ] || [ -f "$pub" ] || usage "--public-key: no such file: $pub"
command -v openssl >/dev/null || { echo "release.sh: openssl is needed to sign SHA256SUMS" >&2; exit 1; }
BUN=${BUN:-node_modules/.bin/bun}
[ -x "$BUN" ] || { echo "release.sh: no $BUN: run npm ci first" >&2; exit 1; }

n_ok=0 n_failed=0
ok() { n_ok=$((n_ok + 1)); echo "release: ok: $*"; }
failed() { n_failed=$((n_failed + 1)); echo "release: FAILED: $*"; }
finish() { echo "release: $n_ok ok, $n_failed failed"; [ "$n_failed" = 0 ]; exit $?; }
sha() { sha256sum "$1" | cut -d' ' -f1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/bernstein-release.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ -z "$key" ]; then
  key=$work/throwaway.key pub=$work/throwaway.pub
  openssl genpkey -algorithm ed25519 -out "$key" 2>/dev/null && openssl pkey -in "$key" -pubout -out "$pub" 2>/dev/null ||
    { failed "could not make a throwaway key pair"; finish; }
  echo "release: signing with a throwaway key (a rehearsal: not the release key)"
fi

echo "== 1. build the six binaries once"
if "$BUN" scripts/build.ts --all; then ok "build"; else failed "build"; finish; fi
host=$("$BUN" -e 'import { hostPlatform, binaryName } from "./scripts/build.ts"; const h = hostPlatform(); console.log(h ? binaryName(h) : "")')
[ -n "$host" ] && [ -x "dist/$host" ] || { failed "no release binary for this machine (dist/$host)"; finish; }
tested=$(sha "dist/$host")
echo "release: $host sha256 $tested"

if [ "$skip_suite" = 0 ]; then
  echo "== 2. the suite against dist/$host"
  log=$work/test.log
  BERNSTEIN_BIN=$PWD/dist/$host "$BUN" test --timeout 60000 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  ran=$(sed -nE 's/^binary under test: .* sha256 ([0-9a-f]{64})$/\1/p' "$log" | head -1)
  if [ "$status" = 0 ] && [ "$ran" = "$tested" ]; then ok "suite on sha256 $ran"; else failed "suite (exit $status, ran '${ran:-?}')"; fi
else
  echo "== 2. suite skipped (--skip-suite)"
fi

echo "== 3. smoke"
smoke() { # LABEL BIN [RUNNER...]
  local label=$1
  shift
  if SMOKE_LABEL=$label bash scripts/smoke.sh "$@"; then ok "smoke $label"; else failed "smoke $label"; fi
}
smoke "$host" "dist/$host"
[ "$arm64" = 0 ] || smoke linux-arm64 dist/bernstein-linux-arm64 qemu-aarch64 -L /usr/aarch64-linux-gnu

echo "== 4. package (no compile)"
if "$BUN" scripts/package.ts --no-build; then ok "package"; else failed "package"; finish; fi

echo "== 5. the shipped bytes are the tested bytes"
listed=$(awk -v f="$host" '$2 == f { print $1 }' dist/SHA256SUMS)
if [ "$(sha "dist/$host")" = "$tested" ] && [ "$listed" = "$tested" ]; then ok "dist/$host and SHA256SUMS: sha256 $tested"; else failed "dist/$host changed after testing (SHA256SUMS lists '${listed:-?}', tested $tested)"; fi

echo "== 6. sign SHA256SUMS"
rm -f dist/SHA256SUMS.sig
if openssl pkeyutl -sign -inkey "$key" -rawin -in dist/SHA256SUMS -out dist/SHA256SUMS.sig &&
  openssl pkeyutl -verify -pubin -inkey "$pub" -rawin -in dist/SHA256SUMS -sigfile dist/SHA256SUMS.sig >/dev/null; then
  ok "SHA256SUMS.sig verifies with $pub"
else
  rm -f dist/SHA256SUMS.sig
  failed "signing SHA256SUMS (or verifying the signature with $pub)"
fi
if (cd dist && sha256sum -c --quiet SHA256SUMS); then ok "every file matches SHA256SUMS ($(wc -l <dist/SHA256SUMS) files)"; else failed "sha256sum -c SHA256SUMS"; fi
echo "release: ready to publish: dist/bernstein-* dist/SHA256SUMS dist/SHA256SUMS.sig (not uploaded)"
finish
