//! `kumiho-bench`: drives HiveServer2 RPCs through kumiho-thrift's client and reports figures.

fn main() {}
