use super::*;

fn url(text: &str) -> Url {
    Url::parse(text).unwrap()
}

#[test]
fn local_files_need_no_setup() {
    let registry = SchemeObjectStoreRegistry::new();
    let store = registry.get_store(&url("file:///")).unwrap();
    assert!(store.to_string().contains("LocalFileSystem"), "{store}");
}

#[test]
fn cloud_and_http_stores_are_made_on_first_use_and_kept() {
    let registry = SchemeObjectStoreRegistry::new();
    for (location, kind) in [
        ("s3://bucket/trips/", "AmazonS3"),
        ("gs://bucket/trips/", "GoogleCloudStorage"),
        ("http://127.0.0.1:8000/data/trips.csv", "HttpStore"),
    ] {
        let first = registry.get_store(&url(location)).unwrap();
        assert!(first.to_string().contains(kind), "{location}: {first}");
        let again = registry.get_store(&url(location)).unwrap();
        assert!(Arc::ptr_eq(&first, &again), "{location} made twice");
    }
}

#[test]
fn an_unknown_scheme_names_the_ones_that_work() {
    let registry = SchemeObjectStoreRegistry::new();
    let error = registry
        .get_store(&url("ftp://files.example.com/trips/"))
        .unwrap_err()
        .to_string();
    assert!(error.contains("`ftp://`"), "{error}");
    assert!(error.contains("s3://"), "{error}");
}

#[test]
fn a_store_that_cannot_be_configured_says_where_settings_come_from() {
    // An Azure store needs an account name, which no environment variable gives here.
    let registry = SchemeObjectStoreRegistry::new();
    let Err(error) = registry.get_store(&url("az://container/trips/")) else {
        // A machine whose environment configures Azure opens it: nothing to check then.
        return;
    };
    let error = error.to_string();
    assert!(error.contains("Azure"), "{error}");
    assert!(error.contains("AZURE_STORAGE_ACCOUNT_NAME"), "{error}");
}
