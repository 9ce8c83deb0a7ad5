#!/bin/sh
# Regenerates classes/org/kumiho/spark/GateAuthenticator.class, which kumiho-spark-engine
# embeds (include_bytes!) and writes under its --work-dir for the Spark Thrift Server's JVM.
#
# Compiled for Java 8 (every JVM Spark runs on) against the stub of Hive's interface in
# stub/, in the same javac run, so that no Spark is needed; only our class is kept.
# Needs a JDK's javac (17 made the committed class: see classes/javac-version). The Rust
# test `committed_class_is_what_the_source_compiles_to` checks the committed bytes.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
javac=${JAVAC:-javac}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$javac" --release 8 -g:none -encoding UTF-8 -d "$out" \
  "$here/stub/org/apache/hive/service/auth/PasswdAuthenticationProvider.java" \
  "$here/src/org/kumiho/spark/GateAuthenticator.java"
mkdir -p "$here/classes/org/kumiho/spark"
cp "$out/org/kumiho/spark/GateAuthenticator.class" "$here/classes/org/kumiho/spark/GateAuthenticator.class"
"$javac" -version 2>&1 | awk '{print $2}' | cut -d. -f1 > "$here/classes/javac-version"
echo "wrote $here/classes/org/kumiho/spark/GateAuthenticator.class (javac $(cat "$here/classes/javac-version"))"
