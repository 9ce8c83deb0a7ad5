//! Kumiho's gateway: HiveServer2 frontends, sessions routed to shared engines, proxying.
//!
//! ```text
//!  client ──► frontend (kumiho_thrift::server: binary SASL/NOSASL, HTTP)
//!               │ decoded RPC + CallContext
//!               ▼
//!             proxy::Gateway (CliService) ── OpenSession ──► session::SessionManager
//!               │ resolve → wait → rewrite → forward → record      │ routing::Router
//!               │                                                 │   cluster + user + share level
//!               │                                                 ▼   → EngineRef
//!               │                                 operation::launch_engine (LaunchEngine)
//!               │                                   get_or_create in the cluster's registry,
//!               │                                   then OpenSession on the engine
//!               ▼                                                 │
//!             engine connection (kumiho_thrift::client) ◄─────────┘
//!               │ replies forwarded as bytes
//!               ▼
//!             kumiho-engine (or Spark Thrift Server)
//!
//!  REST client ──► rest (/api/v1, Basic auth) ──► batch::BatchManager
//!                    route → authenticate →          cluster + user (routing's rules)
//!                    call → JSON or error            → spark-submit (launcher's command),
//!                        │                             its log, its record in WORK/batches
//!                        ├─ sessions, operations ──► proxy::Gateway (the same CliService,
//!                        │  (rest::sessions)           in-process): Thrift reply → JSON
//!                        └─ admin (super-users) ──► session::SessionManager (every session,
//!                           (rest::admin)              operation), registries (engines)
//! ```
//!
//! - [`config`]: the gateway's own settings (YAML file and flags).
//! - [`cluster`]: cluster configs, one file per cluster, watched and reloaded.
//! - [`routing`]: session settings → cluster, user, [`kumiho_engine_launcher::EngineRef`].
//! - [`registries`]: each cluster's engine registry (embedded, ZooKeeper), opened once, and
//!   its engine secret.
//! - [`discovery`]: the gateway's registration for Hive JDBC's ZooKeeper discovery.
//! - [`session`]: gateway sessions, their launches and engine connections.
//! - [`engine_connect`]: connecting to an engine, over its local socket when it is on this host.
//! - [`operation`]: operations the gateway answers itself (LaunchEngine).
//! - [`proxy`]: the HiveServer2 service: forwarding as phases, one error handler.
//! - [`errors`]: the one error type and its mapping to `TStatus`.
//! - [`metrics`]: Prometheus metrics and their `/metrics` endpoint.
//! - [`rest`]: the REST API (`/api/v1`, Kyuubi's): ping, batches, sessions and
//!   statements as calls on the gateway's own HiveServer2 service, and the admin API
//!   (every user's sessions and operations, a cluster's engines) for super-users.
//! - [`batch`]: batch jobs submitted over REST: `spark-submit` processes, their logs and
//!   records.
//! - [`password_file`], [`ldap`]: authentication FILE and LDAP, sharing
//!   [`password_check`]'s memory of passwords that matched.
//! - [`kerberos`]: authentication KERBEROS: the service principal, its keytab, and MIT
//!   krb5's GSS-API accepting tickets (SASL GSSAPI, SPNEGO).
//! - [`server`]: services started in order and stopped in reverse.
//! - [`secret`], [`duration`]: the internal engine secret; durations as operators write them.
// Unsafe code only where allowed by name: the FFI to MIT krb5 (`kerberos::gssapi`).
#![deny(unsafe_code)]

pub mod batch;
pub mod cluster;
pub mod config;
pub mod discovery;
pub mod duration;
pub mod engine_connect;
pub mod errors;
pub mod kerberos;
pub mod ldap;
pub mod metrics;
pub mod operation;
pub mod password_check;
pub mod password_file;
pub mod proxy;
pub mod registries;
pub mod rest;
pub mod routing;
pub mod secret;
pub mod server;
pub mod session;
