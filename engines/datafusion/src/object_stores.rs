//! Object stores for table locations, made on first use from the location's URL scheme.
//!
//! DataFusion finds the store of a location by its `scheme://host` in the runtime's registry
//! and knows only the local file system by itself. This registry adds the others the first
//! time a location names them: `s3://` and `s3a://` (Amazon S3 and compatible stores),
//! `gs://` (Google Cloud Storage), `az://`, `abfs(s)://`, `adl://`, `azure://` (Azure), and
//! `http(s)://` (a plain HTTP server, or WebDAV for directories). The same path serves tables
//! from the engine's config file and `CREATE EXTERNAL TABLE ... LOCATION`.
//!
//! Credentials and endpoints come from the engine's environment, under the names each cloud's
//! own tools read (`AWS_ACCESS_KEY_ID`, `AWS_ENDPOINT`, `AWS_ALLOW_HTTP`,
//! `GOOGLE_SERVICE_ACCOUNT`, `AZURE_STORAGE_ACCOUNT_NAME`, ...): a cluster config sets them
//! in its `env` section, which the launcher passes to the engine process.

use std::sync::Arc;

use datafusion::common::{exec_datafusion_err, Result as DfResult};
use datafusion::execution::object_store::{DefaultObjectStoreRegistry, ObjectStoreRegistry};
use object_store::{ObjectStore, ObjectStoreScheme};
use url::Url;

/// Environment variable prefixes whose variables configure object stores.
const STORE_ENV_PREFIXES: [&str; 4] = ["AWS_", "GOOGLE_", "AZURE_", "OBJECT_STORE_"];

/// DataFusion's registry, plus stores created on demand from the URL scheme.
#[derive(Debug, Default)]
pub struct SchemeObjectStoreRegistry {
    registered: DefaultObjectStoreRegistry,
}

impl SchemeObjectStoreRegistry {
    /// A registry that knows the local file system and creates the others on first use.
    pub fn new() -> Self {
        Self::default()
    }
}

impl ObjectStoreRegistry for SchemeObjectStoreRegistry {
    fn register_store(
        &self,
        url: &Url,
        store: Arc<dyn ObjectStore>,
    ) -> Option<Arc<dyn ObjectStore>> {
        self.registered.register_store(url, store)
    }

    fn deregister_store(&self, url: &Url) -> DfResult<Arc<dyn ObjectStore>> {
        self.registered.deregister_store(url)
    }

    fn get_store(&self, url: &Url) -> DfResult<Arc<dyn ObjectStore>> {
        if let Ok(store) = self.registered.get_store(url) {
            return Ok(store);
        }
        let store = store_for(url)?;
        // Two queries may race to create the same store; either copy serves, the last stays.
        self.registered.register_store(url, Arc::clone(&store));
        Ok(store)
    }
}

/// Builds the store that serves `url`'s `scheme://host`, configured from the environment.
fn store_for(url: &Url) -> DfResult<Arc<dyn ObjectStore>> {
    // Named by scheme and host only: a URL may carry credentials (`https://user:pw@host/`).
    let store_name = format!("{}://{}", url.scheme(), url.host_str().unwrap_or_default());
    let (scheme, _) = ObjectStoreScheme::parse(url).map_err(|_| {
        exec_datafusion_err!(
            "no object store for `{}://` locations: use a local path, file://, s3://, gs://, \
             az:// (abfs://, adl://) or http(s)://",
            url.scheme()
        )
    })?;
    let mut options: Vec<(String, String)> = std::env::vars()
        .filter(|(key, _)| {
            STORE_ENV_PREFIXES
                .iter()
                .any(|prefix| key.starts_with(prefix))
        })
        .collect();
    if scheme == ObjectStoreScheme::Http && url.scheme() == "http" {
        // The location itself says plain HTTP; the client refuses it unless told.
        options.push(("allow_http".to_owned(), "true".to_owned()));
    }
    let (store, _) = object_store::parse_url_opts(url, options).map_err(|e| {
        exec_datafusion_err!(
            "cannot open the {} store {store_name}: {e}; its settings come from the engine's \
             environment ({}), which a cluster config sets in its `env` section",
            scheme_name(&scheme),
            env_hint(&scheme)
        )
    })?;
    tracing::info!(store = %store_name, kind = scheme_name(&scheme), "object store opened");
    Ok(Arc::from(store))
}

/// The store's name as operators know it.
fn scheme_name(scheme: &ObjectStoreScheme) -> &'static str {
    match scheme {
        ObjectStoreScheme::Local => "local file system",
        ObjectStoreScheme::Memory => "in-memory",
        ObjectStoreScheme::AmazonS3 => "S3",
        ObjectStoreScheme::GoogleCloudStorage => "Google Cloud Storage",
        ObjectStoreScheme::MicrosoftAzure => "Azure storage",
        ObjectStoreScheme::Http => "HTTP",
        _ => "object",
    }
}

/// The environment variables an operator most likely has to set for `scheme`.
fn env_hint(scheme: &ObjectStoreScheme) -> &'static str {
    match scheme {
        ObjectStoreScheme::AmazonS3 => {
            "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ENDPOINT, AWS_ALLOW_HTTP"
        }
        ObjectStoreScheme::GoogleCloudStorage => {
            "GOOGLE_SERVICE_ACCOUNT or GOOGLE_APPLICATION_CREDENTIALS"
        }
        ObjectStoreScheme::MicrosoftAzure => {
            "AZURE_STORAGE_ACCOUNT_NAME, AZURE_STORAGE_ACCOUNT_KEY"
        }
        _ => "no variables needed",
    }
}

#[cfg(test)]
mod tests;
