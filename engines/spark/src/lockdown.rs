//! Closing the Spark Thrift Server to everyone but the gate.
//!
//! The Thrift Server listens on loopback, where any local user could reach it. So it runs with
//! `hive.server2.authentication=CUSTOM` and our [`AUTHENTICATOR_CLASS`]
//! (`engines/spark/java/`), which admits only the password in [`TOKEN_VARIABLE`]: a random
//! token made here for this engine alone (not the cluster's internal secret: SQL can read the
//! JVM's environment, e.g. with `reflect`). The gate presents it upstream.
//!
//! The class is embedded in this binary (compiled for Java 8 by `java/build.sh`) and written
//! under the work directory; the JVM finds it through `SPARK_DIST_CLASSPATH`, which Spark's
//! launcher puts on the driver's class path whatever the `--conf`s say, so the operator's
//! `spark.driver.extraClassPath` and `spark.jars` are left alone.
//!
//! The Hive settings are given in every place Spark reads them, ours last, so that neither the
//! operator's `--conf`s nor the session's `spark.*` keys nor a `hive-site.xml` override them:
//!
//! - the server's `HiveConf` is the Hadoop conf (`hive-site.xml`, only where unset;
//!   `spark.hadoop.*`; then `spark.hive.*`) over the JVM's system properties, so our
//!   `--conf spark.hadoop.K=V --conf spark.hive.K=V` come after every other `--conf` (the last
//!   of one key wins in spark-submit);
//! - Hive's `CustomAuthenticationProviderImpl` reads the class from a fresh `HiveConf`
//!   (`hive-site.xml`, then system properties), so `--hiveconf K=V` (a system property) too.
//!
//! At startup the supervisor checks that the token gets in and a wrong password does not
//! ([`check`]), and refuses to serve otherwise.

use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use kumiho_thrift::connection::{Connection, Framing};
use kumiho_thrift::error::WireError;
use kumiho_thrift::sasl;
use tokio::net::TcpStream;

/// Our `PasswdAuthenticationProvider`.
pub const AUTHENTICATOR_CLASS: &str = "org.kumiho.spark.GateAuthenticator";

/// Its class file, as `java/build.sh` compiles it.
const AUTHENTICATOR_BYTES: &[u8] =
    include_bytes!("../java/classes/org/kumiho/spark/GateAuthenticator.class");

/// The class file's path under the class directory.
const AUTHENTICATOR_FILE: &str = "org/kumiho/spark/GateAuthenticator.class";

/// The class directory under the work directory.
pub const CLASSES_DIR: &str = "auth-classes";

/// The environment variable that gives the Thrift Server's JVM the gate's token.
pub const TOKEN_VARIABLE: &str = "KUMIHO_SPARK_GATE_SECRET";

/// The environment variable of the cluster's internal secret, which Spark must not see.
pub const CLUSTER_SECRET_VARIABLE: &str = "KUMIHO_ENGINE_SECRET";

/// Where Spark's launcher takes extra class path entries from.
const DIST_CLASSPATH_VARIABLE: &str = "SPARK_DIST_CLASSPATH";

/// The user the startup check logs in as with the token.
const CHECK_USER: &str = "kumiho-spark-engine";

/// The user the startup check's wrong password is sent for: the Thrift Server logs the
/// refusal (an ERROR with a stack trace), and this name says it is expected.
const CHECK_WRONG_USER: &str = "kumiho-spark-engine startup check, refusal expected";

/// Largest SASL negotiation payload read from the Thrift Server.
const NEGOTIATION_LIMIT: usize = 64 * 1024;

/// The gate's password at the Thrift Server: random, made per engine.
#[derive(Clone, PartialEq, Eq)]
pub struct GateToken(String);

impl GateToken {
    /// A fresh token: 32 bytes from the kernel's random source, in hex.
    pub fn generate() -> io::Result<GateToken> {
        let mut bytes = [0u8; 32];
        std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
        Ok(GateToken(
            bytes.iter().map(|b| format!("{b:02x}")).collect(),
        ))
    }

    /// The token itself, for the SASL login and the JVM's environment only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

/// Never prints the token.
impl fmt::Debug for GateToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("GateToken(<redacted>)")
    }
}

/// What the Thrift Server is started with to admit only the gate.
#[derive(Debug)]
pub struct Lockdown {
    /// The gate's password.
    pub token: GateToken,
    /// The directory holding [`AUTHENTICATOR_CLASS`] (absolute).
    pub classes: PathBuf,
}

impl Lockdown {
    /// A fresh token and the class written under `work_dir` (replacing any earlier copy).
    pub fn install(work_dir: &Path) -> io::Result<Lockdown> {
        let classes = std::path::absolute(work_dir.join(CLASSES_DIR))?;
        let file = classes.join(AUTHENTICATOR_FILE);
        let parent = file
            .parent()
            .expect("the class file has a package directory");
        std::fs::create_dir_all(parent)?;
        // Written aside and renamed, so that a JVM never loads half a class.
        let partial = file.with_extension("class.partial");
        std::fs::write(&partial, AUTHENTICATOR_BYTES)?;
        std::fs::rename(&partial, &file)?;
        Ok(Lockdown {
            token: GateToken::generate()?,
            classes,
        })
    }

    /// The Hive settings that close the Thrift Server (binary transport: the gate speaks it).
    pub fn hive_settings() -> [(&'static str, &'static str); 3] {
        [
            ("hive.server2.authentication", "CUSTOM"),
            (
                "hive.server2.custom.authentication.class",
                AUTHENTICATOR_CLASS,
            ),
            ("hive.server2.transport.mode", "binary"),
        ]
    }

    /// spark-submit options, to come after every other `--conf` (before the primary resource).
    pub fn spark_submit_options() -> Vec<String> {
        let mut options = Vec::new();
        for (key, value) in Self::hive_settings() {
            for prefix in ["spark.hadoop.", "spark."] {
                options.push("--conf".to_owned());
                options.push(format!("{prefix}{key}={value}"));
            }
        }
        options
    }

    /// Thrift Server arguments (after the primary resource): the same, as system properties.
    pub fn hiveconf_args() -> Vec<String> {
        Self::hive_settings()
            .into_iter()
            .flat_map(|(key, value)| ["--hiveconf".to_owned(), format!("{key}={value}")])
            .collect()
    }

    /// Gives the JVM started by `command` the token and the class directory (appended to
    /// any `SPARK_DIST_CLASSPATH` inherited), and takes the cluster's secret away from it.
    pub fn configure(&self, command: &mut tokio::process::Command) {
        let mut classpath = std::env::var(DIST_CLASSPATH_VARIABLE).unwrap_or_default();
        if !classpath.is_empty() {
            classpath.push(':');
        }
        classpath.push_str(&self.classes.display().to_string());
        command
            .env(TOKEN_VARIABLE, self.token.expose())
            .env(DIST_CLASSPATH_VARIABLE, classpath)
            .env_remove(CLUSTER_SECRET_VARIABLE);
    }
}

/// Why the Thrift Server is not closed as it should be.
#[derive(Debug, thiserror::Error)]
pub enum LockdownError {
    #[error(
        "the Spark Thrift Server at {address} refused the gate's own login ({reason}); is \
         {AUTHENTICATOR_CLASS} on its class path (a spark-env.sh that sets \
         SPARK_DIST_CLASSPATH without keeping the value it had)?"
    )]
    TokenRefused { address: String, reason: String },
    #[error(
        "the Spark Thrift Server at {address} admitted a wrong password, so anyone on this host \
         could bypass the gate: its authentication is not kumiho's (hive.server2.authentication \
         was overridden); refusing to serve"
    )]
    WrongPasswordAdmitted { address: String },
    #[error("cannot check the Spark Thrift Server's authentication at {address}: {source}")]
    Io {
        address: String,
        #[source]
        source: io::Error,
    },
}

/// Checks the running Thrift Server at `address`: the token logs in, a wrong password does not.
pub async fn check(address: &str, token: &GateToken) -> Result<(), LockdownError> {
    let io_error = |source| LockdownError::Io {
        address: address.to_owned(),
        source,
    };
    match login(address, CHECK_USER, token.expose()).await {
        Ok(()) => {}
        Err(WireError::Io(e)) => return Err(io_error(e)),
        Err(e) => {
            return Err(LockdownError::TokenRefused {
                address: address.to_owned(),
                reason: e.to_string(),
            })
        }
    }
    let wrong = GateToken::generate().map_err(io_error)?;
    match login(address, CHECK_WRONG_USER, wrong.expose()).await {
        Ok(()) => Err(LockdownError::WrongPasswordAdmitted {
            address: address.to_owned(),
        }),
        // Refused, however it was said (a reset counts: nothing got in).
        Err(_) => Ok(()),
    }
}

/// One SASL PLAIN login, then a close (no Thrift session is opened).
async fn login(address: &str, user: &str, password: &str) -> Result<(), WireError> {
    let stream = TcpStream::connect(address).await?;
    let mut conn = Connection::new(stream, Framing::Raw, NEGOTIATION_LIMIT);
    sasl::start_plain(&mut conn, user, password).await
}

#[cfg(test)]
mod tests;
