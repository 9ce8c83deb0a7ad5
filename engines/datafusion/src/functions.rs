//! Hive functions that DataFusion lacks and that clients call on their own: every session
//! has them.
//!
//! - `current_database()` (alias `current_schema()`, as in Spark): the database unqualified
//!   names resolve in, which `USE` changes; Hive scripts and SQL editors ask it to know
//!   where a session is.
//! - `current_catalog()`: the catalog unqualified names resolve in (`datafusion`, the one
//!   the metadata calls list).
//! - `current_user()` (alias `logged_in_user()`): the user the session runs as, as the
//!   gateway passed it (the proxy user when one was allowed), read from [`SessionUser`].
//! - `current_timezone()`: the session's time zone, as Spark's; `current_timestamp()`
//!   (`now()`, `localtimestamp()`): the query's start as the session's wall-clock time
//!   ([`crate::time_zones`]).

use std::any::Any;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::{ConfigEntry, ConfigExtension, ConfigOptions, ExtensionOptions};
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::prelude::SessionContext;

/// Registers the functions in a session's context.
pub fn register(ctx: &SessionContext) {
    ctx.register_udf(ScalarUDF::from(SessionValue::current_database()));
    ctx.register_udf(ScalarUDF::from(SessionValue::current_catalog()));
    ctx.register_udf(ScalarUDF::from(SessionValue::current_user()));
    ctx.register_udf(ScalarUDF::from(SessionValue::current_timezone()));
    ctx.register_udf(crate::time_zones::SessionNow::udf());
}

/// The session's user, carried in the settings its queries run with (each session's own
/// copy), so that `current_user()` answers the session's user even in a view planned
/// elsewhere. No `SET` reaches it: it lists no entry and refuses to be set.
#[derive(Debug, Clone, Default)]
pub struct SessionUser {
    pub name: String,
}

impl ExtensionOptions for SessionUser {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn cloned(&self) -> Box<dyn ExtensionOptions> {
        Box::new(self.clone())
    }

    fn set(&mut self, key: &str, _value: &str) -> Result<()> {
        Err(DataFusionError::Configuration(format!(
            "'{key}' cannot be set: the session's user is the one it was opened as"
        )))
    }

    fn entries(&self) -> Vec<ConfigEntry> {
        Vec::new()
    }
}

impl ConfigExtension for SessionUser {
    const PREFIX: &'static str = "kumiho_session_user";
}

/// Implements `Debug`, `PartialEq`, `Eq` and `Hash` of a function type by its `name`: two
/// functions of one name are the same function, as DataFusion's registry has it (and the
/// function pointers such types hold cannot be compared meaningfully).
macro_rules! identified_by_name {
    ($($function:ty),+) => {$(
        impl std::fmt::Debug for $function {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($function)).field("name", &self.name).finish()
            }
        }

        impl PartialEq for $function {
            fn eq(&self, other: &Self) -> bool {
                self.name == other.name
            }
        }

        impl Eq for $function {}

        impl std::hash::Hash for $function {
            fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
                std::hash::Hash::hash(&self.name, state);
            }
        }
    )+};
}
pub(crate) use identified_by_name;

/// A function of no arguments whose value is one of the session's settings, read when the
/// query runs: `current_database()`, `current_catalog()`, `current_user()` and
/// `current_timezone()`.
struct SessionValue {
    name: &'static str,
    aliases: Vec<String>,
    signature: Signature,
    /// The value, from the settings the query runs with.
    read: fn(&ConfigOptions) -> Option<String>,
}

impl SessionValue {
    fn new(
        name: &'static str,
        aliases: &[&str],
        read: fn(&ConfigOptions) -> Option<String>,
    ) -> Self {
        Self {
            name,
            aliases: aliases.iter().map(|alias| (*alias).to_owned()).collect(),
            // Volatile, so that the planner does not fold it into a constant with settings
            // other than the session's; it is read when the query runs.
            signature: Signature::nullary(Volatility::Volatile),
            read,
        }
    }

    /// `current_database()`: the session's default schema.
    fn current_database() -> Self {
        Self::new("current_database", &["current_schema"], |options| {
            Some(options.catalog.default_schema.clone())
        })
    }

    /// `current_catalog()`: the catalog unqualified names are looked up in.
    fn current_catalog() -> Self {
        Self::new("current_catalog", &[], |options| {
            Some(options.catalog.default_catalog.clone())
        })
    }

    /// `current_timezone()`: the session's zone as it was written (`PST`), else a region or
    /// an offset, UTC when none was set ([`crate::time_zones::zone_shown`]).
    fn current_timezone() -> Self {
        Self::new("current_timezone", &[], |options| {
            Some(crate::time_zones::zone_shown(options))
        })
    }

    /// `current_user()`: the session's user ([`SessionUser`]).
    fn current_user() -> Self {
        Self::new("current_user", &["logged_in_user"], |options| {
            options
                .extensions
                .get::<SessionUser>()
                .map(|user| user.name.clone())
        })
    }
}

identified_by_name!(SessionValue);

impl ScalarUDFImpl for SessionValue {
    fn name(&self) -> &str {
        self.name
    }

    fn aliases(&self) -> &[String] {
        &self.aliases
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let value = (self.read)(&args.config_options);
        Ok(ColumnarValue::Scalar(ScalarValue::Utf8(value)))
    }
}
