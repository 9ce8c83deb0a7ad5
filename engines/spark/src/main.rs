//! `kumiho-spark-engine`: the process that runs one Spark Thrift Server for Kumiho.

fn main() {}
