//! The embedded registry: the ZooKeeper tree as files under `WORK/registry`, kept alive by file locks.
//!
//! For one host and no service to run. A registration is a file named like ZooKeeper's
//! ephemeral node (`serviceUri=…;sequence=NNNNNNNNNN`, data `host:port`) on which its holder
//! keeps an exclusive `flock`. The kernel drops the lock when the holder's process dies, so a
//! file whose lock can be taken is dead: whoever sees it next removes it. Because the holder
//! is the engine process itself, registrations outlive the gateway that launched the engine.
//!
//! The launch lock is an `flock` on a file at the lock path (never deleted, so two processes
//! can never lock two different inodes of one path). Counters (sequence numbers, POLLING) are
//! small files rewritten under an `flock`.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;
use tokio::time::Instant;

use super::{
    path_components, EngineEndpoint, EngineRegistration, Hold, LockGuard, RegistrationGuard,
    Registry, RegistryError, RegistryLocation, SEQUENCE_DIGITS,
};

/// How often a watch checks that a registration is still alive. A registration dies when its
/// holder's lock goes, and Linux offers no notification of that (inotify reports file changes,
/// not lock releases), so the watch polls. Half a second costs one `open`+`flock` per watched
/// engine and is far below the time a client needs to notice an engine is gone.
pub const WATCH_INTERVAL: Duration = Duration::from_millis(500);

/// Longest pause between two attempts to take a contended launch lock.
const LOCK_RETRY_MAX: Duration = Duration::from_millis(200);

/// Prefix of registration files still being written; listings skip them.
const NEW_FILE_PREFIX: &str = ".new-";
/// Age past which an unlocked draft is certainly abandoned.
const DRAFT_MAX_AGE: Duration = Duration::from_secs(60);
/// The counter of registration sequence numbers in each engine space.
const SEQUENCE_FILE: &str = ".sequence";
/// The POLLING counter's file in its directory.
const POLLING_FILE: &str = ".polling-counter";

/// A registry kept as files under a work directory (`WORK/registry/...`).
#[derive(Debug, Clone)]
pub struct EmbeddedRegistry {
    work_dir: PathBuf,
    root: PathBuf,
}

impl EmbeddedRegistry {
    /// Opens (creating if needed) the registry under `work_dir`.
    pub fn open(work_dir: impl Into<PathBuf>) -> Result<EmbeddedRegistry, RegistryError> {
        let work_dir = work_dir.into();
        let root = work_dir.join("registry");
        fs::create_dir_all(&root).map_err(|source| RegistryError::Io {
            action: "create",
            path: root.display().to_string(),
            source,
        })?;
        Ok(EmbeddedRegistry { work_dir, root })
    }

    /// The file-system path of a registry path, after checking each component.
    fn fs_path(&self, path: &str) -> Result<PathBuf, RegistryError> {
        let mut fs_path = self.root.clone();
        fs_path.extend(path_components(path)?);
        Ok(fs_path)
    }
}

/// Runs blocking file work off the async workers, naming the action and path in errors.
async fn blocking<T: Send + 'static>(
    action: &'static str,
    path: &Path,
    work: impl FnOnce() -> io::Result<T> + Send + 'static,
) -> Result<T, RegistryError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(io::Error::other)
        .and_then(|done| done)
        .map_err(|source| io_error(action, path, source))
}

fn io_error(action: &'static str, path: &Path, source: io::Error) -> RegistryError {
    RegistryError::Io {
        action,
        path: path.display().to_string(),
        source,
    }
}

#[async_trait]
impl Registry for EmbeddedRegistry {
    fn location(&self) -> RegistryLocation {
        RegistryLocation::Embedded {
            work_dir: self.work_dir.clone(),
        }
    }

    /// Lists in place, on the calling worker: every session's launch asks this once, and the
    /// listing is a few metadata calls on a small local directory (microseconds), where a
    /// trip through the blocking pool costs a thread wake-up and a park each time. In a
    /// storm of 1,000 OpenSessions that trip was about 15 % of the gateway's CPU (`perf`,
    /// BENCHMARKS.md). The registry is local by design (one host); rarer work (registering,
    /// locking, counters) still goes to the blocking pool.
    async fn get_engines(&self, space: &str) -> Result<Vec<EngineRegistration>, RegistryError> {
        let dir = self.fs_path(space)?;
        list_live(&dir, space).map_err(|source| io_error("list", &dir, source))
    }

    /// Nothing to remove: a dead engine's file lost its lock with the process, and files
    /// without one are never listed.
    async fn remove_dead_engine(&self, _: &EngineRegistration) -> Result<(), RegistryError> {
        Ok(())
    }

    async fn children(&self, path: &str) -> Result<Vec<String>, RegistryError> {
        let dir = if path == "/" {
            self.root.clone()
        } else {
            self.fs_path(path)?
        };
        blocking("list", &dir.clone(), move || list_children(&dir)).await
    }

    async fn register_engine(
        &self,
        space: &str,
        endpoint: EngineEndpoint,
    ) -> Result<RegistrationGuard, RegistryError> {
        let dir = self.fs_path(space)?;
        let space = space.to_owned();
        let (registration, hold) = blocking("register", &dir.clone(), move || {
            register(&dir, &space, endpoint)
        })
        .await?;
        Ok(RegistrationGuard::new(registration, Box::new(hold)))
    }

    async fn lock(&self, path: &str, timeout: Duration) -> Result<LockGuard, RegistryError> {
        let file_path = self.fs_path(path)?;
        let deadline = Instant::now() + timeout;
        let opened = file_path.clone();
        let file = blocking("open lock", &file_path, move || open_creating(&opened)).await?;
        let mut pause = Duration::from_millis(5);
        loop {
            match fs4::FileExt::try_lock(&file) {
                Ok(()) => {
                    return Ok(LockGuard::new(
                        path.to_owned(),
                        Box::new(FileLockHold { file: Some(file) }),
                    ))
                }
                Err(fs4::TryLockError::WouldBlock) => {}
                Err(fs4::TryLockError::Error(source)) => {
                    return Err(RegistryError::Io {
                        action: "lock",
                        path: file_path.display().to_string(),
                        source,
                    })
                }
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(RegistryError::LockTimeout {
                    path: path.to_owned(),
                    timeout,
                });
            }
            // flock cannot wait with a timeout, and a blocked flock cannot be cancelled; so
            // retry with a growing pause, never past the deadline.
            tokio::time::sleep(pause.min(deadline - now)).await;
            pause = (pause * 2).min(LOCK_RETRY_MAX);
        }
    }

    async fn watch_engine(&self, registration: &EngineRegistration) -> Result<(), RegistryError> {
        let file = self
            .fs_path(&registration.space)?
            .join(registration.node_name());
        let mut ticks = tokio::time::interval(WATCH_INTERVAL);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let probed = file.clone();
            if !blocking("watch", &file, move || probe(&probed)).await? {
                return Ok(());
            }
        }
    }

    async fn next_polling_index(
        &self,
        path: &str,
        pool_size: usize,
    ) -> Result<usize, RegistryError> {
        let counter = self.fs_path(path)?.join(POLLING_FILE);
        let value = blocking("count", &counter.clone(), move || increment(&counter)).await?;
        let size = pool_size.max(1) as u64;
        // The remainder is below `size`, which came from a usize.
        Ok(usize::try_from(value % size).unwrap_or(0))
    }
}

/// The live registrations in `dir`, oldest first; dead ones are removed on the way.
fn list_live(dir: &Path, space: &str) -> io::Result<Vec<EngineRegistration>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error),
    };
    let mut live = Vec::new();
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.starts_with(NEW_FILE_PREFIX) {
            // A draft whose writer died before renaming it is removed like a dead registration;
            // a young one may be unlocked only because its writer is between create and lock.
            // (It may have been renamed into place meanwhile: then it has no age, and is kept.)
            let age = entry.metadata().and_then(|m| m.modified()).ok();
            if age.and_then(|modified| modified.elapsed().ok()) > Some(DRAFT_MAX_AGE) {
                probe(&entry.path())?;
            }
            continue;
        }
        if name.starts_with('.') {
            continue;
        }
        let Some(registration) = EngineRegistration::parse_node_name(space, name) else {
            continue;
        };
        if probe(&entry.path())? {
            live.push(registration);
        }
    }
    live.sort_by_key(|registration| registration.sequence);
    Ok(live)
}

/// The visible names in `dir`; none if it is missing or is a file (a lock, a registration).
fn list_children(dir: &Path) -> io::Result<Vec<String>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error)
            if matches!(
                error.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(Vec::new())
        }
        Err(error) => return Err(error),
    };
    let mut names = Vec::new();
    for entry in entries {
        let name = entry?.file_name();
        // A name that is not UTF-8 cannot be a registry path component.
        if let Some(name) = name.to_str().filter(|name| !name.starts_with('.')) {
            names.push(name.to_owned());
        }
    }
    names.sort();
    Ok(names)
}

/// Whether the registration file at `path` is held by a live process. A file nobody holds is
/// dead and is removed here, so listings stay short without a janitor.
fn probe(path: &Path) -> io::Result<bool> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(error) => return Err(error),
    };
    // A shared probe: two gateways probing at once must not mistake each other for the holder.
    match fs4::FileExt::try_lock_shared(&file) {
        Err(fs4::TryLockError::WouldBlock) => Ok(true),
        Err(fs4::TryLockError::Error(error)) => Err(error),
        Ok(()) => {
            match fs::remove_file(path) {
                Ok(()) => tracing::debug!(path = %path.display(), "removed dead registration"),
                Err(error) if error.kind() == io::ErrorKind::NotFound => {}
                Err(error) => return Err(error),
            }
            Ok(false)
        }
    }
}

/// Writes a locked registration file under a hidden name and renames it into place, so no
/// reader ever sees a registration that is not yet locked (and would think it dead).
fn register(
    dir: &Path,
    space: &str,
    endpoint: EngineEndpoint,
) -> io::Result<(EngineRegistration, RegistrationFileHold)> {
    fs::create_dir_all(dir)?;
    // Wraps where the name's digits end, as ZooKeeper's counter wraps at its limit.
    let sequence = increment(&dir.join(SEQUENCE_FILE))? % 10u64.pow(SEQUENCE_DIGITS as u32);
    let registration = EngineRegistration {
        space: space.to_owned(),
        host: endpoint.host,
        port: endpoint.port,
        version: endpoint.version,
        ref_id: endpoint.ref_id,
        sequence,
        pid: Some(std::process::id()),
    };
    let draft = dir.join(format!("{NEW_FILE_PREFIX}{}", uuid::Uuid::new_v4()));
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&draft)?;
    fs4::FileExt::try_lock(&file).map_err(io::Error::from)?;
    writeln!(file, "{}", registration.address())?;
    let path = dir.join(registration.node_name());
    if let Err(error) = fs::rename(&draft, &path) {
        let _ = fs::remove_file(&draft);
        return Err(error);
    }
    Ok((
        registration,
        RegistrationFileHold {
            file: Some(file),
            path,
        },
    ))
}

/// Opens a file for locking, creating it and its directories if needed.
fn open_creating(path: &Path) -> io::Result<File> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
}

/// Adds one to the counter in `path` under an exclusive lock and returns the value before.
/// A missing or unreadable counter starts again at 0: it only spreads load or orders nodes.
fn increment(path: &Path) -> io::Result<u64> {
    let mut file = open_creating(path)?;
    // Held for a read and a write of a few bytes: blocking here is brief.
    fs4::FileExt::lock(&file)?;
    let mut bytes = Vec::new();
    (&file).take(32).read_to_end(&mut bytes)?;
    let value: u64 = std::str::from_utf8(&bytes)
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(0);
    file.set_len(0)?;
    file.rewind()?;
    write!(file, "{}", value.wrapping_add(1))?;
    Ok(value)
}

/// The registering process's hold on its registration file.
struct RegistrationFileHold {
    file: Option<File>,
    path: PathBuf,
}

impl Hold for RegistrationFileHold {
    fn release(&mut self) -> Result<(), RegistryError> {
        // Remove before unlocking: the other order would let a reader find the file unlocked
        // and remove it too, which is harmless but noisier.
        let removed = fs::remove_file(&self.path);
        self.file = None;
        match removed {
            Ok(()) => Ok(()),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(source) => Err(RegistryError::Io {
                action: "deregister",
                path: self.path.display().to_string(),
                source,
            }),
        }
    }
}

/// A held `flock`; closing the file releases it.
struct FileLockHold {
    file: Option<File>,
}

impl Hold for FileLockHold {
    fn release(&mut self) -> Result<(), RegistryError> {
        self.file = None;
        Ok(())
    }
}
