# shellcheck shell=bash
# Shared by scripts/setup, scripts/serve and scripts/test (sourced, not run).

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 1

# Tools: cargo-installed binaries (trunk, wasm-bindgen) and npm's binaryen
# (wasm-opt 132) ahead of anything else, e.g. Debian's older binaryen.
export PATH="$ROOT/node_modules/.bin:${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
# Trunk must not phone home to check for a newer release.
export TRUNK_SKIP_VERSION_CHECK=true
export CHROMEDRIVER="${CHROMEDRIVER:-/usr/bin/chromedriver}"

# scripts/test and scripts/test-python build into one cargo target folder for every checkout on
# this machine, unless CARGO_TARGET_DIR names another: a fresh clone (CI's too) reuses the
# dependencies the last run built, native, wasm and the Python package's alike, instead of
# compiling them again. Plain cargo and trunk commands still use the checkout's own target/.
#
# Cargo names this crate's artifacts by their path inside the checkout, not by where the checkout
# is, so every checkout builds into the same files of that folder, and cargo takes an artifact for
# fresh when it is newer than this checkout's sources, even one another checkout built from other
# sources. So a run holds a lock on the folder (a second checkout's run waits), and when the last
# build there came from another checkout, the crate's fingerprints (sightline-*,
# sightline-python-*; not the dependencies') are dropped, so it is built again.
use_shared_target_dir() {
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/sightline/target}"
  mkdir -p "$CARGO_TARGET_DIR"
  # Held by the outermost script; the scripts it runs inherit it.
  if [ "${SIGHTLINE_TARGET_LOCKED:-}" != "$CARGO_TARGET_DIR" ]; then
    exec 9>"$CARGO_TARGET_DIR/.sightline-lock"
    flock 9
    export SIGHTLINE_TARGET_LOCKED="$CARGO_TARGET_DIR"
  fi
  local stamp="$CARGO_TARGET_DIR/.sightline-checkout"
  [ "$(cat "$stamp" 2>/dev/null || true)" = "$ROOT" ] && return 0
  find "$CARGO_TARGET_DIR" -maxdepth 5 -type d -path '*/.fingerprint/sightline-*' -prune -exec rm -rf {} +
  printf '%s\n' "$ROOT" >"$stamp"
}

# shellcheck disable=SC2034 # used by scripts/setup
TRUNK_VERSION=0.21.14

say() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
die() {
  printf '%s: error: %s\n' "${0##*/}" "$*" >&2
  exit 1
}

# The version of a package as pinned in Cargo.lock.
lock_version() {
  awk -v name="$1" '
    $0 == "name = \"" name "\"" { found = 1; next }
    found && /^version = / { gsub(/"/, "", $3); print $3; exit }
    /^\[\[package\]\]/ { found = 0 }
  ' "$ROOT/Cargo.lock"
}
