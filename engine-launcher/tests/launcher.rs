//! Launching real processes: an engine that registers, one that exits, one that hangs, and
//! twenty sessions asking for the same engine at once.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use kumiho_engine_launcher::launcher::SECRET_ENV;
use kumiho_engine_launcher::registry::suite;
use kumiho_engine_launcher::{
    get_or_create, is_alive, stop_engine, DataFusionBuilder, DataFusionSettings, EmbeddedRegistry,
    EngineBuilder, EngineCommand, EngineLaunchSpec, EngineRef, EngineRegistrationArgs,
    EngineSecret, EngineSettings, EngineType, LaunchError, LaunchLog, Launcher, Registry,
    ShareLevel, Stopped,
};

const SECRET: &str = "very-secret-engine-token";

fn spec(work_dir: &Path, subdomain: &str, initialize_timeout: Duration) -> EngineLaunchSpec {
    let engine_ref = EngineRef {
        namespace: "kumiho".to_owned(),
        version: "0.1.0".to_owned(),
        share_level: ShareLevel::User,
        engine_type: EngineType::DataFusion,
        routing_user: "alice".to_owned(),
        subdomain: subdomain.to_owned(),
        session_user: "alice".to_owned(),
    };
    EngineLaunchSpec {
        log_path: EngineLaunchSpec::default_log_path(work_dir, &engine_ref),
        engine_ref,
        cluster: "test".to_owned(),
        bind_host: "127.0.0.1".to_owned(),
        secret: EngineSecret::new(SECRET),
        env: BTreeMap::new(),
        max_engines: None,
        settings: EngineSettings::DataFusion(DataFusionSettings::default()),
        idle_timeout: Duration::from_secs(60),
        initialize_timeout,
    }
}

/// Runs this test binary as an engine that registers itself; counts launches.
#[derive(Default)]
struct FakeEngineBuilder {
    builds: AtomicUsize,
}

impl EngineBuilder for FakeEngineBuilder {
    fn engine_type(&self) -> EngineType {
        EngineType::DataFusion
    }

    fn build(
        &self,
        _spec: &EngineLaunchSpec,
        registration: &EngineRegistrationArgs,
    ) -> Result<EngineCommand, LaunchError> {
        self.builds.fetch_add(1, Ordering::SeqCst);
        let helper = common::helper_command("fake-engine");
        let mut env: BTreeMap<String, String> = helper
            .get_envs()
            .filter_map(|(k, v)| Some((k.to_str()?.to_owned(), v?.to_str()?.to_owned())))
            .collect();
        env.insert(
            common::ENGINE_ARGS_ENV.to_owned(),
            registration.to_args().join("\n"),
        );
        env.insert(SECRET_ENV.to_owned(), SECRET.to_owned());
        Ok(EngineCommand {
            program: PathBuf::from(helper.get_program()),
            args: helper
                .get_args()
                .map(|a| a.to_str().unwrap().to_owned())
                .collect(),
            env,
        })
    }
}

/// Runs a shell script as the engine.
struct ScriptBuilder(&'static str);

impl EngineBuilder for ScriptBuilder {
    fn engine_type(&self) -> EngineType {
        EngineType::DataFusion
    }

    fn build(
        &self,
        _: &EngineLaunchSpec,
        _: &EngineRegistrationArgs,
    ) -> Result<EngineCommand, LaunchError> {
        Ok(EngineCommand {
            program: PathBuf::from("/bin/sh"),
            args: vec!["-c".to_owned(), self.0.to_owned()],
            env: BTreeMap::new(),
        })
    }
}

fn registry(dir: &Path) -> EmbeddedRegistry {
    EmbeddedRegistry::open(dir).unwrap()
}

#[tokio::test]
async fn a_launched_engine_registers_and_its_log_is_followed() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());
    let launcher = Launcher::new().with_builder(Arc::new(FakeEngineBuilder::default()));
    let spec = spec(dir.path(), "default", Duration::from_secs(60));
    let log = LaunchLog::new();

    let engine = get_or_create(&registry, &launcher, &spec, &log)
        .await
        .unwrap();

    let lines = log.lines_since(0);
    let text = lines.join("\n");
    assert_eq!(
        lines[0],
        "looking up engine in /kumiho_0.1.0_USER_DATAFUSION/alice/default"
    );
    assert!(text.contains("acquired launch lock"), "{text}");
    assert!(text.contains("\nstarting "), "{text}");
    assert!(
        text.contains("fake engine starting"),
        "the engine's own log was not followed: {text}"
    );
    assert!(text.contains("secret received"), "{text}");
    assert!(
        !text.contains(SECRET),
        "the secret leaked into the launch log: {text}"
    );
    assert!(
        text.ends_with(&format!(
            "engine registered at {} (pid {})",
            engine.address(),
            engine.pid.unwrap()
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("listening on {}", engine.address())),
        "{text}"
    );

    // A second session finds it without launching.
    let second_log = LaunchLog::new();
    let found = get_or_create(&registry, &launcher, &spec, &second_log)
        .await
        .unwrap();
    assert_eq!(found.ref_id, engine.ref_id);
    assert_eq!(
        second_log.lines_since(1),
        [format!("found engine at {}", engine.address())]
    );

    // Stopping it ends the process and its registration.
    let pid = engine.pid.unwrap();
    assert_eq!(
        stop_engine(pid, Duration::from_secs(30)).await,
        Stopped::Terminated
    );
    assert!(!is_alive(pid));
    registry.watch_engine(&engine).await.unwrap();
    assert!(registry
        .get_engines(&spec.engine_ref.engine_space())
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn an_engine_that_exits_fails_the_launch_at_once_with_its_last_lines() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());
    let script = "echo 'loading tables'; echo 'error: table trips: no such directory' >&2; exit 3";
    let launcher = Launcher::new().with_builder(Arc::new(ScriptBuilder(script)));
    // An initialize timeout far longer than any test: failing at once is what is tested.
    let spec = spec(dir.path(), "exits", Duration::from_secs(3600));
    let log = LaunchLog::new();

    let error = get_or_create(&registry, &launcher, &spec, &log)
        .await
        .unwrap_err();

    let LaunchError::Exited {
        status, last_lines, ..
    } = &error
    else {
        panic!("expected an exit, got {error}");
    };
    assert_eq!(status.code(), Some(3));
    assert_eq!(
        last_lines,
        &["loading tables", "error: table trips: no such directory"]
    );
    assert_eq!(
        error.to_string(),
        format!(
            "engine exited with exit status: 3 during launch. Last lines of its log {}:\n\
             loading tables\nerror: table trips: no such directory",
            spec.log_path.display()
        )
    );
    let text = log.lines_since(0).join("\n");
    assert!(
        text.contains("error: table trips: no such directory"),
        "{text}"
    );
    assert!(
        text.ends_with("engine exited with exit status: 3 during launch"),
        "{text}"
    );
}

#[tokio::test]
async fn an_engine_that_never_registers_is_killed_at_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());
    let script = "echo \"engine pid $$\"; echo 'waiting for a metastore'; exec sleep 600";
    let launcher = Launcher::new().with_builder(Arc::new(ScriptBuilder(script)));
    let spec = spec(dir.path(), "hangs", Duration::from_secs(1));
    let log = LaunchLog::new();

    let error = get_or_create(&registry, &launcher, &spec, &log)
        .await
        .unwrap_err();

    let LaunchError::Timeout { last_lines, .. } = &error else {
        panic!("expected a timeout, got {error}");
    };
    assert_eq!(last_lines[1], "waiting for a metastore");
    let message = error.to_string();
    assert!(
        message.starts_with("engine did not register within 1s; killed it."),
        "{message}"
    );
    assert!(message.ends_with("waiting for a metastore"), "{message}");
    let pid: u32 = last_lines[0]
        .strip_prefix("engine pid ")
        .unwrap()
        .parse()
        .unwrap();
    assert!(!is_alive(pid), "the engine {pid} was left running");
}

#[tokio::test]
async fn a_missing_engine_program_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());
    let launcher = Launcher::new().with_builder(Arc::new(DataFusionBuilder::new(
        dir.path().join("no-kumiho-engine"),
    )));
    let spec = spec(dir.path(), "missing", Duration::from_secs(60));

    let error = get_or_create(&registry, &launcher, &spec, &LaunchLog::new())
        .await
        .unwrap_err();
    assert!(
        matches!(error, LaunchError::ProgramNotFound { .. }),
        "{error}"
    );
}

#[tokio::test]
async fn an_engine_type_without_builder_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());
    let mut spec = spec(dir.path(), "spark", Duration::from_secs(60));
    spec.engine_ref.engine_type = EngineType::SparkSql;

    let error = get_or_create(&registry, &Launcher::new(), &spec, &LaunchLog::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "this gateway cannot launch SPARK_SQL engines; ask an operator to configure them or pick another `kyuubi.engine.type`"
    );
}

#[tokio::test]
async fn a_cluster_at_its_max_engines_reuses_its_engines_but_launches_no_more() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());
    let builder = Arc::new(FakeEngineBuilder::default());
    let launcher = Launcher::new().with_builder(builder.clone());
    let mut spec = spec(dir.path(), "new", Duration::from_secs(60));
    spec.max_engines = Some(2);
    // Two engines of the cluster: bob's (another user and share level) and alice's `old`.
    let bobs = registry
        .register_engine(
            "/kumiho_0.1.0_GROUP_DATAFUSION/bob/default",
            suite::endpoint(10101, "bobs"),
        )
        .await
        .unwrap();
    let old_space = "/kumiho_0.1.0_USER_DATAFUSION/alice/old";
    let _old = registry
        .register_engine(old_space, suite::endpoint(10102, "old"))
        .await
        .unwrap();

    let log = LaunchLog::new();
    let error = get_or_create(&registry, &launcher, &spec, &log)
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            LaunchError::EngineLimit {
                max: 2,
                running: 2,
                ..
            }
        ),
        "{error}"
    );
    assert_eq!(
        error.to_string(),
        "cluster `test` runs its maximum of 2 engines (limits.max-engines): wait for an idle \
         engine to stop, or ask the operator to raise the limit"
    );
    assert_eq!(
        builder.builds.load(Ordering::SeqCst),
        0,
        "an engine was built"
    );
    let text = log.lines_since(0).join("\n");
    assert!(
        text.contains("cluster test runs 2 engines of at most 2"),
        "{text}"
    );

    // The cap never refuses an engine that is already registered.
    let mut reuse = spec.clone();
    reuse.engine_ref.subdomain = "old".to_owned();
    let found = get_or_create(&registry, &launcher, &reuse, &LaunchLog::new())
        .await
        .unwrap();
    assert_eq!(found.ref_id, "old");

    // Once an engine stops, the launch goes ahead (to the builder, which has no engine type
    // to offer here: the cap was passed).
    bobs.deregister().unwrap();
    let error = get_or_create(&registry, &Launcher::new(), &spec, &LaunchLog::new())
        .await
        .unwrap_err();
    assert!(matches!(error, LaunchError::NoBuilder { .. }), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_launches_of_different_engines_keep_to_max_engines() {
    let dir = tempfile::tempdir().unwrap();
    let registry: Arc<dyn Registry> = Arc::new(registry(dir.path()));
    let builder = Arc::new(FakeEngineBuilder::default());
    let launcher = Arc::new(Launcher::new().with_builder(builder.clone()));

    // Five engine spaces (five launch locks) launching at once, on a cluster of two engines.
    let sessions: Vec<_> = (0..5)
        .map(|i| {
            let mut spec = spec(dir.path(), &format!("team-{i}"), Duration::from_secs(60));
            spec.max_engines = Some(2);
            let (registry, launcher) = (registry.clone(), launcher.clone());
            tokio::spawn(async move {
                get_or_create(registry.as_ref(), &launcher, &spec, &LaunchLog::new()).await
            })
        })
        .collect();
    let mut launched = Vec::new();
    let mut refused = 0;
    for session in sessions {
        match session.await.unwrap() {
            Ok(engine) => launched.push(engine),
            Err(LaunchError::EngineLimit { max: 2, .. }) => refused += 1,
            Err(error) => panic!("a launch failed otherwise: {error}"),
        }
    }

    assert_eq!(launched.len(), 2, "launched: {launched:?}");
    assert_eq!(refused, 3);
    assert_eq!(builder.builds.load(Ordering::SeqCst), 2);
    for engine in launched {
        assert_eq!(
            stop_engine(engine.pid.unwrap(), Duration::from_secs(30)).await,
            Stopped::Terminated
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_concurrent_sessions_launch_one_engine() {
    let dir = tempfile::tempdir().unwrap();
    let registry: Arc<dyn Registry> = Arc::new(registry(dir.path()));
    let builder = Arc::new(FakeEngineBuilder::default());
    let launcher = Arc::new(Launcher::new().with_builder(builder.clone()));
    let spec = Arc::new(spec(dir.path(), "shared", Duration::from_secs(60)));

    let sessions: Vec<_> = (0..20)
        .map(|_| {
            let (registry, launcher, spec) = (registry.clone(), launcher.clone(), spec.clone());
            tokio::spawn(async move {
                let log = LaunchLog::new();
                get_or_create(registry.as_ref(), &launcher, &spec, &log).await
            })
        })
        .collect();
    let mut engines = Vec::new();
    for session in sessions {
        engines.push(session.await.unwrap().unwrap());
    }

    assert_eq!(
        builder.builds.load(Ordering::SeqCst),
        1,
        "more than one engine was launched"
    );
    assert!(engines
        .iter()
        .all(|engine| engine.ref_id == engines[0].ref_id));
    let launched = engines.iter().find_map(|engine| engine.pid).unwrap();
    assert_eq!(
        stop_engine(launched, Duration::from_secs(30)).await,
        Stopped::Terminated
    );
}

#[tokio::test]
async fn an_abandoned_launch_kills_its_engine() {
    let dir = tempfile::tempdir().unwrap();
    let registry = Arc::new(registry(dir.path()));
    let script = "echo \"engine pid $$\"; exec sleep 600";
    let launcher = Arc::new(Launcher::new().with_builder(Arc::new(ScriptBuilder(script))));
    let spec = Arc::new(spec(dir.path(), "abandoned", Duration::from_secs(3600)));
    let log = Arc::new(LaunchLog::new());
    let launch = {
        let (registry, launcher, spec, log) = (
            registry.clone(),
            launcher.clone(),
            spec.clone(),
            log.clone(),
        );
        tokio::spawn(async move { get_or_create(registry.as_ref(), &launcher, &spec, &log).await })
    };

    // Wait until the engine has said its pid, then give the launch up.
    let mut read = 0;
    let pid: u32 = loop {
        log.wait_beyond(read).await;
        let lines = log.lines_since(read);
        read += lines.len();
        if let Some(pid) = lines
            .iter()
            .find_map(|line| line.strip_prefix("engine pid "))
        {
            break pid.parse().unwrap();
        }
    };
    launch.abort();
    assert!(launch.await.unwrap_err().is_cancelled());

    // The kill is immediate; the kernel and tokio then reap the process.
    let mut checks = 0;
    while is_alive(pid) {
        checks += 1;
        assert!(checks < 600, "the abandoned engine {pid} is still running");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
