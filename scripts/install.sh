#!/bin/sh
# Install a released bernstein binary for this machine.
#
#   sh install.sh --version V --dir DIR [--base-url URL] [--public-key PEM]
#
# Picks the archive for this OS/CPU/libc (uname -s, uname -m, musl detection),
# downloads it, SHA256SUMS and SHA256SUMS.sig from <base-url>/v<V>/ (curl or
# wget), refuses a missing or bad Ed25519 signature of SHA256SUMS (openssl,
# against the release key below, or --public-key), then refuses an archive
# whose SHA-256 is not the one SHA256SUMS lists, checks the unpacked
# binary runs here and reports version V, then moves it into DIR/bernstein (temp
# file in DIR, then rename, so DIR never holds a partial binary).
# Exit codes: 0 installed, 1 download/check/install failed (nothing installed),
# 2 usage or unsupported platform.
set -eu

# The release signing key's public half (release-signing.pub in the repository;
# a test checks the two agree). The private half signs SHA256SUMS in the release
# workflow and never leaves the repository's secrets.
RELEASE_PUBLIC_KEY='-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEApK4/bsOa2FJ6PHUQty4ApTGtXlB0sTSF0peSuwY6yi0=
-----END PUBLIC KEY-----'
PUBLIC_KEY=""

BASE_URL="${BERNSTEIN_BASE_URL:-}"
VERSION=""
DIR=""

die() { code=$1; shift; printf 'install.sh: error: %s\n' "$*" >&2; exit "$code"; }
usage() { die 2 "$* (usage: install.sh --version V --dir DIR [--base-url URL] [--public-key PEM])"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --version) [ $# -ge 2 ] || usage "--version needs a value"; VERSION=${2#v}; shift 2 ;;
    --dir) [ $# -ge 2 ] || usage "--dir needs a value"; DIR=$2; shift 2 ;;
    --base-url) [ $# -ge 2 ] || usage "--base-url needs a value"; BASE_URL=$2; shift 2 ;;
    --public-key) [ $# -ge 2 ] || usage "--public-key needs a value"; PUBLIC_KEY=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) usage "unknown argument: $1" ;;
  esac
done
[ -n "$VERSION" ] || usage "--version is required"
[ -n "$DIR" ] || usage "--dir is required"
[ -n "$BASE_URL" ] || usage "--base-url (or BERNSTEIN_BASE_URL) is required"
BASE_URL=${BASE_URL%/}
[ -z "$PUBLIC_KEY" ] || [ -f "$PUBLIC_KEY" ] || usage "--public-key: no such file: $PUBLIC_KEY"

is_musl() {
  for f in /lib/ld-musl-*.so.1; do [ -e "$f" ] && return 0; done
  ldd --version 2>&1 | grep -qi musl
}

os=$(uname -s)
cpu=$(uname -m)
case "$cpu" in
  x86_64|amd64) cpu=x64 ;;
  aarch64|arm64) cpu=arm64 ;;
  *) die 2 "no bernstein build for CPU '$cpu' (builds: x64, arm64)" ;;
esac
exe=bernstein
case "$os" in
  Linux)
    platform="linux-$cpu"
    if is_musl; then
      [ "$cpu" = x64 ] || die 2 "no bernstein build for linux-$cpu with musl libc (musl: x64 only)"
      platform=linux-x64-musl
    fi
    archive="bernstein-$platform.tar.gz" ;;
  Darwin) platform="darwin-$cpu"; archive="bernstein-$platform.tar.gz" ;;
  MINGW*|MSYS*|CYGWIN*|Windows_NT)
    [ "$cpu" = x64 ] || die 2 "no bernstein build for windows-$cpu (Windows: x64 only)"
    platform=windows-x64; archive="bernstein-$platform.zip"; exe=bernstein.exe ;;
  *) die 2 "no bernstein build for OS '$os' (builds: Linux, Darwin, Windows)" ;;
esac

fetch() { # URL FILE
  if command -v curl >/dev/null 2>&1; then
    curl -fsSL --retry 2 -o "$2" "$1"
  elif command -v wget >/dev/null 2>&1; then
    wget -q -O "$2" "$1"
  else
    die 1 "neither curl nor wget is installed"
  fi
}

sha256() { # FILE -> hex digest
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1" | cut -d' ' -f1
  elif command -v shasum >/dev/null 2>&1; then shasum -a 256 "$1" | cut -d' ' -f1
  elif command -v openssl >/dev/null 2>&1; then openssl dgst -sha256 -r "$1" | cut -d' ' -f1
  else die 1 "no SHA-256 tool (sha256sum, shasum or openssl) is installed"
  fi
}

tmp=""
work=$(mktemp -d "${TMPDIR:-/tmp}/bernstein-install.XXXXXX")
trap 'rm -rf "$work"; [ -z "$tmp" ] || rm -f "$tmp"' EXIT
trap 'exit 130' INT TERM

url="$BASE_URL/v$VERSION"
echo "install.sh: $platform: downloading $url/$archive" >&2
fetch "$url/SHA256SUMS" "$work/SHA256SUMS" || die 1 "could not download $url/SHA256SUMS"
fetch "$url/SHA256SUMS.sig" "$work/SHA256SUMS.sig" || die 1 "could not download $url/SHA256SUMS.sig: refusing an unsigned release; nothing installed"

# The signature first: a checksum file is only worth what its signature is.
command -v openssl >/dev/null 2>&1 || die 1 "openssl is needed to verify the release signature; nothing installed"
if [ -z "$PUBLIC_KEY" ]; then
  PUBLIC_KEY="$work/release-signing.pub"
  printf '%s\n' "$RELEASE_PUBLIC_KEY" >"$PUBLIC_KEY"
fi
if ! openssl pkeyutl -verify -pubin -inkey "$PUBLIC_KEY" -rawin -in "$work/SHA256SUMS" -sigfile "$work/SHA256SUMS.sig" >/dev/null 2>&1; then
  die 1 "bad signature: SHA256SUMS.sig does not verify SHA256SUMS against the release key; nothing installed"
fi

fetch "$url/$archive" "$work/$archive" || die 1 "could not download $url/$archive"

expected=$(awk -v f="$archive" '($2 == f || $2 == "*" f) { print $1; exit }' "$work/SHA256SUMS")
[ -n "$expected" ] || die 1 "SHA256SUMS does not list $archive: refusing to install an unchecked archive"
actual=$(sha256 "$work/$archive")
[ "$actual" = "$expected" ] || die 1 "checksum mismatch for $archive: SHA256SUMS says $expected, the download is $actual; nothing installed"

mkdir "$work/x"
case "$archive" in
  *.zip)
    if command -v unzip >/dev/null 2>&1; then unzip -q "$work/$archive" "$exe" -d "$work/x"
    else tar -xf "$work/$archive" -C "$work/x" "$exe"; fi ;;
  *) tar -xzf "$work/$archive" -C "$work/x" "$exe" ;;
esac || die 1 "could not unpack $archive"
[ -f "$work/x/$exe" ] || die 1 "$archive has no $exe"
chmod 755 "$work/x/$exe"

if ! got=$("$work/x/$exe" --version 2>&1); then
  hint=""
  [ "$platform" = linux-x64-musl ] && hint=" (Alpine needs: apk add libstdc++ libgcc)"
  die 1 "the downloaded $exe does not run here$hint: $got; nothing installed"
fi
case "$got" in
  *"$VERSION"*) ;;
  *) die 1 "the downloaded $exe reports version '$got', not $VERSION; nothing installed" ;;
esac

mkdir -p "$DIR"
tmp="$DIR/.$exe.install.$$"
cp "$work/x/$exe" "$tmp" || { rm -f "$tmp"; die 1 "could not write into $DIR"; }
chmod 755 "$tmp"
mv -f "$tmp" "$DIR/$exe" || { rm -f "$tmp"; die 1 "could not move the binary into $DIR/$exe"; }
echo "install.sh: installed bernstein $VERSION ($platform) to $DIR/$exe" >&2
