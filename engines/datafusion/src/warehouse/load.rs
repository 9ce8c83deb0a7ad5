//! `LOAD DATA [LOCAL] INPATH 'path' [OVERWRITE] INTO TABLE t [PARTITION (...)]`: files put
//! into a table as they are, as Hive puts them.
//!
//! - LOCAL: the path (a file, or a directory's files) is on the engine's host; the files
//!   are copied. Without LOCAL it is in the warehouse's filesystem (a path there, or a URL
//!   of a store the engine reaches, `s3://b/landing/`) and the files are moved, as Hive
//!   moves them: one rename each on the same store. A wildcard in the path's last part
//!   (`*.csv`) picks a directory's files, as Hadoop's globs do.
//! - Files are not converted, as Hive does not convert them: a Parquet or ORC table takes
//!   only files of its format (their magic bytes are read first, and one that is not is
//!   refused before any file is touched); a text table takes any.
//! - A name already in the directory gets Hive's `_copy_N` before its extension
//!   (`sales_copy_1.csv`); OVERWRITE replaces the table's (or partition's) files: the new
//!   ones are moved in, then the old ones deleted, as INSERT OVERWRITE does.
//! - Files copied, from the engine's host or from another store, are written to the table's
//!   hidden staging directory first and moved in whole, so a reader never sees part of one.
//! - The engine reads a Parquet, CSV or JSON table's files by their extension: a file
//!   whose name lacks it gets it appended (`sales.txt` into a TEXTFILE table is
//!   `sales.txt.csv`), or it would not be read.

use std::collections::BTreeSet;

use datafusion::error::{DataFusionError, Result};
use object_store::path::Path;
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt, PutPayload};
use url::Url;

use super::catalog::file_extension;
use super::commands::{data_objects, static_prefix};
use super::ddl::TableName;
use super::meta::{StoredFormat, TableMeta};
use super::properties::{partition_dir, partition_path};
use super::{child_dir, local_dir, object_path, Warehouse};

/// What a LOAD DATA statement asks for.
pub struct LoadRequest<'a> {
    pub local: bool,
    pub path: &'a str,
    pub overwrite: bool,
    pub partition: &'a [(String, String)],
}

/// Loads the files; returns lines for the operation log.
pub async fn load(
    warehouse: &Warehouse,
    name: &TableName,
    meta: &TableMeta,
    request: &LoadRequest<'_>,
) -> Result<Vec<String>> {
    meta.table_only(name, "LOAD DATA loads files into a table")?;
    let prefix = static_prefix(meta, request.partition, name)?;
    if prefix.len() != meta.partition_columns.len() {
        return Err(DataFusionError::Plan(format!(
            "{name} is partitioned by {}: LOAD DATA ... INTO TABLE {name} PARTITION ({}) names \
             the partition its files go into",
            partition_names(meta),
            meta.partition_columns
                .iter()
                .map(|c| format!("{}='...'", c.name))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    // A wildcard in the last part (`/landing/2024-01-01/*.csv`) picks a directory's files.
    let (directory, pattern) = match request.path.rsplit_once('/') {
        Some((directory, last)) if last.contains(['*', '?']) => (directory, Some(last)),
        _ => (request.path, None),
    };
    let source = source_url(warehouse, request.local, directory)?;
    let source_store = warehouse.store(&source)?;
    let files = source_files(source_store.as_ref(), &source, pattern, request).await?;
    let format = meta.format.unwrap_or(StoredFormat::Parquet);
    for file in &files {
        check_format(source_store.as_ref(), file, format, name).await?;
    }

    let location = warehouse.data_location(&name.database, &name.table, meta)?;
    let target = partition_dir(&location, &prefix);
    if let Some(dir) = local_dir(&target) {
        std::fs::create_dir_all(&dir).map_err(|e| {
            DataFusionError::Execution(format!("cannot create {}: {e}", dir.display()))
        })?;
    }
    let old = data_objects(warehouse, &target).await?;
    let target_path = object_path(&target);
    // Names directly in the target directory, which a loaded file must not take (OVERWRITE
    // replaces them all, so none is taken then).
    let mut taken: BTreeSet<String> = if request.overwrite {
        BTreeSet::new()
    } else {
        old.iter()
            .filter(|f| {
                f.location
                    .prefix_match(&target_path)
                    .is_some_and(|p| p.count() == 1)
            })
            .filter_map(|f| f.location.filename().map(str::to_owned))
            .collect()
    };
    let extension = file_extension(meta);
    let mut moves = Vec::new();
    for file in &files {
        let written = file.location.filename().unwrap_or("data");
        let wanted = if extension.is_empty() || written.ends_with(&extension) {
            written.to_owned()
        } else {
            format!("{written}{extension}")
        };
        let free = free_name(&wanted, &taken);
        taken.insert(free.clone());
        moves.push((
            file.location.clone(),
            target_path.clone().join(free.as_str()),
        ));
    }

    let moved_in_place = !request.local && same_store(&source, &target);
    if moved_in_place {
        for (from, to) in &moves {
            warehouse.move_file(&target, from, to).await?;
        }
    } else {
        let staging = child_dir(&location, &format!(".staging-{}", uuid::Uuid::new_v4()));
        let result = copy_in(warehouse, source_store.as_ref(), &source, &staging, &moves).await;
        if let Err(e) = warehouse.delete_dir(&staging).await {
            tracing::warn!(error = %e, staging = %staging, "cannot remove a staging directory");
        }
        result?;
        if !request.local {
            // Moved from another store: a copy, then the source's delete.
            for (from, _) in &moves {
                match source_store.delete(from).await {
                    Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                    Err(e) => return Err(DataFusionError::ObjectStore(Box::new(e))),
                }
            }
        }
    }
    if request.overwrite {
        let written: BTreeSet<&Path> = moves.iter().map(|(_, to)| to).collect();
        let replaced = old
            .into_iter()
            .map(|f| f.location)
            .filter(|f| !written.contains(f));
        warehouse.delete_files(&target, replaced).await?;
    }

    let partition_text = if prefix.is_empty() {
        String::new()
    } else {
        format!(
            " partition ({})",
            prefix
                .iter()
                .map(|(c, v)| format!("{c}={v}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let mut notes = vec![format!(
        "Loading data to table {name}{partition_text} from {source}"
    )];
    let verb = if request.local { "copied" } else { "moved" };
    for (from, to) in &moves {
        notes.push(format!(
            "  {} {verb} to {}",
            from.filename().unwrap_or_default(),
            match partition_path(&prefix).as_str() {
                "" => to.filename().unwrap_or_default().to_owned(),
                dir => format!("{dir}/{}", to.filename().unwrap_or_default()),
            }
        ));
    }
    Ok(notes)
}

fn partition_names(meta: &TableMeta) -> String {
    meta.partition_columns
        .iter()
        .map(|c| c.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Where the files are: LOCAL, a path on the engine's host; otherwise a URL, or a path in
/// the warehouse's filesystem (its root's store).
fn source_url(warehouse: &Warehouse, local: bool, path: &str) -> Result<Url> {
    let unusable = |e: String| DataFusionError::Plan(format!("INPATH '{path}': {e}"));
    if path.contains("://") {
        let url = Url::parse(path).map_err(|e| unusable(e.to_string()))?;
        if local && url.scheme() != "file" {
            return Err(unusable(
                "LOCAL INPATH is a path on the engine's host; without LOCAL, a URL names a \
                 store's files"
                    .to_owned(),
            ));
        }
        return Ok(url);
    }
    let root = warehouse.root();
    if local || root.scheme() == "file" {
        let relative = std::path::Path::new(path);
        let absolute = if relative.is_absolute() {
            relative.to_path_buf()
        } else {
            std::env::current_dir()
                .map_err(|e| unusable(e.to_string()))?
                .join(relative)
        };
        return Url::from_file_path(&absolute)
            .map_err(|()| unusable("not a usable file path".to_owned()));
    }
    if !path.starts_with('/') {
        return Err(unusable(format!(
            "a path without LOCAL is in the warehouse's filesystem ({}) and must start with /, \
             or be a URL",
            root
        )));
    }
    let mut url = root.clone();
    url.set_path(path);
    Ok(url)
}

/// The file at `source`, or the files directly in the directory `source` (hidden ones
/// left out), those whose names match `pattern` when there is one; the path must exist and
/// hold a file.
async fn source_files(
    store: &dyn ObjectStore,
    source: &Url,
    pattern: Option<&str>,
    request: &LoadRequest<'_>,
) -> Result<Vec<ObjectMeta>> {
    let path = object_path(source);
    let place = if request.local {
        "on the engine's host"
    } else {
        "in the warehouse's filesystem"
    };
    let missing = || {
        DataFusionError::Plan(format!(
            "LOAD DATA: '{}' does not exist {place}{}",
            request.path,
            if request.local {
                ""
            } else {
                "; LOAD DATA LOCAL INPATH reads the engine's host's files"
            }
        ))
    };
    if pattern.is_none() {
        match store.head(&path).await {
            Ok(file) => return Ok(vec![file]),
            Err(object_store::Error::NotFound { .. }) => {}
            Err(e) => return Err(DataFusionError::ObjectStore(Box::new(e))),
        }
    }
    let listing = match store.list_with_delimiter(Some(&path)).await {
        Ok(listing) => listing,
        Err(object_store::Error::NotFound { .. }) => return Err(missing()),
        Err(e) => return Err(DataFusionError::ObjectStore(Box::new(e))),
    };
    let hidden = |p: &Path| {
        p.filename()
            .is_some_and(|n| n.starts_with('.') || n.starts_with('_'))
    };
    if let Some(pattern) = pattern {
        let mut files: Vec<ObjectMeta> = listing
            .objects
            .into_iter()
            .filter(|o| !hidden(&o.location))
            .filter(|o| wildcard_matches(pattern, o.location.filename().unwrap_or_default()))
            .collect();
        if files.is_empty() {
            return Err(DataFusionError::Plan(format!(
                "LOAD DATA: '{}' matches no file {place}",
                request.path
            )));
        }
        files.sort_by(|a, b| a.location.cmp(&b.location));
        return Ok(files);
    }
    if let Some(directory) = listing.common_prefixes.iter().find(|d| !hidden(d)) {
        return Err(DataFusionError::Plan(format!(
            "LOAD DATA: '{}' holds a directory, {}; LOAD DATA takes a file or a directory of \
             files",
            request.path,
            directory.filename().unwrap_or_default()
        )));
    }
    let mut files: Vec<ObjectMeta> = listing
        .objects
        .into_iter()
        .filter(|o| !hidden(&o.location))
        .collect();
    if files.is_empty() {
        let exists =
            local_dir(source).is_some_and(|d| d.is_dir()) || !listing.common_prefixes.is_empty();
        if !exists {
            return Err(missing());
        }
        return Err(DataFusionError::Plan(format!(
            "LOAD DATA: the directory '{}' {place} holds no files to load",
            request.path
        )));
    }
    files.sort_by(|a, b| a.location.cmp(&b.location));
    Ok(files)
}

/// Refuses a file that is not of a Parquet or ORC table's format, by its magic bytes
/// (Parquet's `PAR1` at both ends, ORC's `ORC` at the start); text formats take any file.
async fn check_format(
    store: &dyn ObjectStore,
    file: &ObjectMeta,
    format: StoredFormat,
    name: &TableName,
) -> Result<()> {
    let size = file.size;
    let ok = match format {
        StoredFormat::Parquet => {
            size >= 12
                && read(store, &file.location, 0..4).await? == b"PAR1"
                && read(store, &file.location, size - 4..size).await? == b"PAR1"
        }
        StoredFormat::Orc => size >= 3 && read(store, &file.location, 0..3).await? == b"ORC",
        StoredFormat::Csv | StoredFormat::Textfile | StoredFormat::Json => true,
    };
    if ok {
        return Ok(());
    }
    Err(DataFusionError::Plan(format!(
        "LOAD DATA: {} is not a{} {} file, and {name} is {} table; files are loaded as they \
         are, not converted (as in Hive). Load it into a TEXTFILE or CSV table and INSERT \
         INTO {name} SELECT ... from that one",
        file.location,
        if format == StoredFormat::Orc { "n" } else { "" },
        format.name(),
        match format {
            StoredFormat::Orc => "an ORC",
            _ => "a PARQUET",
        }
    )))
}

async fn read(
    store: &dyn ObjectStore,
    path: &Path,
    range: std::ops::Range<u64>,
) -> Result<Vec<u8>> {
    store
        .get_range(path, range)
        .await
        .map(|bytes| bytes.to_vec())
        .map_err(|e| DataFusionError::ObjectStore(Box::new(e)))
}

/// Copies the files into `staging`, then moves each whole into its place.
async fn copy_in(
    warehouse: &Warehouse,
    source_store: &dyn ObjectStore,
    source: &Url,
    staging: &Url,
    moves: &[(Path, Path)],
) -> Result<()> {
    let staging_path = object_path(staging);
    let target_store = warehouse.store(staging)?;
    let both_local = source.scheme() == "file" && staging.scheme() == "file";
    for (from, to) in moves {
        let staged = staging_path.clone().join(to.filename().unwrap_or("data"));
        if both_local {
            // A local copy streams; neither file is held in memory.
            let from_file = std::path::Path::new("/").join(from.as_ref());
            let staged_file = std::path::Path::new("/").join(staged.as_ref());
            if let Some(parent) = staged_file.parent() {
                tokio::fs::create_dir_all(parent).await?;
            }
            tokio::fs::copy(&from_file, &staged_file)
                .await
                .map_err(|e| {
                    DataFusionError::Execution(format!(
                        "cannot copy {} to {}: {e}",
                        from_file.display(),
                        staged_file.display()
                    ))
                })?;
        } else {
            let bytes = source_store
                .get(from)
                .await
                .map_err(|e| DataFusionError::ObjectStore(Box::new(e)))?
                .bytes()
                .await
                .map_err(|e| DataFusionError::ObjectStore(Box::new(e)))?;
            target_store
                .put(&staged, PutPayload::from(bytes))
                .await
                .map_err(|e| DataFusionError::ObjectStore(Box::new(e)))?;
        }
        warehouse.move_file(staging, &staged, to).await?;
    }
    Ok(())
}

/// A file name matched as Hadoop's globs match it: `*` any characters, `?` one.
pub fn wildcard_matches(pattern: &str, name: &str) -> bool {
    crate::wildcards::FILE_GLOBS.matches(pattern, name)
}

/// Whether two URLs are in one store (one rename moves a file between them).
fn same_store(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme() && a.host_str() == b.host_str() && a.port() == b.port()
}

/// `name`, or Hive's `stem_copy_N.ext` for the first N that is free.
pub fn free_name(name: &str, taken: &BTreeSet<String>) -> String {
    if !taken.contains(name) {
        return name.to_owned();
    }
    let (stem, extension) = match name.rfind('.') {
        Some(dot) if dot > 0 => name.split_at(dot),
        _ => (name, ""),
    };
    (1..)
        .map(|n| format!("{stem}_copy_{n}{extension}"))
        .find(|candidate| !taken.contains(candidate))
        .expect("some copy number is free")
}

#[cfg(test)]
mod tests;
