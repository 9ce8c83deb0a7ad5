#!/usr/bin/env bash
# Regenerates thrift-idl/src/generated/tcli_service.rs from thrift-idl/TCLIService.thrift
# with Debian's thrift-compiler 0.17 (the version of the `thrift` crate we build against).
#   scripts/gen-thrift.sh          rewrite the checked-in code
#   scripts/gen-thrift.sh --check  exit 1 if the checked-in code differs from a fresh generation
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
idl="$root/thrift-idl/TCLIService.thrift"
target="$root/thrift-idl/src/generated/tcli_service.rs"

command -v thrift >/dev/null || { echo "thrift-compiler is not installed: run scripts/setup.sh" >&2; exit 2; }
version=$(thrift --version | awk '{print $3}')
[ "$version" = "0.17.0" ] || { echo "thrift $version found, 0.17.0 needed (the thrift crate's version)" >&2; exit 2; }

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# The one warning (list<byte> could be binary) is the protocol's choice, not ours to change.
thrift -out "$out" --gen rs "$idl" >/dev/null 2>&1
fresh="$out/t_c_l_i_service.rs"

if [ "${1:-}" = "--check" ]; then
  if ! diff -q "$fresh" "$target" >/dev/null; then
    echo "thrift-idl/src/generated/tcli_service.rs is stale: run scripts/gen-thrift.sh" >&2
    exit 1
  fi
  echo "generated code is up to date"
else
  cp "$fresh" "$target"
  echo "wrote $target"
fi
