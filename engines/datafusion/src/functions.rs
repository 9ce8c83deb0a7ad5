//! Hive functions that DataFusion lacks and that clients call on their own: every session
//! has them.
//!
//! - `current_database()` (alias `current_schema()`, as in Spark): the database unqualified
//!   names resolve in, which `USE` changes; Hive scripts and SQL editors ask it to know
//!   where a session is.
//! - `current_user()` (alias `logged_in_user()`): the user the session runs as, as the
//!   gateway passed it (the proxy user when one was allowed), read from [`SessionUser`].

use std::any::Any;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::{ConfigEntry, ConfigExtension, ExtensionOptions};
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::prelude::SessionContext;

/// Registers the functions in a session's context.
pub fn register(ctx: &SessionContext) {
    ctx.register_udf(ScalarUDF::from(CurrentDatabase::new()));
    ctx.register_udf(ScalarUDF::from(CurrentUser::new()));
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

/// `current_user()`: the session's user ([`SessionUser`]).
#[derive(Debug, PartialEq, Eq, Hash)]
struct CurrentUser {
    signature: Signature,
    aliases: Vec<String>,
}

impl CurrentUser {
    fn new() -> Self {
        Self {
            // Volatile, as current_database(): read from the settings of the run.
            signature: Signature::nullary(Volatility::Volatile),
            aliases: vec!["logged_in_user".to_owned()],
        }
    }
}

impl ScalarUDFImpl for CurrentUser {
    fn name(&self) -> &str {
        "current_user"
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
        let user = args
            .config_options
            .extensions
            .get::<SessionUser>()
            .map(|user| user.name.clone());
        Ok(ColumnarValue::Scalar(ScalarValue::Utf8(user)))
    }
}

/// `current_database()`: the session's default schema, read from the settings the query
/// runs with.
#[derive(Debug, PartialEq, Eq, Hash)]
struct CurrentDatabase {
    signature: Signature,
    aliases: Vec<String>,
}

impl CurrentDatabase {
    fn new() -> Self {
        Self {
            // Volatile, so that the planner does not fold it into a constant with settings
            // other than the session's; it is read when the query runs.
            signature: Signature::nullary(Volatility::Volatile),
            aliases: vec!["current_schema".to_owned()],
        }
    }
}

impl ScalarUDFImpl for CurrentDatabase {
    fn name(&self) -> &str {
        "current_database"
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
        let database = args.config_options.catalog.default_schema.clone();
        Ok(ColumnarValue::Scalar(ScalarValue::Utf8(Some(database))))
    }
}
