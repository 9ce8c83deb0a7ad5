//! Test support for this crate and its dependents (`cfg(test)` or the `testing` feature).

pub mod zookeeper;

pub use zookeeper::ZooKeeperServer;
