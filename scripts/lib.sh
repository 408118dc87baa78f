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
