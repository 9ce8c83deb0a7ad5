#!/usr/bin/env bash
# Runs Kumiho on its embedded defaults so that beeline can connect:
#   scripts/run.sh [extra flags for kumiho, e.g. --binary-port 10009 --http-port 10010]
# Builds (release) the gateway `kumiho` and the engines `kumiho-engine` (DataFusion) and
# `kumiho-spark-engine` (Spark, used when a session asks for SPARK_SQL), then runs
# the gateway from the repository root: HiveServer2 binary protocol on 10009 (SASL PLAIN and
# NOSASL), HTTP on 10010 (/cliservice), the clusters in cluster-configs/ with the embedded
# registry under work/, and engines launched on demand with demo TPC-H data in `tpch`.
# KUMIHO_RUN=engine runs the engine alone on the same ports instead.
set -euo pipefail
cd "$(dirname "$0")/.."
# The same build as scripts/bench.sh: one release build of the workspace serves both.
cargo build --release --workspace --bins
target_dir=$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
if [ "${KUMIHO_RUN:-gateway}" = engine ]; then
  exec "$target_dir/release/kumiho-engine" --port 10009 --http-port 10010 "$@"
fi
exec "$target_dir/release/kumiho" "$@"
