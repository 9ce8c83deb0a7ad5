//! Kumiho's gateway: HiveServer2 frontends, sessions routed to shared engines, proxying.
#![forbid(unsafe_code)]

pub mod cluster;
pub mod config;
pub mod duration;
pub mod errors;
pub mod operation;
pub mod proxy;
pub mod registries;
pub mod routing;
pub mod secret;
pub mod server;
pub mod session;
