#!/usr/bin/env bash
# The benchmark of issue #5 (BENCHMARKS.md holds the latest table):
#   scripts/bench.sh [--spark] [--quick] [extra kumiho-bench flags, e.g. --cases 2,3]
# Builds the release binaries (kumiho, kumiho-engine, kumiho-spark-engine, kumiho-bench) in one
# cargo invocation, then runs kumiho-bench, which starts on free loopback ports the DataFusion
# engine alone and kumiho on the embedded registry (and with --spark the Spark Thrift Server
# from pyspark alone and kumiho's SPARK_SQL cluster), runs every case, prints the table with
# each figure beside its target (MET / MISSED), writes bench-results.json and stops all it
# started. --quick shrinks every case (a smoke run). Speed is not a test: scripts/test.sh only
# builds kumiho-bench, it never runs this.
set -euo pipefail
cd "$(dirname "$0")/.."

spark=0
quick=0
extra=()
for arg in "$@"; do
  case "$arg" in
    --spark) spark=1 ;;
    --quick) quick=1 ;;
    -h | --help)
      sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *) extra+=("$arg") ;;
  esac
done

cargo build --release --workspace --bins
target_dir=$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
bin="$target_dir/release"

# Case 4 holds 10,000 sessions in one gateway: a client socket and an engine socket each.
# Raise the open-file limit as far as this machine lets us; kumiho-bench reads the gateway's
# limit and, if it is still short, puts several sessions on each client connection.
wanted=65536
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$hard" -lt "$wanted" ]; then
  ulimit -Hn "$wanted" 2>/dev/null || wanted=$hard
fi
ulimit -n "$wanted"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/kumiho-bench.XXXXXX")
bench_pid=
# Stops what the run started, even when it is interrupted: kumiho-bench itself (which stops its
# servers), then any process still naming the scratch directory (engines outlive gateways).
cleanup() {
  local status=$?
  if [ -n "$bench_pid" ] && kill -0 "$bench_pid" 2>/dev/null; then
    kill -TERM "$bench_pid" 2>/dev/null || true
    wait "$bench_pid" 2>/dev/null || true
  fi
  local proc cmdline
  for proc in /proc/[0-9]*; do
    cmdline=$(tr '\0' ' ' <"$proc/cmdline" 2>/dev/null) || continue
    if [[ "$cmdline" == *"$scratch"* ]]; then
      kill -KILL "${proc#/proc/}" 2>/dev/null || true
    fi
  done
  if [ "$status" -eq 0 ]; then
    rm -rf "$scratch"
  else
    echo "logs kept in $scratch/logs" >&2
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

args=(--kumiho "$bin/kumiho" --engine "$bin/kumiho-engine" --dir "$scratch" --json bench-results.json)
[ "$quick" = 1 ] && args+=(--quick)
if [ "$spark" = 1 ]; then
  # On a fresh machine: the project's installer (idempotent) brings Java and pyspark.
  if ! command -v java >/dev/null || ! python3 -c 'import pyspark' 2>/dev/null; then
    echo "bench: --spark needs Java and pyspark; installing them with scripts/setup.sh" >&2
    scripts/setup.sh
  fi
  spark_home=$(python3 -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))') || {
    echo "--spark needs pyspark, which scripts/setup.sh did not install" >&2
    exit 2
  }
  args+=(--spark-home "$spark_home")
fi

echo "machine: $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p'), $(free -g | awk '/^Mem:/ {print $2}') GiB; open files: $(ulimit -n)"
"$bin/kumiho-bench" "${args[@]}" "${extra[@]}" &
bench_pid=$!
wait "$bench_pid"
