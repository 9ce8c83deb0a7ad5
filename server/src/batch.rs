//! Batch jobs submitted over REST (Kyuubi's `/api/v1/batches`): their lifecycle, logs and records.
//!
//! A batch is one `spark-submit` of a jar or a Python file on a cluster's Spark. It goes
//! PENDING (accepted) → RUNNING (its process started) → FINISHED (exit 0), ERROR (non-zero
//! exit, or no start; `appDiagnostic` holds the last meaningful lines of its output) or
//! CANCELED (DELETE: its process group is stopped). The batch's settings pick the cluster
//! (`kyuubi.session.cluster`), the effective user (`hive.server2.proxy.user`) and Spark
//! overrides (`spark.*`) under the same rules as a session's ([`crate::routing`]); the
//! command itself is built by the launcher ([`kumiho_engine_launcher::batch`]).
//!
//! Every record is kept in memory and written to `WORK/batches/{id}.json` on each change, so a
//! restarted gateway still lists its batches. `spark-submit` runs in `WORK/batches/{id}/`
//! with its output in `WORK/batches/{id}.log`; it outlives a gateway that stops, and a
//! restarted gateway follows it again by pid (checked against the process's start time), or
//! marks it ERROR when it is gone, since its outcome is then unknown.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kumiho_engine_launcher::batch::{self as launch, BatchLaunchError, BatchType, SparkBatchSpec};
use kumiho_engine_launcher::{is_alive, layered_env, stop_engine, EngineCommand};
use kumiho_thrift::session_conf;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::cluster::{ClusterRegistry, ClusterUnavailable};
use crate::errors::GatewayError;
use crate::routing::{apply_session_conf_rules, effective_user, keys, setting};
use crate::session::admission::check_deny_lists;

mod spark_log;

use spark_log::{append, diagnostic, read_lines, AppScan};
pub use spark_log::{find_app_id, find_app_url, meaningful_lines};

/// Where uploads are staged, under `WORK/batches` (hidden: not a batch).
const STAGING: &str = ".uploads";

/// An upload untouched for this long belongs to no request any more.
const STALE_UPLOAD: Duration = Duration::from_secs(3600);

/// How often a running batch's log is read for its application id.
const FOLLOW_POLL: Duration = Duration::from_millis(500);

/// How long a cancelled `spark-submit` gets after SIGTERM before SIGKILL.
const CANCEL_GRACE: Duration = Duration::from_secs(5);

/// The most log lines one `localLog` call returns.
pub const MAX_LOG_ROWS: usize = 10_000;

/// How often ended batches are checked for their age (Kyuubi's
/// `kyuubi.metadata.cleaner.interval`); more often when they are kept for less.
const CLEAN_INTERVAL: Duration = Duration::from_secs(30 * 60);

/// A batch id the client chooses (a UUID), so that a resubmission after a lost reply finds
/// the batch it already started instead of starting a second one (Kyuubi's key).
pub const BATCH_ID_KEY: &str = "kyuubi.batch.id";

/// In `batchInfo` of the answer to a submission whose `kyuubi.batch.id` was taken: the
/// batch shown is the earlier one, and nothing new was started (Kyuubi's key).
pub const DUPLICATED_KEY: &str = "kyuubi.batch.duplicated";

/// Kyuubi's batch states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum BatchState {
    Pending,
    Running,
    Finished,
    Error,
    Canceled,
}

impl BatchState {
    /// Every state, as `batchState` takes them.
    pub const ALL: [BatchState; 5] = [
        BatchState::Pending,
        BatchState::Running,
        BatchState::Finished,
        BatchState::Error,
        BatchState::Canceled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            BatchState::Pending => "PENDING",
            BatchState::Running => "RUNNING",
            BatchState::Finished => "FINISHED",
            BatchState::Error => "ERROR",
            BatchState::Canceled => "CANCELED",
        }
    }

    /// Whether the batch has ended.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            BatchState::Finished | BatchState::Error | BatchState::Canceled
        )
    }

    /// A state by name, any case.
    pub fn parse(text: &str) -> Result<BatchState, String> {
        BatchState::ALL
            .into_iter()
            .find(|state| state.as_str().eq_ignore_ascii_case(text.trim()))
            .ok_or_else(|| {
                format!(
                    "batchState `{text}` is unknown; the valid batch states are {}",
                    BatchState::ALL.map(BatchState::as_str).join(", ")
                )
            })
    }
}

/// Kyuubi's `BatchRequest`, as a client posts it.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchRequest {
    /// `SPARK` or `PYSPARK`, any case.
    pub batch_type: Option<String>,
    /// The jar or Python file.
    pub resource: Option<String>,
    /// The main class (SPARK).
    pub class_name: Option<String>,
    /// The application name.
    pub name: Option<String>,
    /// Settings: `kyuubi.session.cluster`, `hive.server2.proxy.user`, `spark.*`.
    #[serde(default)]
    pub conf: Option<BTreeMap<String, String>>,
    /// The application's arguments.
    #[serde(default)]
    pub args: Option<Vec<String>>,
}

impl BatchRequest {
    /// Parses a JSON body; the error names the problem and where.
    pub fn from_json(body: &[u8]) -> Result<BatchRequest, String> {
        serde_json::from_slice(body)
            .map_err(|e| format!("the body is not a valid BatchRequest (JSON): {e}"))
    }

    /// The batch type, resource and class, checked: what a batch needs before anything else.
    fn validate(&self) -> Result<(BatchType, String), GatewayError> {
        let batch_type = match self.batch_type.as_deref().map(str::trim) {
            None | Some("") => {
                return Err(GatewayError::BadRequest(
                    "`batchType` is required: SPARK or PYSPARK".to_owned(),
                ))
            }
            Some(text) => text.parse::<BatchType>().map_err(|_| {
                GatewayError::BadRequest(format!(
                    "batchType `{text}` is not supported; use SPARK or PYSPARK"
                ))
            })?,
        };
        let resource = match self.resource.as_deref().map(str::trim) {
            None | Some("") => {
                return Err(GatewayError::BadRequest(
                    "`resource` is required: the jar or Python file to run".to_owned(),
                ))
            }
            Some(resource) => resource.to_owned(),
        };
        if batch_type == BatchType::Spark
            && self
                .class_name
                .as_deref()
                .is_none_or(|class| class.trim().is_empty())
        {
            return Err(GatewayError::BadRequest(
                "`className` is required for a SPARK batch: the main class of its jar".to_owned(),
            ));
        }
        Ok((batch_type, resource))
    }
}

/// One batch as kept in memory and in `WORK/batches/{id}.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchRecord {
    #[serde(with = "uuid_text")]
    pub id: Uuid,
    /// The user the batch runs as (the proxy user when one was allowed).
    pub user: String,
    /// The user who authenticated.
    pub real_user: String,
    #[serde(with = "batch_type_name")]
    pub batch_type: BatchType,
    /// The name the client gave, if any.
    pub name: Option<String>,
    pub cluster: String,
    pub state: BatchState,
    /// Milliseconds since the epoch; 0 while unknown.
    pub create_time: u64,
    pub app_start_time: u64,
    pub end_time: u64,
    pub app_id: Option<String>,
    pub app_url: Option<String>,
    /// Kyuubi's application states: PENDING, RUNNING, FINISHED, FAILED, KILLED, UNKNOWN.
    pub app_state: Option<String>,
    pub app_diagnostic: Option<String>,
    /// The REST frontend that runs the batch (`host:port`).
    pub kyuubi_instance: String,
    /// The `spark-submit` process (leader of its process group) while it may be running.
    pub pid: Option<u32>,
    /// Its start time (clock ticks after boot, from `/proc`), so that a restarted gateway
    /// does not mistake another process with a reused pid for it.
    pub pid_start: Option<u64>,
}

/// Batch ids in records as their hyphenated text.
mod uuid_text {
    use serde::{Deserialize, Deserializer, Serializer};
    use uuid::Uuid;

    pub fn serialize<S: Serializer>(value: &Uuid, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&value.to_string())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Uuid, D::Error> {
        Uuid::parse_str(&String::deserialize(deserializer)?).map_err(serde::de::Error::custom)
    }
}

/// [`BatchType`] in records by its wire name (`SPARK`, `PYSPARK`).
mod batch_type_name {
    use kumiho_engine_launcher::batch::BatchType;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &BatchType, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(value.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<BatchType, D::Error> {
        String::deserialize(deserializer)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// Kyuubi's `Batch`, the JSON every batch call answers with.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchView {
    pub id: String,
    pub user: String,
    pub batch_type: String,
    pub name: Option<String>,
    pub app_start_time: u64,
    pub app_id: Option<String>,
    pub app_url: Option<String>,
    pub app_state: Option<String>,
    pub app_diagnostic: Option<String>,
    pub kyuubi_instance: String,
    pub state: BatchState,
    pub create_time: u64,
    pub end_time: u64,
    pub batch_info: BTreeMap<String, String>,
}

impl From<&BatchRecord> for BatchView {
    fn from(record: &BatchRecord) -> BatchView {
        BatchView {
            id: record.id.to_string(),
            user: record.user.clone(),
            batch_type: record.batch_type.as_str().to_owned(),
            name: record.name.clone(),
            app_start_time: record.app_start_time,
            app_id: record.app_id.clone(),
            app_url: record.app_url.clone(),
            app_state: record.app_state.clone(),
            app_diagnostic: record.app_diagnostic.clone(),
            kyuubi_instance: record.kyuubi_instance.clone(),
            state: record.state,
            create_time: record.create_time,
            end_time: record.end_time,
            batch_info: BTreeMap::new(),
        }
    }
}

/// Kyuubi's `GetBatchesResponse`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BatchList {
    pub from: usize,
    /// How many batches this page holds (as Kyuubi counts it).
    pub total: usize,
    pub batches: Vec<BatchView>,
}

/// Kyuubi's `OperationLog`: log lines of a batch.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LogRows {
    pub log_row_set: Vec<String>,
    pub row_count: usize,
}

/// Kyuubi's `CloseBatchResponse`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CloseBatch {
    pub success: bool,
    pub msg: String,
}

/// The outcome of a cancel request.
#[derive(Debug)]
pub enum Cancel {
    /// This gateway's answer.
    Answered(CloseBatch),
    /// The batch runs on the gateway of this REST address (`host:port`, its
    /// `kyuubiInstance`), which alone may stop it.
    RunsOn(String),
}

/// A resource uploaded with the request, staged in a directory of its own until the batch
/// is accepted (then that directory becomes the batch's working directory).
#[derive(Clone, Debug, PartialEq)]
pub struct StagedResource {
    /// The staging directory (under [`BatchManager::staging_dir`]).
    pub dir: PathBuf,
    /// The file's name in it.
    pub file_name: String,
}

/// The filters and page of `GET /batches`, as Kyuubi's query parameters name them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BatchFilter {
    pub batch_type: Option<BatchType>,
    pub state: Option<BatchState>,
    pub user: Option<String>,
    pub name: Option<String>,
    /// Batches created at or after this (ms since the epoch); 0: any.
    pub create_time: u64,
    /// Batches that ended at or before this (ms since the epoch); 0: any.
    pub end_time: u64,
    pub from: usize,
    pub size: usize,
    /// Newest first.
    pub desc: bool,
}

impl BatchFilter {
    /// Whether `record` passes the filters (not the page).
    pub fn matches(&self, record: &BatchRecord) -> bool {
        self.batch_type.is_none_or(|t| t == record.batch_type)
            && self.state.is_none_or(|s| s == record.state)
            && self.user.as_deref().is_none_or(|u| u == record.user)
            && self
                .name
                .as_deref()
                .is_none_or(|n| record.name.as_deref() == Some(n))
            && record.create_time >= self.create_time
            && (self.end_time == 0 || (record.end_time > 0 && record.end_time <= self.end_time))
    }

    /// The page of `records` (sorted by creation) that pass.
    pub fn page(&self, mut records: Vec<BatchRecord>) -> Vec<BatchRecord> {
        records.retain(|record| self.matches(record));
        records.sort_by_key(|record| (record.create_time, record.id));
        if self.desc {
            records.reverse();
        }
        records
            .into_iter()
            .skip(self.from)
            .take(self.size)
            .collect()
    }
}

/// A batch and the handles of its lifecycle.
struct Batch {
    /// The record; a std Mutex, never held across an await.
    record: Mutex<BatchRecord>,
    /// Fired by DELETE: the lifecycle stops the process and marks the batch CANCELED.
    cancel: CancellationToken,
    /// The batch's state, for whoever waits for it to end.
    state: watch::Sender<BatchState>,
}

/// The gateway's batches.
pub struct BatchManager {
    /// `WORK/batches`.
    dir: PathBuf,
    clusters: Arc<ClusterRegistry>,
    default_cluster: String,
    /// This REST frontend's `host:port`, the batches' `kyuubiInstance`.
    instance: String,
    batches: Mutex<BTreeMap<Uuid, Arc<Batch>>>,
    /// Where each batch's next `localLog` call with `from < 0` starts (Kyuubi reads on from
    /// where the last call stopped), for the batches held and those read from elsewhere.
    log_cursors: Mutex<HashMap<Uuid, usize>>,
    /// The last `createTime` given: each batch gets a later one, so that listing by creation
    /// keeps the order of submission.
    last_created: Mutex<u64>,
    /// Environment the gateway gives every batch under its cluster's `env` (its Kerberos
    /// ticket cache), set once at start ([`BatchManager::give_env`]).
    gateway_env: std::sync::OnceLock<BTreeMap<String, String>>,
}

/// Milliseconds since the epoch.
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl BatchManager {
    /// A manager keeping records under `work_dir/batches`; reads the records already there
    /// (see [`BatchManager::recover`]).
    pub fn open(
        work_dir: &Path,
        clusters: Arc<ClusterRegistry>,
        default_cluster: String,
        instance: String,
    ) -> Result<Arc<BatchManager>, String> {
        let dir = work_dir.join("batches");
        remove_stale_uploads(&dir.join(STAGING));
        std::fs::create_dir_all(&dir).map_err(|e| {
            format!(
                "cannot create the batch directory {}: {e}; check the work directory",
                dir.display()
            )
        })?;
        let manager = Arc::new(BatchManager {
            dir,
            clusters,
            default_cluster,
            instance,
            batches: Mutex::new(BTreeMap::new()),
            log_cursors: Mutex::new(HashMap::new()),
            last_created: Mutex::new(0),
            gateway_env: Default::default(),
        });
        manager.clone().recover();
        Ok(manager)
    }

    /// Loads the records of earlier runs. A batch that was PENDING or RUNNING is followed
    /// again while its `spark-submit` lives, and marked ERROR when it is gone.
    fn recover(self: Arc<Self>) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let mut recovered = 0;
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            let record: BatchRecord = match std::fs::read(&path)
                .map_err(|e| e.to_string())
                .and_then(|bytes| serde_json::from_slice(&bytes).map_err(|e| e.to_string()))
            {
                Ok(record) => record,
                Err(e) => {
                    tracing::warn!(file = %path.display(), error = %e, "skipping an unreadable batch record");
                    continue;
                }
            };
            recovered += 1;
            let state = record.state;
            let batch = self.insert(record);
            if state.is_terminal() {
                continue;
            }
            let (pid, start) = {
                let record = batch.record.lock().unwrap_or_else(|p| p.into_inner());
                (record.pid, record.pid_start)
            };
            match pid.filter(|pid| same_process(*pid, start)) {
                Some(pid) => {
                    tracing::info!(batch = %batch.id(), pid, "following a batch started before this gateway");
                    let manager = self.clone();
                    tokio::spawn(async move { manager.follow_orphan(batch, pid).await });
                }
                None => {
                    let diagnostic = format!(
                        "the gateway restarted while this batch was {}, and its spark-submit \
                         process is gone, so its outcome is unknown; see its localLog, or submit it again",
                        state.as_str()
                    );
                    self.end(&batch, BatchState::Error, "UNKNOWN", Some(diagnostic));
                }
            }
        }
        if recovered > 0 {
            tracing::info!(batches = recovered, dir = %self.dir.display(), "batch records loaded");
        }
    }

    fn insert(&self, record: BatchRecord) -> Arc<Batch> {
        let id = record.id;
        let batch = self.new_batch(record);
        self.lock().insert(id, batch.clone());
        batch
    }

    /// A batch for `record`, not yet in the map.
    fn new_batch(&self, record: BatchRecord) -> Arc<Batch> {
        {
            let mut last = self.last_created.lock().unwrap_or_else(|p| p.into_inner());
            *last = (*last).max(record.create_time);
        }
        Arc::new(Batch {
            state: watch::Sender::new(record.state),
            record: Mutex::new(record),
            cancel: CancellationToken::new(),
        })
    }

    /// Now, or just after the last batch's creation when that is not earlier.
    fn next_create_time(&self) -> u64 {
        let mut last = self.last_created.lock().unwrap_or_else(|p| p.into_inner());
        *last = now_ms().max(*last + 1);
        *last
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<Uuid, Arc<Batch>>> {
        self.batches.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn record_path(&self, id: Uuid) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }

    /// Where a request's upload is staged (`WORK/batches/.uploads`).
    pub fn staging_dir(&self) -> PathBuf {
        self.dir.join(STAGING)
    }

    /// `WORK/batches/{id}.log`: spark-submit's output.
    pub fn log_path(&self, id: Uuid) -> PathBuf {
        self.dir.join(format!("{id}.log"))
    }

    /// Submits a batch for `login_user`; `proxy_user` from the query, else from the conf.
    /// Answers at once (PENDING) with the process starting in the background. An uploaded
    /// resource (`staged`) becomes the batch's resource, in its working directory; it is
    /// removed when the batch is refused.
    pub fn submit(
        self: &Arc<Self>,
        login_user: &str,
        client: IpAddr,
        request: BatchRequest,
        proxy_user: Option<&str>,
        staged: Option<StagedResource>,
    ) -> Result<BatchView, GatewayError> {
        let submitted = self.submit_inner(login_user, client, request, proxy_user, staged.as_ref());
        // A started batch has moved its upload into its own directory: one still staged
        // belongs to a refused or duplicate submission.
        if let Some(staged) = &staged {
            if staged.dir.exists() {
                let _ = std::fs::remove_dir_all(&staged.dir);
            }
        }
        submitted
    }

    fn submit_inner(
        self: &Arc<Self>,
        login_user: &str,
        client: IpAddr,
        mut request: BatchRequest,
        proxy_user: Option<&str>,
        staged: Option<&StagedResource>,
    ) -> Result<BatchView, GatewayError> {
        if let Some(staged) = staged {
            request.resource = Some(staged.dir.join(&staged.file_name).display().to_string());
        }
        let (batch_type, resource) = request.validate()?;
        let conf = session_conf::normalize(&request.conf.clone().unwrap_or_default())
            .map_err(|e| GatewayError::BadRequest(e.to_string()))?;
        let cluster_name = setting(&conf.settings, keys::CLUSTER)
            .unwrap_or(&self.default_cluster)
            .to_owned();
        let cluster = self.clusters.get(&cluster_name).map_err(|e| match e {
            ClusterUnavailable::Unknown { .. } => GatewayError::BadRequest(e.to_string()),
            ClusterUnavailable::Broken { .. } => GatewayError::Config(e.to_string()),
        })?;
        let ruled = apply_session_conf_rules(&cluster, &conf)?;
        let proxy = proxy_user
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .or_else(|| {
                keys::PROXY_USER
                    .iter()
                    .find_map(|key| setting(&ruled.conf.settings, key))
            });
        let user = effective_user(&cluster, login_user, proxy)?;
        check_deny_lists(&cluster, login_user, &user, client)?;
        let id = match setting(&ruled.conf.settings, BATCH_ID_KEY) {
            None => Uuid::new_v4(),
            Some(text) => Uuid::parse_str(text.trim()).map_err(|_| {
                GatewayError::BadRequest(format!(
                    "{BATCH_ID_KEY}={text} must be a UUID (e.g. from `uuidgen`)"
                ))
            })?,
        };
        if let Some(earlier) = self.existing(id) {
            return self.duplicate(&earlier, login_user, proxy);
        }
        let name = request
            .name
            .as_deref()
            .map(str::trim)
            .filter(|n| !n.is_empty());
        let work_dir = self.dir.join(id.to_string());
        let resource = match staged {
            Some(staged) => work_dir.join(&staged.file_name).display().to_string(),
            None => resource,
        };
        let spec = SparkBatchSpec {
            batch_type,
            name: name.map_or_else(|| format!("kumiho-batch-{id}"), str::to_owned),
            class_name: request.class_name.clone(),
            resource,
            args: request.args.clone().unwrap_or_default(),
            settings: cluster
                .config
                .engine
                .spark
                .to_launch_settings(&ruled.conf.settings, Some(&user)),
            env: layered_env(
                self.gateway_env.get().unwrap_or(&BTreeMap::new()),
                &cluster.config.env,
            ),
            cluster: cluster.name.clone(),
            work_dir,
            log_path: self.log_path(id),
        };
        let command = launch::build_command(&spec).map_err(|e| match e {
            BatchLaunchError::BadSettings { .. } | BatchLaunchError::BadRequest(_) => {
                GatewayError::BadRequest(e.to_string())
            }
            other => GatewayError::Internal(other.to_string()),
        })?;
        let record = BatchRecord {
            id,
            user,
            real_user: login_user.to_owned(),
            batch_type,
            name: name.map(str::to_owned),
            cluster: cluster.name.clone(),
            state: BatchState::Pending,
            create_time: self.next_create_time(),
            app_start_time: 0,
            end_time: 0,
            app_id: None,
            app_url: None,
            app_state: None,
            app_diagnostic: None,
            kyuubi_instance: self.instance.clone(),
            pid: None,
            pid_start: None,
        };
        let view = BatchView::from(&record);
        let batch = match self.claim(record) {
            Claim::New(batch) => batch,
            Claim::Taken(earlier) => return self.duplicate(&earlier, login_user, proxy),
        };
        if let Some(staged) = staged {
            if let Err(e) = std::fs::rename(&staged.dir, &spec.work_dir) {
                let message = format!(
                    "cannot move the uploaded resource to {}: {e}",
                    spec.work_dir.display()
                );
                self.end(&batch, BatchState::Error, "FAILED", Some(message.clone()));
                return Err(GatewayError::Internal(message));
            }
        }
        tracing::info!(batch = %id, user = %view.user, cluster = %cluster.name, batch_type = %batch_type, "batch submitted");
        let manager = self.clone();
        tokio::spawn(async move { manager.run(batch, spec, command).await });
        Ok(view)
    }

    /// The batch `id` if it exists, here or written by a gateway sharing the work directory.
    fn existing(&self, id: Uuid) -> Option<BatchRecord> {
        let known = self.lock().get(&id).cloned();
        match known {
            Some(batch) => Some(
                batch
                    .record
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone(),
            ),
            None => self.read_record(id),
        }
    }

    /// Takes `record`'s id for a new batch, unless a batch has it already: checked in memory
    /// and, for gateways sharing the work directory, by linking the record's file into place,
    /// which fails when the file exists. Two submissions with one `kyuubi.batch.id` thus
    /// start one batch between them.
    fn claim(&self, record: BatchRecord) -> Claim {
        let mut batches = self.lock();
        if let Some(earlier) = batches.get(&record.id) {
            let earlier = earlier.record.lock().unwrap_or_else(|p| p.into_inner());
            return Claim::Taken(Box::new(earlier.clone()));
        }
        let path = self.record_path(record.id);
        // A name of this claim's own: claims racing from several gateways must not share it.
        let temp = self.dir.join(format!(
            ".{}.{}.json.new",
            record.id,
            Uuid::new_v4().simple()
        ));
        let linked = serde_json::to_vec_pretty(&record)
            .map_err(std::io::Error::other)
            .and_then(|bytes| std::fs::write(&temp, bytes))
            .and_then(|()| std::fs::hard_link(&temp, &path));
        let _ = std::fs::remove_file(&temp);
        match linked {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                if let Some(earlier) = self.read_record(record.id) {
                    return Claim::Taken(Box::new(earlier));
                }
                // A record being replaced (renamed over) by its gateway reads as missing for
                // an instant; an unreadable one is skipped at recovery too. Either way the
                // id is taken.
                tracing::warn!(file = %path.display(), "batch id taken by an unreadable record; writing this batch over it");
                self.persist(&record);
            }
            Err(e) => {
                tracing::warn!(file = %path.display(), error = %e, "cannot write a batch record");
            }
        }
        let id = record.id;
        let batch = self.new_batch(record);
        batches.insert(id, batch.clone());
        Claim::New(batch)
    }

    /// The answer to a submission whose batch id was taken: the earlier batch, marked as a
    /// duplicate, when the caller may see it.
    fn duplicate(
        &self,
        earlier: &BatchRecord,
        login_user: &str,
        proxy_user: Option<&str>,
    ) -> Result<BatchView, GatewayError> {
        if !self.may_see(earlier, login_user, proxy_user) {
            return Err(GatewayError::Refused(format!(
                "{BATCH_ID_KEY}={} is the id of another user's batch; choose another id",
                earlier.id
            )));
        }
        tracing::info!(batch = %earlier.id, "duplicate submission: answering with the batch already started");
        let mut view = BatchView::from(earlier);
        view.batch_info
            .insert(DUPLICATED_KEY.to_owned(), "true".to_owned());
        Ok(view)
    }

    /// Starts the batch's `spark-submit` and follows it to its end.
    async fn run(self: Arc<Self>, batch: Arc<Batch>, spec: SparkBatchSpec, command: EngineCommand) {
        if batch.cancel.is_cancelled() {
            self.end(&batch, BatchState::Canceled, "KILLED", Some(canceled()));
            return;
        }
        let header = format!("kumiho: starting {}\n", launch::redacted(&command));
        if let Err(e) = append(&spec.log_path, header.as_bytes()) {
            tracing::warn!(batch = %batch.id(), error = %e, "cannot write the batch log");
        }
        let mut child = match launch::spawn(&spec, &command) {
            Ok(child) => child,
            Err(e) => {
                tracing::warn!(batch = %batch.id(), error = %e, "batch did not start");
                let _ = append(&spec.log_path, format!("kumiho: {e}\n").as_bytes());
                self.end(&batch, BatchState::Error, "FAILED", Some(e.to_string()));
                return;
            }
        };
        // A spawned child has an id until it is waited for.
        let pid = child.id().unwrap_or_default();
        self.update(&batch, |record| {
            record.state = BatchState::Running;
            record.app_state = Some("RUNNING".to_owned());
            record.app_start_time = now_ms();
            record.pid = Some(pid);
            record.pid_start = process_start(pid);
        });
        tracing::info!(batch = %batch.id(), pid, "batch started: {}", launch::redacted(&command));
        let mut scan = AppScan::new(self.log_path(batch.id()));
        let mut ticks = tokio::time::interval(FOLLOW_POLL);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                status = child.wait() => {
                    self.scan(&batch, &mut scan);
                    match status {
                        Ok(status) if status.success() => {
                            self.end(&batch, BatchState::Finished, "FINISHED", None);
                        }
                        Ok(status) => {
                            let diagnostic = diagnostic(&self.log_path(batch.id()), &status.to_string());
                            self.end(&batch, BatchState::Error, "FAILED", Some(diagnostic));
                        }
                        Err(e) => {
                            self.end(&batch, BatchState::Error, "UNKNOWN", Some(format!("cannot wait for spark-submit: {e}")));
                        }
                    }
                    // Whatever it left behind in its group (a Python driver) goes with it.
                    signal_group(pid, Signal::SIGKILL);
                    return;
                }
                _ = batch.cancel.cancelled() => {
                    stop_child(pid, &mut child).await;
                    self.scan(&batch, &mut scan);
                    self.end(&batch, BatchState::Canceled, "KILLED", Some(canceled()));
                    return;
                }
                _ = ticks.tick() => self.scan(&batch, &mut scan),
            }
        }
    }

    /// Follows a `spark-submit` started by an earlier gateway: not our child, so only its
    /// existence can be watched; its exit status is unknown.
    async fn follow_orphan(self: Arc<Self>, batch: Arc<Batch>, pid: u32) {
        let start = batch
            .record
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pid_start;
        let mut scan = AppScan::new(self.log_path(batch.id()));
        let mut ticks = tokio::time::interval(FOLLOW_POLL);
        loop {
            tokio::select! {
                _ = batch.cancel.cancelled() => {
                    stop_engine(pid, CANCEL_GRACE).await;
                    self.end(&batch, BatchState::Canceled, "KILLED", Some(canceled()));
                    return;
                }
                _ = ticks.tick() => {
                    self.scan(&batch, &mut scan);
                    if !same_process(pid, start) {
                        // A gateway still running it (on the same work directory) may have
                        // written how it ended.
                        if let Some(ended) = self.read_record(batch.id()).filter(|r| r.state.is_terminal()) {
                            *batch.record.lock().unwrap_or_else(|p| p.into_inner()) = ended.clone();
                            batch.state.send_replace(ended.state);
                            return;
                        }
                        self.end(&batch, BatchState::Error, "UNKNOWN", Some(
                            "the gateway restarted while this batch ran, so its exit status is unknown; see its localLog".to_owned()));
                        return;
                    }
                }
            }
        }
    }

    /// The records in the work directory of batches this gateway does not hold: those other
    /// gateways sharing the directory submitted since this one started.
    fn records_elsewhere(&self) -> Vec<BatchRecord> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let names: Vec<Uuid> = entries
            .flatten()
            .filter_map(|entry| {
                let name = entry.file_name();
                let stem = name.to_str()?.strip_suffix(".json")?;
                Uuid::parse_str(stem).ok()
            })
            .collect();
        let held = self.lock();
        let unknown: Vec<Uuid> = names
            .into_iter()
            .filter(|id| !held.contains_key(id))
            .collect();
        drop(held);
        unknown
            .into_iter()
            .filter_map(|id| self.read_record(id))
            .collect()
    }

    /// The record of `id` as written in the work directory.
    fn read_record(&self, id: Uuid) -> Option<BatchRecord> {
        let bytes = std::fs::read(self.record_path(id)).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Reads new log lines for the application id and URL.
    fn scan(&self, batch: &Batch, scan: &mut AppScan) {
        let known = {
            let record = batch.record.lock().unwrap_or_else(|p| p.into_inner());
            record.app_id.is_some() && record.app_url.is_some()
        };
        if known {
            return;
        }
        let (app_id, app_url) = scan.read();
        if app_id.is_none() && app_url.is_none() {
            return;
        }
        self.update(batch, |record| {
            if record.app_id.is_none() {
                record.app_id = app_id;
            }
            if record.app_url.is_none() {
                record.app_url = app_url;
            }
        });
    }

    /// Ends a batch in `state` (once: a batch already ended keeps its end).
    fn end(&self, batch: &Batch, state: BatchState, app_state: &str, diagnostic: Option<String>) {
        let mut ended = false;
        self.update(batch, |record| {
            if record.state.is_terminal() {
                return;
            }
            ended = true;
            record.state = state;
            record.app_state = Some(app_state.to_owned());
            record.app_diagnostic = diagnostic;
            record.end_time = now_ms();
        });
        if ended {
            tracing::info!(batch = %batch.id(), state = state.as_str(), "batch ended");
        }
    }

    /// Changes a record, writes it out and tells waiters its state.
    fn update(&self, batch: &Batch, change: impl FnOnce(&mut BatchRecord)) {
        let record = {
            let mut record = batch.record.lock().unwrap_or_else(|p| p.into_inner());
            let before = record.clone();
            change(&mut record);
            if *record == before {
                return;
            }
            record.clone()
        };
        self.persist(&record);
        batch.state.send_replace(record.state);
    }

    /// Writes a record (a temporary file renamed over the old one, so a crash leaves one
    /// whole version). A failure is logged: the batch goes on.
    fn persist(&self, record: &BatchRecord) {
        let path = self.record_path(record.id);
        let temp = self.dir.join(format!(".{}.json.tmp", record.id));
        let written = serde_json::to_vec_pretty(record)
            .map_err(std::io::Error::other)
            .and_then(|bytes| std::fs::write(&temp, bytes))
            .and_then(|()| std::fs::rename(&temp, &path));
        if let Err(e) = written {
            tracing::warn!(file = %path.display(), error = %e, "cannot write a batch record");
        }
    }

    /// The batch `id` if `login_user` may see it (as `proxy_user` when allowed): one this
    /// gateway holds, or one another gateway sharing the work directory submitted since this
    /// one started, read from its record (which its gateway rewrites on every change).
    fn find(
        &self,
        id: &str,
        login_user: &str,
        proxy_user: Option<&str>,
    ) -> Result<Found, GatewayError> {
        let uuid = Uuid::parse_str(id).map_err(|_| {
            GatewayError::NotFound(format!("invalid batch id `{id}`: batch ids are UUIDs"))
        })?;
        let held = self.lock().get(&uuid).cloned();
        let (found, record) = match held {
            Some(batch) => {
                let record = batch
                    .record
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone();
                (Found::Here(batch), record)
            }
            None => {
                let record = self.read_record(uuid).ok_or_else(|| {
                    GatewayError::NotFound(format!("batch `{id}` is unknown to this gateway"))
                })?;
                (Found::Elsewhere(Box::new(record.clone())), record)
            }
        };
        if !self.may_see(&record, login_user, proxy_user) {
            return Err(GatewayError::Refused(format!(
                "batch `{id}` belongs to user `{}`; `{login_user}` may not see or cancel it",
                record.user
            )));
        }
        Ok(found)
    }

    /// `GET /admin/batch/count`: how many batches of the clusters `admin` is a super-user of,
    /// every user's, pass `filter` (its page aside); refused to a caller who administers no
    /// cluster.
    pub fn count(&self, filter: &BatchFilter, admin: &str) -> Result<usize, GatewayError> {
        let administers = |cluster: &str| {
            self.clusters
                .get(cluster)
                .is_ok_and(|c| c.config.is_super_user(admin))
        };
        if !self.clusters.names().iter().any(|name| administers(name)) {
            return Err(GatewayError::Refused(format!(
                "user `{admin}` may not count every user's batches: the admin API is for the super-users of a \
                 cluster (`super-users` in its file in {}); ask an operator",
                self.clusters.dir().display()
            )));
        }
        Ok(self
            .all_records()
            .iter()
            .filter(|record| administers(&record.cluster) && filter.matches(record))
            .count())
    }

    /// Whether `login_user` may see `record`: it runs as them, they submitted it, or they are
    /// a super user of its cluster acting as its user.
    fn may_see(&self, record: &BatchRecord, login_user: &str, proxy_user: Option<&str>) -> bool {
        if record.user == login_user || record.real_user == login_user {
            return true;
        }
        proxy_user.is_some_and(|proxy| {
            proxy == record.user
                && self
                    .clusters
                    .get(&record.cluster)
                    .is_ok_and(|cluster| cluster.config.is_super_user(login_user))
        })
    }

    /// The batch `id`.
    pub fn get(
        &self,
        id: &str,
        login_user: &str,
        proxy_user: Option<&str>,
    ) -> Result<BatchView, GatewayError> {
        Ok(match self.find(id, login_user, proxy_user)? {
            Found::Here(batch) => {
                BatchView::from(&*batch.record.lock().unwrap_or_else(|p| p.into_inner()))
            }
            Found::Elsewhere(record) => BatchView::from(&*record),
        })
    }

    /// The records of every batch: those this gateway holds and those other gateways sharing
    /// the work directory wrote.
    fn all_records(&self) -> Vec<BatchRecord> {
        let mut records: Vec<BatchRecord> = self
            .lock()
            .values()
            .map(|batch| {
                batch
                    .record
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone()
            })
            .collect();
        records.extend(self.records_elsewhere());
        records
    }

    /// The batches `login_user` may see that pass `filter`.
    pub fn list(
        &self,
        filter: &BatchFilter,
        login_user: &str,
        proxy_user: Option<&str>,
    ) -> BatchList {
        let mut records = self.all_records();
        records.retain(|record| self.may_see(record, login_user, proxy_user));
        let batches: Vec<BatchView> = filter.page(records).iter().map(BatchView::from).collect();
        BatchList {
            from: filter.from,
            total: batches.len(),
            batches,
        }
    }

    /// Lines `from..from + size` of the batch's output; `from < 0` reads on from where the
    /// last such call stopped.
    pub fn local_log(
        &self,
        id: &str,
        login_user: &str,
        proxy_user: Option<&str>,
        from: i64,
        size: usize,
    ) -> Result<LogRows, GatewayError> {
        let batch_id = match self.find(id, login_user, proxy_user)? {
            Found::Here(batch) => batch.id(),
            Found::Elsewhere(record) => record.id,
        };
        let size = size.min(MAX_LOG_ROWS);
        let mut cursors = self.log_cursors.lock().unwrap_or_else(|p| p.into_inner());
        let cursor = cursors.entry(batch_id).or_default();
        let start = usize::try_from(from).unwrap_or(*cursor);
        let rows = read_lines(&self.log_path(batch_id), start, size).map_err(|e| {
            GatewayError::Internal(format!("cannot read the log of batch `{id}`: {e}"))
        })?;
        if from < 0 {
            *cursor = start + rows.len();
        }
        Ok(LogRows {
            row_count: rows.len(),
            log_row_set: rows,
        })
    }

    /// Cancels the batch: stops its process group and waits (bounded) until it is CANCELED.
    /// A batch another gateway runs (its `kyuubiInstance`) is that gateway's to stop, since
    /// it writes the batch's record: with `runner_first` the answer names it, for the call to
    /// be passed on. Without (the runner did not answer), a batch this gateway follows, found
    /// at its start with its process alive, is stopped from here.
    pub async fn cancel(
        &self,
        id: &str,
        login_user: &str,
        proxy_user: Option<&str>,
        runner_first: bool,
    ) -> Result<Cancel, GatewayError> {
        let (held, record) = match self.find(id, login_user, proxy_user)? {
            Found::Here(batch) => {
                let record = batch
                    .record
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone();
                (Some(batch), record)
            }
            Found::Elsewhere(record) => (None, *record),
        };
        let runs_elsewhere = record.kyuubi_instance != self.instance;
        match held {
            _ if record.state.is_terminal() => Ok(Cancel::Answered(CloseBatch {
                success: false,
                msg: format!("batch {id} has already ended: {}", record.state.as_str()),
            })),
            _ if runs_elsewhere && runner_first => Ok(Cancel::RunsOn(record.kyuubi_instance)),
            Some(batch) => Ok(Cancel::Answered(
                self.cancel_held(id, login_user, &batch).await,
            )),
            None if runs_elsewhere => Ok(Cancel::RunsOn(record.kyuubi_instance)),
            None => Err(GatewayError::Internal(format!(
                "batch {id} names this gateway ({}) as its runner but this gateway does not \
                 hold it; restart the gateway to take its batches up again",
                self.instance
            ))),
        }
    }

    /// Cancels a batch this gateway holds.
    async fn cancel_held(&self, id: &str, login_user: &str, batch: &Batch) -> CloseBatch {
        let state = *batch.state.borrow();
        if state.is_terminal() {
            return CloseBatch {
                success: false,
                msg: format!("batch {id} has already ended: {}", state.as_str()),
            };
        }
        tracing::info!(batch = %id, user = login_user, "cancelling batch");
        batch.cancel.cancel();
        let mut states = batch.state.subscribe();
        let ended = tokio::time::timeout(
            CANCEL_GRACE + Duration::from_secs(10),
            states.wait_for(|state| state.is_terminal()),
        )
        .await
        .is_ok_and(|waited| waited.is_ok());
        let state = *batch.state.borrow();
        match (ended, state) {
            (_, BatchState::Canceled) => CloseBatch {
                success: true,
                msg: format!("batch {id} is canceled: its spark-submit process group was stopped"),
            },
            (true, other) => CloseBatch {
                success: false,
                msg: format!(
                    "batch {id} ended before it could be canceled: {}",
                    other.as_str()
                ),
            },
            (false, _) => CloseBatch {
                success: false,
                msg: format!("batch {id} is still stopping; ask for its state again shortly"),
            },
        }
    }

    /// Gives every batch started from now on these environment variables, under its
    /// cluster's `env`; only the first call counts.
    pub fn give_env(&self, env: BTreeMap<String, String>) {
        let _ = self.gateway_env.set(env);
    }

    /// Forgets, now and then every [`CLEAN_INTERVAL`], the batches that ended more than
    /// `max_age` ago (Kyuubi's `kyuubi.metadata.max.age`): their records, logs and working
    /// directories. Each gateway cleans what it holds, so gateways sharing a work directory
    /// clean the records they found at their start and those they submitted. The cleaner
    /// stops with the manager.
    pub fn keep_for(self: &Arc<Self>, max_age: Duration) {
        self.remove_ended_before(max_age);
        let manager = Arc::downgrade(self);
        let period = CLEAN_INTERVAL.min(max_age).max(Duration::from_secs(1));
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(period);
            ticks.tick().await;
            loop {
                ticks.tick().await;
                let Some(manager) = manager.upgrade() else {
                    return;
                };
                manager.remove_ended_before(max_age);
            }
        });
    }

    /// Removes the batches that ended `max_age` ago or longer; answers how many.
    pub fn remove_ended_before(&self, max_age: Duration) -> usize {
        let cutoff = now_ms().saturating_sub(max_age.as_millis() as u64);
        let expired: Vec<Uuid> = self
            .lock()
            .iter()
            .filter(|(_, batch)| {
                let record = batch.record.lock().unwrap_or_else(|p| p.into_inner());
                record.state.is_terminal() && record.end_time <= cutoff
            })
            .map(|(id, _)| *id)
            .collect();
        for id in &expired {
            self.lock().remove(id);
            for file in [self.record_path(*id), self.log_path(*id)] {
                if let Err(e) = std::fs::remove_file(&file) {
                    if e.kind() != std::io::ErrorKind::NotFound {
                        tracing::warn!(file = %file.display(), error = %e, "cannot remove an expired batch's file");
                    }
                }
            }
            let _ = std::fs::remove_dir_all(self.dir.join(id.to_string()));
        }
        self.log_cursors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|id, _| self.record_path(*id).exists());
        if !expired.is_empty() {
            tracing::info!(batches = expired.len(), max_age = ?max_age, "expired batches removed");
        }
        expired.len()
    }

    /// How many batches this gateway holds.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Where [`BatchManager::find`] found a batch.
enum Found {
    /// Held by this gateway (submitted here, or found at its start).
    Here(Arc<Batch>),
    /// Only in the work directory: another gateway sharing it runs it.
    Elsewhere(Box<BatchRecord>),
}

/// What [`BatchManager::claim`] found.
enum Claim {
    /// The id was free: this is the new batch.
    New(Arc<Batch>),
    /// An earlier batch has the id.
    Taken(Box<BatchRecord>),
}

impl Batch {
    fn id(&self) -> Uuid {
        self.record.lock().unwrap_or_else(|p| p.into_inner()).id
    }
}

fn canceled() -> String {
    "canceled by a DELETE request; its spark-submit process group was stopped".to_owned()
}

/// Removes uploads of requests that never finished (a gateway stopped mid-upload): those
/// untouched for an hour, since another gateway on the same work directory may be receiving
/// one now.
fn remove_stale_uploads(staging: &Path) {
    let Ok(entries) = std::fs::read_dir(staging) else {
        return;
    };
    for entry in entries.flatten() {
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|modified| modified.elapsed().ok())
            .is_some_and(|age| age > STALE_UPLOAD);
        if stale {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// SIGTERM to the process group, SIGKILL after the grace, and the child reaped.
async fn stop_child(pid: u32, child: &mut tokio::process::Child) {
    signal_group(pid, Signal::SIGTERM);
    if tokio::time::timeout(CANCEL_GRACE, child.wait())
        .await
        .is_err()
    {
        signal_group(pid, Signal::SIGKILL);
        let _ = child.wait().await;
    }
    // The rest of the group (the JVM's or Python's children) goes too.
    signal_group(pid, Signal::SIGKILL);
}

/// Signals the process group `pid` leads. Never pid 0 or a negative one, which would signal
/// the gateway's own group or every process it may signal.
fn signal_group(pid: u32, signal: Signal) {
    if let Some(group) = i32::try_from(pid).ok().filter(|pid| *pid > 1) {
        let _ = killpg(Pid::from_raw(group), signal);
    }
}

/// A process's start time (field 22 of `/proc/PID/stat`), to tell it from a later process
/// with the same pid.
pub(crate) fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces; fields after it follow its `)`.
    let after = stat.rsplit_once(')')?.1;
    after.split_whitespace().nth(19)?.parse().ok()
}

/// Whether `pid` is alive and is the process that started at `start` (when known).
fn same_process(pid: u32, start: Option<u64>) -> bool {
    is_alive(pid) && (start.is_none() || process_start(pid) == start)
}

#[cfg(test)]
mod tests;
