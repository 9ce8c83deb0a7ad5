//! Test support for this crate and its dependents (`cfg(test)` or the `testing` feature).

pub mod partition;
pub mod zookeeper;

pub use partition::PartitionProxy;
pub use zookeeper::ZooKeeperServer;
