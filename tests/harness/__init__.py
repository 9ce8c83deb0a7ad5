"""Harness for Kumiho's end-to-end tests: real processes, real clients.

- `engine`: build and run `kumiho-engine`, wait for it to listen, read its RSS and CPU time.
- `beeline`: run pyspark's beeline (Hive JDBC 2.3) and parse what it prints.
- `hive`: PyHive connected over SASL, NOSASL or HTTP.
- `thrift_client` (on `tcli`, bindings generated from our IDL): a raw HiveServer2 client
  for what PyHive hides (raw handles, fetch sizes, unknown methods).
- `wire`: hand-made bytes on raw sockets, for malformed and hostile input.
- `values`: one comparable form for values printed by beeline or returned by PyHive.
- `tpch`: the TPC-H queries and DuckDB as the independent oracle for their answers.
"""
