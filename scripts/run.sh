#!/usr/bin/env bash
# Runs Kumiho on its embedded defaults so that beeline can connect:
#   scripts/run.sh [extra flags for the server]
# Until the gateway (`kumiho`, crate kumiho-server) serves sessions, this runs the DataFusion
# engine directly: HiveServer2 binary protocol on 10009, HTTP on 10010 (/cliservice), demo
# TPC-H data (scale 0.1) in database `tpch`. KUMIHO_RUN=gateway runs the gateway instead.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${KUMIHO_RUN:-engine}" = gateway ]; then
  exec cargo run --release -p kumiho-server --bin kumiho -- "$@"
fi
exec cargo run --release -p kumiho-engine -- --port 10009 --http-port 10010 "$@"
