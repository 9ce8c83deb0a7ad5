"""Harness for Kumiho's end-to-end tests: real processes, real clients.

- `engine`: build and run `kumiho-engine`, wait for it to listen, read its RSS and CPU time.
- `beeline`: run pyspark's beeline (Hive JDBC 2.3) and parse what it prints.
- `thrift_client`: a HiveServer2 client on PyHive's TCLIService bindings, for what PyHive
  hides (raw handles, fetch sizes, unknown methods).
- `wire`: hand-made bytes on raw sockets, for malformed and hostile input.
- `tpch`: the TPC-H queries and DuckDB as the independent oracle for their answers.
"""
