//! Normalising the configuration map of `OpenSession`, shared by the gateway and the engines.
//!
//! Hive JDBC sends the confs of a URL `jdbc:hive2://h:p/db;sess?confs#vars` as
//! `set:hiveconf:KEY`, its variables as `set:hivevar:KEY`, and the database as
//! `use:database`; PyHive and impyla send keys bare. Everyone downstream wants bare keys,
//! so this strips `set:` and then one of `hiveconf:`, `hivevar:`, `system:`, `metaconf:`.
//! `set:env:` would set the server's environment, which a client may never do.

use std::collections::BTreeMap;
use std::fmt;

/// The key under which Hive JDBC sends the database of its URL.
pub const USE_DATABASE_KEY: &str = "use:database";

/// Namespaces that may follow `set:` and are dropped from the key.
const NAMESPACES: [&str; 4] = ["hiveconf:", "hivevar:", "system:", "metaconf:"];

/// A session's configuration with the client's namespaces removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionConf {
    /// Settings by bare key (`kyuubi.engine.type`, `hive.server2.proxy.user`, ...). When the
    /// same bare key arrives in several namespaces, the last in key order wins.
    pub settings: BTreeMap<String, String>,
    /// The database the session should start in (`use:database`), when the client named one.
    pub database: Option<String>,
}

/// A configuration key the client may not send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionConfError {
    /// The key as the client sent it.
    pub key: String,
}

impl fmt::Display for SessionConfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "session configuration key '{}' is refused: a client may not set the server's \
             environment (set:env:); remove it from the connection URL",
            self.key
        )
    }
}

impl std::error::Error for SessionConfError {}

/// Strips the namespace prefixes off every key of an `OpenSession` configuration.
///
/// `set:env:*` is refused. An empty `use:database` counts as none (Hive JDBC sends
/// `default` when the URL has no database).
pub fn normalize(
    configuration: &BTreeMap<String, String>,
) -> Result<SessionConf, SessionConfError> {
    let mut conf = SessionConf::default();
    for (key, value) in configuration {
        if key == USE_DATABASE_KEY {
            let database = value.trim();
            if !database.is_empty() {
                conf.database = Some(database.to_owned());
            }
            continue;
        }
        let bare = match key.strip_prefix("set:") {
            Some(rest) if rest.starts_with("env:") => {
                return Err(SessionConfError { key: key.clone() })
            }
            Some(rest) => strip_namespace(rest),
            None => key.as_str(),
        };
        conf.settings.insert(bare.to_owned(), value.clone());
    }
    Ok(conf)
}

fn strip_namespace(key: &str) -> &str {
    NAMESPACES
        .iter()
        .find_map(|namespace| key.strip_prefix(namespace))
        .unwrap_or(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn strips_jdbc_namespaces() {
        let normalised = normalize(&conf(&[
            ("set:hiveconf:kyuubi.engine.type", "DATAFUSION"),
            ("set:hivevar:region", "emea"),
            ("set:system:user.tz", "UTC"),
            ("set:metaconf:metastore.x", "1"),
            ("hive.server2.proxy.user", "bob"),
            ("use:database", "sales"),
        ]))
        .unwrap();
        assert_eq!(
            normalised.settings,
            conf(&[
                ("kyuubi.engine.type", "DATAFUSION"),
                ("region", "emea"),
                ("user.tz", "UTC"),
                ("metastore.x", "1"),
                ("hive.server2.proxy.user", "bob"),
            ])
        );
        assert_eq!(normalised.database.as_deref(), Some("sales"));
    }

    #[test]
    fn keeps_unknown_namespaces_after_set() {
        let normalised = normalize(&conf(&[("set:other:k", "v")])).unwrap();
        assert_eq!(normalised.settings, conf(&[("other:k", "v")]));
        assert_eq!(normalised.database, None);
    }

    #[test]
    fn refuses_environment_keys() {
        let err = normalize(&conf(&[("set:env:PATH", "/tmp")])).unwrap_err();
        assert_eq!(err.key, "set:env:PATH");
        assert!(err.to_string().contains("set:env:"));
    }

    #[test]
    fn empty_database_means_none() {
        let normalised = normalize(&conf(&[("use:database", " ")])).unwrap();
        assert_eq!(normalised.database, None);
    }
}
