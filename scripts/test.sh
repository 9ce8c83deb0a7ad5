#!/usr/bin/env bash
# Everything CI checks, in order: toolchain setup, formatting, build, Rust tests, the
# end-to-end tests with real clients (tests/, pytest), clippy. Exits non-zero on any failure.
# From a clean clone on 2 cores this takes ~25 minutes, most of it building DataFusion once.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

step() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }

step "setup"
scripts/setup.sh

step "generated Thrift code is up to date"
scripts/gen-thrift.sh --check

step "cargo fmt --check"
cargo fmt --all --check

step "cargo build"
cargo build --workspace --all-targets

step "Rust tests"
if command -v cargo-nextest >/dev/null; then
  cargo nextest run --workspace --no-fail-fast
else
  cargo test --workspace --no-fail-fast
fi

step "end-to-end tests (pytest)"
status=0
python3 -m pytest tests/ -q || status=$?
# pytest's 5 means it collected no test at all: a broken suite, not a pass.
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: tests/ is broken" >&2
  exit 1
elif [ "$status" -ne 0 ]; then
  exit "$status"
fi

step "cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings

step "all checks passed"
