#!/usr/bin/env bash
# Installs what building and testing Kumiho needs, and checks what it cannot install.
# Idempotent and quick when everything is present; run as root on a fresh machine (CI).
#   - Debian: zookeeper (the ZooKeeper registry's tests), thrift-compiler (scripts/gen-thrift.sh),
#     apache2-utils (htpasswd: the password files of the authentication tests),
#     slapd and ldap-utils (a real OpenLDAP server for authentication LDAP's tests: tests/harness/ldap.py),
#     openssl (the TLS tests' certificates), a Java runtime (beeline, Spark Thrift Server; keytool),
#     libkrb5-dev (not for the gateway's build, which loads MIT krb5's GSS-API at run time, but
#     for PyPI's `kerberos`, which has no wheel and compiles against its headers and krb5-config;
#     it brings libgssapi-krb5-2, the library the gateway loads), krb5-kdc, krb5-admin-server (kadmin.local)
#     and krb5-user (kinit) for authentication KERBEROS's tests (a real KDC: tests/harness/kerberos.py),
#     curl (SPNEGO with --negotiate), faketime (a gateway whose clock is off, for Kerberos' clock skew)
#   - Python (tests/requirements.txt): pyspark (beeline + Hive JDBC 2.3, spark-submit), PyHive
#     with its Thrift/SASL stack, impyla, SQLAlchemy, pytest, DuckDB with its TPC-H extension (the tests' oracle)
# The Rust toolchain itself (cargo, rustfmt, clippy) is expected to be installed already.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

say() { echo "setup: $*"; }
fail() { echo "setup: ERROR: $*" >&2; exit 1; }

# --- Debian packages -------------------------------------------------------------------------
# `dpkg-query` answers from the local database: no network, no apt-get update unless needed.
apt_packages=(zookeeper thrift-compiler apache2-utils slapd ldap-utils openssl
              libkrb5-dev krb5-kdc krb5-admin-server krb5-user curl faketime)
command -v java >/dev/null || apt_packages+=(default-jre-headless)
missing=()
for package in "${apt_packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || fail "missing Debian packages ${missing[*]}: run this script as root"
  say "installing Debian packages: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  say "Debian packages present: ${apt_packages[*]}"
fi

# --- Java ------------------------------------------------------------------------------------
java_version=$(java -version 2>&1 | head -n1)
java_major=$(echo "$java_version" | sed -E 's/.*version "([0-9]+).*/\1/')
[ "$java_major" -ge 17 ] 2>/dev/null || fail "Java 17 or newer is needed (Spark 4, beeline); found: $java_version"
say "java: $java_version"

# --- Python packages -------------------------------------------------------------------------
python=${PYTHON:-python3}
command -v "$python" >/dev/null || fail "$python not found: install Python 3.9+"
requirements="$root/tests/requirements.txt"
# Ask importlib.metadata first: pip itself takes seconds even when nothing is to be done.
if "$python" - "$requirements" <<'EOF'
import sys
from importlib.metadata import version, PackageNotFoundError
def pins(path):
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if line:
            name, wanted = line.split("==")
            yield name.split("[")[0], wanted  # `moto[server]`: extras are not in the name
stale = []
for name, wanted in pins(sys.argv[1]):
    try:
        if version(name) != wanted:
            stale.append(name)
    except PackageNotFoundError:
        stale.append(name)
sys.exit(1 if stale else 0)
EOF
then
  say "Python packages present (tests/requirements.txt)"
else
  say "installing Python packages from tests/requirements.txt"
  # A Debian-managed Python refuses pip installs unless told that this is deliberate.
  if ! "$python" -m pip install --quiet --disable-pip-version-check -r "$requirements"; then
    say "retrying with --break-system-packages (Debian-managed Python)"
    "$python" -m pip install --quiet --disable-pip-version-check --break-system-packages -r "$requirements"
  fi
fi

# --- beeline (from pyspark) ------------------------------------------------------------------
spark_home=$("$python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')
beeline="$spark_home/bin/beeline"
[ -x "$beeline" ] || fail "pyspark is installed but $beeline is missing"
# Without a terminal beeline prints its version, then reads an empty stdin and exits.
beeline_version=$(SPARK_HOME="$spark_home" "$beeline" --version </dev/null 2>&1 | grep -m1 'Beeline version' || true)
[ -n "$beeline_version" ] || fail "$beeline does not run: try 'SPARK_HOME=$spark_home $beeline --version'"
say "beeline: $beeline ($beeline_version)"

# --- Rust tools ------------------------------------------------------------------------------
command -v cargo >/dev/null || fail "cargo not found: install Rust (rustup) first"
cargo fmt --version >/dev/null 2>&1 || fail "rustfmt missing: rustup component add rustfmt"
cargo clippy --version >/dev/null 2>&1 || fail "clippy missing: rustup component add clippy"
if command -v cargo-nextest >/dev/null; then
  say "cargo-nextest present"
else
  say "cargo-nextest not installed: scripts/test.sh will use cargo test"
fi
say "done"
