#!/usr/bin/env bash
# Smoke set for one compiled binary, on the machine or under an emulator:
#
#   scripts/smoke.sh BIN [RUNNER ...]
#   scripts/smoke.sh dist/bernstein-linux-arm64 qemu-aarch64 -L /usr/aarch64-linux-gnu
#
# --version; verify an intact and a tampered run journal; record a journal from
# a pipe and verify it; make a key pair, export a signed receipt and verify it,
# a tampered copy and a wrong key. Works on copies of test/fixtures/vectors in a
# temp folder (verify writes divergence reports beside its input). Prints one
# line per check and a closing `smoke LABEL: P ok, F failed`; exits 1 when a
# check failed, 2 on usage. LABEL is $SMOKE_LABEL or the binary's file name.
set -uo pipefail

if [ $# -lt 1 ]; then
  echo "usage: scripts/smoke.sh BIN [RUNNER ...]" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
shift
runner=("$@")
label=${SMOKE_LABEL:-$(basename "$bin")}
vectors=$root/test/fixtures/vectors
version=$(node -p 'require(process.argv[1]).version' "$root/package.json")

work=$(mktemp -d "${TMPDIR:-/tmp}/bernstein-smoke.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp -R "$vectors/run-journal" "$work/runs"
cp -R "$vectors/agent-journal/sdd" "$work/sdd"

head_of() { sed -n 's/.*"head": *"\([0-9a-f]\{64\}\)".*/\1/p' "$1" | head -1; }
journal_head=$(head_of "$vectors/run-journal/hazards.expect.json")
receipt_head=$(head_of "$vectors/agent-journal/expect.json")

passed=0
failed=0
# check NAME WANT_EXIT NEEDLE [STDIN_FILE|-] -- ARGS...: run the binary, want that exit code and NEEDLE in its output.
check() {
  local name=$1 want=$2 needle=$3 input=$4
  shift 5
  local out code
  if [ "$input" = - ]; then
    out=$("${runner[@]}" "$bin" "$@" </dev/null 2>&1)
  else
    out=$(cat "$input" | "${runner[@]}" "$bin" "$@" 2>&1)
  fi
  code=$?
  if [ "$code" = "$want" ] && [[ "$out" == *"$needle"* ]]; then
    passed=$((passed + 1))
    echo "  ok    $name"
  else
    failed=$((failed + 1))
    echo "  FAIL  $name: exit $code (want $want), output should contain '$needle':"
    printf '%s\n' "$out" | head -20 | sed 's/^/        | /'
  fi
}

# Flip one byte of a receipt's journal member: the first step's prompt "Step 0" becomes "Step 9".
tamper() {
  node -e '
    const fs = require("fs");
    const b = fs.readFileSync(process.argv[1]);
    const at = b.indexOf("\"prompt\":\"Step 0:");
    if (at < 0) { console.error("tamper: marker not found"); process.exit(1); }
    b[at + 15] = 0x39;
    fs.writeFileSync(process.argv[2], b);' "$1" "$2"
}

echo "== smoke $label${runner[*]:+ (under ${runner[*]})}"
check "--version prints $version" 0 "$version" - -- --version
check "intact journal verifies (head ${journal_head:0:12}…)" 0 "$journal_head" - -- journal verify "$work/runs/hazards.jsonl"
check "tampered journal is a divergence (exit 1)" 1 "DIVERGENCE" - -- journal verify "$work/runs/hazards-payload-edit.jsonl"
printf '{"event":"start","n":1}\n{"event":"step","text":"\\u65e5\\u672c"}\n{"event":"stop"}\n' >"$work/events.jsonl"
check "journal record reads a pipe" 0 "3 event" "$work/events.jsonl" -- journal record smoke --sdd-dir "$work/rec"
check "the recorded journal verifies" 0 "3 events" - -- journal verify smoke --sdd-dir "$work/rec"
check "keys generate" 0 "k.pub" - -- keys generate --out-dir "$work/keys" --name k
check "keys generate (a second key)" 0 "other.pub" - -- keys generate --out-dir "$work/keys" --name other
check "export a signed receipt" 0 "$receipt_head" - -- replay export agent-a "$work/signed.tar" --sign "$work/keys/k.key" --sdd-dir "$work/sdd"
check "signed receipt verifies with its key" 0 "$receipt_head" - -- replay verify "$work/signed.tar" --public-key "$work/keys/k.pub"
if tamper "$work/signed.tar" "$work/tampered.tar"; then
  check "tampered receipt is refused (exit 1)" 1 "mismatch" - -- replay verify "$work/tampered.tar" --public-key "$work/keys/k.pub"
else
  failed=$((failed + 1))
  echo "  FAIL  tampered receipt: could not make the tampered copy"
fi
check "signed receipt with the wrong key is refused (exit 1)" 1 "signature" - -- replay verify "$work/signed.tar" --public-key "$work/keys/other.pub"

echo "smoke $label: $passed ok, $failed failed"
[ "$failed" = 0 ]
