use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use base64::Engine;
use kumiho_thrift::auth::AnyPassword;

use super::*;
use crate::batch::{BatchRecord, BatchView};
use crate::cluster::ClusterRegistry;
use kumiho_engine_launcher::batch::BatchType;

/// A stand-in `spark-submit` (a shell script): prints its arguments and an application id,
/// fails for `fail.py`, sleeps for `sleep.py`.
/// The client address of batches submitted by a test straight to the manager.
/// The API over `batches` taking any password (authentication NONE), clients by their peer.
fn open_api(batches: Arc<BatchManager>) -> RestApi {
    RestApi {
        batches,
        authenticator: Arc::new(AnyPassword),
        kerberos: None,
        passwords_with_kerberos: false,
        client_ip_header: None,
    }
}

const LOOPBACK: std::net::IpAddr = std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

const SPARK_SUBMIT: &str = r#"#!/bin/sh
echo "spark-submit $*"
for arg in "$@"; do
  case "$arg" in
    *fail.py) echo "ValueError: kumiho-boom" >&2; exit 3 ;;
    *sleep.py) sleep 60; exit 0 ;;
  esac
done
echo "appId local-1764553060123"
"#;

struct Fixture {
    api: RestApi,
    _dir: tempfile::TempDir,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("spark");
    std::fs::create_dir_all(home.join("bin")).unwrap();
    let submit = home.join("bin/spark-submit");
    std::fs::write(&submit, SPARK_SUBMIT).unwrap();
    std::fs::set_permissions(&submit, std::fs::Permissions::from_mode(0o755)).unwrap();
    let clusters = dir.path().join("clusters");
    std::fs::create_dir_all(&clusters).unwrap();
    std::fs::write(
        clusters.join("default.yaml"),
        format!(
            "engine:\n  spark:\n    home: {}\n    master: local[1]\nsuper-users: [admin]\nsession-conf:\n  restrict: [spark.driver.*]\n",
            home.display()
        ),
    )
    .unwrap();
    std::fs::write(
        clusters.join("nospark.yaml"),
        "engine:\n  spark:\n    home: /nonexistent/spark\n",
    )
    .unwrap();
    let (registry, _) = ClusterRegistry::load(&clusters).unwrap();
    let batches = BatchManager::open(
        &dir.path().join("work"),
        Arc::new(registry),
        "default".to_owned(),
        "127.0.0.1:10099".to_owned(),
    )
    .unwrap();
    Fixture {
        api: open_api(batches),
        _dir: dir,
    }
}

impl Fixture {
    /// A manager on the fixture's clusters and work directory: a restarted gateway, or one
    /// sharing the directory.
    fn another_gateway(&self, instance: &str) -> Arc<BatchManager> {
        let (registry, _) = ClusterRegistry::load(&self._dir.path().join("clusters")).unwrap();
        BatchManager::open(
            &self._dir.path().join("work"),
            Arc::new(registry),
            "default".to_owned(),
            instance.to_owned(),
        )
        .unwrap()
    }
}

fn request(method: &str, uri: &str, user: Option<&str>, body: &str) -> Request<Full<Bytes>> {
    let mut builder = Request::builder().method(method).uri(uri);
    if let Some(user) = user {
        let credentials = base64::engine::general_purpose::STANDARD.encode(format!("{user}:x"));
        builder = builder.header("Authorization", format!("Basic {credentials}"));
    }
    if !body.is_empty() {
        builder = builder.header("Content-Type", "application/json");
    }
    builder
        .body(Full::new(Bytes::from(body.to_owned())))
        .unwrap()
}

async fn call(api: &RestApi, req: Request<Full<Bytes>>) -> (StatusCode, String) {
    let response = api.respond(req, "127.0.0.1:1".parse().unwrap()).await;
    let status = response.status();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}

async fn json_of(api: &RestApi, req: Request<Full<Bytes>>) -> serde_json::Value {
    let (status, body) = call(api, req).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    serde_json::from_str(&body).unwrap()
}

/// `POST /api/v1/batches` as `user`: the answer, which must be 200.
async fn post_batch(api: &RestApi, user: &str, body: &str) -> serde_json::Value {
    json_of(api, request("POST", "/api/v1/batches", Some(user), body)).await
}

/// `GET` or `DELETE` of `/api/v1/batches/{id}` as `user`: the answer, which must be 200.
async fn on_batch(api: &RestApi, method: &str, id: &str, user: &str) -> serde_json::Value {
    json_of(
        api,
        request(method, &format!("/api/v1/batches/{id}"), Some(user), ""),
    )
    .await
}

async fn wait_for_state(api: &RestApi, id: &str, user: &str, state: &str) -> serde_json::Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let batch = on_batch(api, "GET", id, user).await;
        if batch["state"] == state {
            return batch;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "batch never reached {state}: {batch}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn submission(resource: &str) -> String {
    format!(
        r#"{{"batchType":"pyspark","resource":"{resource}","name":"n-{resource}","conf":{{"spark.ui.enabled":"false"}},"args":["a1"]}}"#
    )
}

#[test]
fn paths_route_and_queries_decode() {
    assert_eq!(route("/api/v1/ping"), Some(Route::Ping));
    assert_eq!(route("/api/v1/batches/"), Some(Route::Batches));
    assert_eq!(route("/api/v1/batches/x"), Some(Route::Batch("x")));
    assert_eq!(
        route("/api/v1/batches/x/localLog"),
        Some(Route::BatchLog("x"))
    );
    assert_eq!(route("/api/v1/sessions"), Some(Route::Sessions));
    assert_eq!(
        route("/api/v1/sessions/s/operations/statement"),
        Some(Route::Statement("s"))
    );
    assert_eq!(
        route("/api/v1/operations/o/rowset"),
        Some(Route::OperationRead("o", OperationPart::RowSet))
    );
    assert_eq!(route("/api/v1/sessions/s/operations/nonsense"), None);
    assert_eq!(route("/api/v1/operations/o/nonsense"), None);
    assert_eq!(route("/api/v2/ping"), None);
    assert_eq!(percent_decode("a%20b+c%2Fd%zz%4"), "a b c/d%zz%4");
    let query =
        Query::parse("batchState=running&batchUser=al%69ce&size=2&from=1&desc=TRUE&proxyUser=");
    let filter = query.filter().unwrap();
    assert_eq!(filter.state, Some(BatchState::Running));
    assert_eq!(filter.user.as_deref(), Some("alice"));
    assert_eq!((filter.from, filter.size, filter.desc), (1, 2, true));
    assert_eq!(query.proxy_user(), None);
    assert!(Query::parse("batchState=DONE").filter().is_err());
    assert!(Query::parse("createTime=5&endTime=4")
        .filter()
        .unwrap_err()
        .to_string()
        .contains("invalid time range"));
    assert!(Query::parse("size=-1").filter().is_err());
    assert!(Query::parse("from=x")
        .filter()
        .unwrap_err()
        .to_string()
        .contains("`from`"));
    assert_eq!(Query::parse("").log_page().unwrap(), (-1, 100));
}

#[tokio::test]
async fn a_batch_runs_to_finished_with_its_log_and_app_id() {
    let f = fixture();
    let (status, body) = call(&f.api, request("GET", "/api/v1/ping", None, "")).await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, "pong"));
    let batch = post_batch(&f.api, "alice", &submission("/jobs/ok.py")).await;
    assert_eq!(batch["user"], "alice");
    assert_eq!(batch["batchType"], "PYSPARK");
    assert_eq!(batch["name"], "n-/jobs/ok.py");
    assert_eq!(batch["kyuubiInstance"], "127.0.0.1:10099");
    let id = batch["id"].as_str().unwrap().to_owned();
    let done = wait_for_state(&f.api, &id, "alice", "FINISHED").await;
    assert_eq!(done["appId"], "local-1764553060123");
    assert_eq!(done["appState"], "FINISHED");
    assert!(done["endTime"].as_u64().unwrap() >= done["createTime"].as_u64().unwrap());
    let log = json_of(
        &f.api,
        request(
            "GET",
            &format!("/api/v1/batches/{id}/localLog?from=0&size=100"),
            Some("alice"),
            "",
        ),
    )
    .await;
    let lines: Vec<&str> = log["logRowSet"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(log["rowCount"], lines.len());
    assert!(lines[0].starts_with("kumiho: starting "), "{lines:?}");
    assert!(
        lines.iter().any(|l| l.contains("--master local[1] --deploy-mode client --name n-/jobs/ok.py --proxy-user alice --conf spark.ui.enabled=false /jobs/ok.py a1")),
        "{lines:?}"
    );
    // from < 0 reads on from the last such read.
    let first = json_of(
        &f.api,
        request(
            "GET",
            &format!("/api/v1/batches/{id}/localLog?size=1"),
            Some("alice"),
            "",
        ),
    )
    .await;
    let second = json_of(
        &f.api,
        request(
            "GET",
            &format!("/api/v1/batches/{id}/localLog?size=1"),
            Some("alice"),
            "",
        ),
    )
    .await;
    assert_eq!(first["logRowSet"][0], lines[0]);
    assert_eq!(second["logRowSet"][0], lines[1]);
    // Listed for alice, not for bob; the admin sees it acting as alice.
    let list = json_of(
        &f.api,
        request(
            "GET",
            "/api/v1/batches?batchState=finished",
            Some("alice"),
            "",
        ),
    )
    .await;
    assert_eq!(
        (list["from"].as_u64(), list["total"].as_u64()),
        (Some(0), Some(1))
    );
    assert_eq!(list["batches"][0]["id"], id.as_str());
    let list = json_of(&f.api, request("GET", "/api/v1/batches", Some("bob"), "")).await;
    assert_eq!(list["total"], 0);
    let (status, body) = call(
        &f.api,
        request("GET", &format!("/api/v1/batches/{id}"), Some("bob"), ""),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let (status, _) = call(
        &f.api,
        request(
            "GET",
            &format!("/api/v1/batches/{id}?proxyUser=alice"),
            Some("admin"),
            "",
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    // Deleting an ended batch says so.
    let closed = on_batch(&f.api, "DELETE", &id, "alice").await;
    assert_eq!(closed["success"], false);
    assert!(closed["msg"].as_str().unwrap().contains("FINISHED"));
}

#[tokio::test]
async fn a_failing_batch_errors_with_its_diagnostic_and_a_deleted_one_is_canceled() {
    let f = fixture();
    let failed = post_batch(&f.api, "alice", &submission("/jobs/fail.py")).await;
    let failed = wait_for_state(&f.api, failed["id"].as_str().unwrap(), "alice", "ERROR").await;
    let diagnostic = failed["appDiagnostic"].as_str().unwrap();
    assert!(
        diagnostic.contains("exit status: 3") && diagnostic.contains("ValueError: kumiho-boom"),
        "{diagnostic}"
    );
    assert_eq!(failed["appState"], "FAILED");

    let sleeping = post_batch(&f.api, "alice", &submission("/jobs/sleep.py")).await;
    let id = sleeping["id"].as_str().unwrap().to_owned();
    let running = wait_for_state(&f.api, &id, "alice", "RUNNING").await;
    assert!(running["appStartTime"].as_u64().unwrap() > 0);
    let (status, _) = call(
        &f.api,
        request("DELETE", &format!("/api/v1/batches/{id}"), Some("bob"), ""),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let closed = on_batch(&f.api, "DELETE", &id, "alice").await;
    assert_eq!(closed["success"], true, "{closed}");
    let canceled = on_batch(&f.api, "GET", &id, "alice").await;
    assert_eq!(
        (canceled["state"].as_str(), canceled["appState"].as_str()),
        (Some("CANCELED"), Some("KILLED"))
    );
}

#[tokio::test]
async fn bad_requests_get_the_status_that_says_whose_fault() {
    let f = fixture();
    let api = &f.api;
    let post =
        |user: Option<&'static str>, body: &str| request("POST", "/api/v1/batches", user, body);
    let (status, body) = call(api, post(None, &submission("/a.py"))).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    let mut bearer = post(None, &submission("/a.py"));
    bearer
        .headers_mut()
        .insert("Authorization", HeaderValue::from_static("Bearer abc"));
    let response = api.respond(bearer, "127.0.0.1:1".parse().unwrap()).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(response
        .headers()
        .get("WWW-Authenticate")
        .unwrap()
        .to_str()
        .unwrap()
        .starts_with("Basic"));

    let (status, body) = call(api, post(Some("alice"), "{\"batchType\": \"PYSPARK\",")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body.contains("not a valid BatchRequest"), "{body}");
    let (status, body) = call(api, post(Some("alice"), r#"{"batchType":"PYSPARK"}"#)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body.contains("`resource` is required"), "{body}");
    let (status, body) = call(api, post(Some("alice"), r#"{"batchType":"PYSPARK","resource":"/a.py","conf":{"kyuubi.session.cluster":"nospark"}}"#)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body.contains("cluster `nospark` cannot run Spark batches")
            && body.contains("engine.spark.home"),
        "{body}"
    );
    let (status, body) = call(api, post(Some("alice"), r#"{"batchType":"PYSPARK","resource":"/a.py","conf":{"kyuubi.session.cluster":"nope"}}"#)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body.contains("cluster `nope` is unknown"), "{body}");
    let (status, body) = call(api, post(Some("alice"), r#"{"batchType":"PYSPARK","resource":"/a.py","conf":{"hive.server2.proxy.user":"bob"}}"#)).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(body.contains("may not impersonate"), "{body}");

    let mut huge = post(Some("alice"), "{}");
    huge.headers_mut()
        .insert("Content-Length", HeaderValue::from_static("1073741824"));
    assert_eq!(call(api, huge).await.0, StatusCode::PAYLOAD_TOO_LARGE);
    let big = format!("{{\"name\":\"{}\"}}", "x".repeat(MAX_BODY));
    assert_eq!(
        call(api, post(Some("alice"), &big)).await.0,
        StatusCode::PAYLOAD_TOO_LARGE
    );
    let mut xml = post(Some("alice"), "<batch/>");
    xml.headers_mut()
        .insert("Content-Type", HeaderValue::from_static("application/xml"));
    assert_eq!(call(api, xml).await.0, StatusCode::UNSUPPORTED_MEDIA_TYPE);

    let unknown = uuid::Uuid::new_v4();
    let (status, body) = call(
        api,
        request(
            "GET",
            &format!("/api/v1/batches/{unknown}"),
            Some("alice"),
            "",
        ),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (status, body) = call(
        api,
        request(
            "GET",
            "/api/v1/batches/not-a-uuid/localLog",
            Some("alice"),
            "",
        ),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body.contains("UUID"), "{body}");
    assert_eq!(
        call(api, request("GET", "/api/v1/nothing", Some("alice"), ""))
            .await
            .0,
        StatusCode::NOT_FOUND
    );
    let response = api
        .respond(
            request("PUT", "/api/v1/batches", Some("alice"), ""),
            "127.0.0.1:1".parse().unwrap(),
        )
        .await;
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(response.headers().get("Allow").unwrap(), "GET, POST");
    assert_eq!(
        call(
            api,
            request("GET", "/api/v1/batches?batchState=DONE", Some("alice"), "")
        )
        .await
        .0,
        StatusCode::BAD_REQUEST
    );
    assert!(
        api.batches.is_empty(),
        "no refused request left a batch behind"
    );
}

#[tokio::test]
async fn a_restarted_manager_lists_old_batches_and_ends_those_whose_process_is_gone() {
    let f = fixture();
    let batch = post_batch(&f.api, "alice", &submission("/jobs/ok.py")).await;
    let id = batch["id"].as_str().unwrap().to_owned();
    wait_for_state(&f.api, &id, "alice", "FINISHED").await;
    // A record left RUNNING by a gateway that died, with a process that no longer exists.
    let work = f._dir.path().join("work");
    let dir = work.join("batches");
    let mut stale: BatchRecord =
        serde_json::from_slice(&std::fs::read(dir.join(format!("{id}.json"))).unwrap()).unwrap();
    stale.id = uuid::Uuid::new_v4();
    stale.state = BatchState::Running;
    stale.end_time = 0;
    stale.pid = Some(u32::MAX / 2);
    std::fs::write(
        dir.join(format!("{}.json", stale.id)),
        serde_json::to_vec(&stale).unwrap(),
    )
    .unwrap();
    std::fs::write(dir.join("garbage.json"), "{").unwrap();

    let restarted = f.another_gateway("h:1");
    let filter = BatchFilter {
        size: 10,
        ..Default::default()
    };
    let list = restarted.list(&filter, "alice", None);
    assert_eq!(list.total, 2);
    let old = restarted.get(&id, "alice", None).unwrap();
    assert_eq!(old.state, BatchState::Finished);
    let gone = restarted.get(&stale.id.to_string(), "alice", None).unwrap();
    assert_eq!(gone.state, BatchState::Error);
    assert!(gone.app_diagnostic.unwrap().contains("gateway restarted"));
}

#[tokio::test]
async fn super_users_submit_as_others_and_restricted_keys_are_refused() {
    let f = fixture();
    let api = &f.api;
    let batch = json_of(
        api,
        request(
            "POST",
            "/api/v1/batches?proxyUser=alice",
            Some("admin"),
            &submission("/jobs/ok.py"),
        ),
    )
    .await;
    assert_eq!(batch["user"], "alice");
    let id = batch["id"].as_str().unwrap().to_owned();
    // Both the user it runs as and the super user who submitted it see it; bob does not.
    wait_for_state(api, &id, "alice", "FINISHED").await;
    wait_for_state(api, &id, "admin", "FINISHED").await;
    let listed = json_of(
        api,
        request("GET", "/api/v1/batches?batchUser=alice", Some("admin"), ""),
    )
    .await;
    assert_eq!(listed["total"], 1);
    assert_eq!(
        call(
            api,
            request("GET", &format!("/api/v1/batches/{id}"), Some("bob"), "")
        )
        .await
        .0,
        StatusCode::FORBIDDEN
    );
    // The conf key works as the query parameter does.
    let body = r#"{"batchType":"PYSPARK","resource":"/jobs/ok.py","conf":{"hive.server2.proxy.user":"carol"}}"#;
    let batch = post_batch(api, "admin", body).await;
    assert_eq!(batch["user"], "carol");
    // The cluster's session-conf rules apply to a batch's conf as to a session's.
    let body = r#"{"batchType":"PYSPARK","resource":"/jobs/ok.py","conf":{"spark.driver.extraJavaOptions":"-Dx=1"}}"#;
    let (status, message) =
        call(api, request("POST", "/api/v1/batches", Some("alice"), body)).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{message}");
    assert!(
        message.contains("spark.driver.extraJavaOptions") && message.contains("restricted"),
        "{message}"
    );
}

fn form(boundary: &str, parts: &[(&str, Option<&str>, &str)]) -> String {
    let mut body = String::from("preamble to ignore\r\n");
    for (name, file_name, content) in parts {
        body.push_str(&format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\""
        ));
        if let Some(file_name) = file_name {
            body.push_str(&format!(
                "; filename=\"{file_name}\"\r\nContent-Type: text/x-python"
            ));
        } else {
            body.push_str("\r\nContent-Type: application/json");
        }
        body.push_str(&format!("\r\n\r\n{content}\r\n"));
    }
    body.push_str(&format!("--{boundary}--\r\nepilogue"));
    body
}

fn upload(user: &str, boundary: &str, body: String) -> Request<Full<Bytes>> {
    let mut req = request("POST", "/api/v1/batches", Some(user), "");
    req.headers_mut().insert(
        "Content-Type",
        HeaderValue::from_str(&format!("multipart/form-data; boundary=\"{boundary}\"")).unwrap(),
    );
    *req.body_mut() = Full::new(Bytes::from(body));
    req
}

#[tokio::test]
async fn an_uploaded_resource_runs_from_the_batchs_own_directory() {
    let f = fixture();
    let api = &f.api;
    let boundary = "----kumiho-7MA4YWxkTrZu0gW";
    // The content holds a line that nearly matches the boundary.
    let script = "print('hi')\r\n----kumiho-7MA4YWxk\r\nprint('bye')";
    let body = form(
        boundary,
        &[
            (
                "batchRequest",
                None,
                r#"{"batchType":"PYSPARK","name":"up","args":["x"]}"#,
            ),
            ("resourceFile", Some("../my job.py"), script),
        ],
    );
    let batch = json_of(api, upload("alice", boundary, body)).await;
    let id = batch["id"].as_str().unwrap().to_owned();
    wait_for_state(api, &id, "alice", "FINISHED").await;
    let work = f._dir.path().join("work/batches");
    let uploaded = work.join(&id).join("my_job.py");
    assert_eq!(std::fs::read_to_string(&uploaded).unwrap(), script);
    let log = json_of(
        api,
        request(
            "GET",
            &format!("/api/v1/batches/{id}/localLog?from=0"),
            Some("alice"),
            "",
        ),
    )
    .await;
    let expected = format!("{} x", uploaded.display());
    assert!(
        log["logRowSet"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l.as_str().unwrap().ends_with(&expected)),
        "{log}"
    );
    // Nothing is left in staging.
    assert_eq!(std::fs::read_dir(work.join(".uploads")).unwrap().count(), 0);

    // Forms that cannot be a batch are refused, and their uploads removed.
    let missing = form(boundary, &[("resourceFile", Some("a.py"), "x")]);
    let (status, message) = call(api, upload("alice", boundary, missing)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(message.contains("no `batchRequest` part"), "{message}");
    let extra = form(
        boundary,
        &[
            ("batchRequest", None, "{}"),
            ("other.jar", Some("other.jar"), "x"),
        ],
    );
    let (status, message) = call(api, upload("alice", boundary, extra)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        message.contains("part `other.jar` is not supported"),
        "{message}"
    );
    let unfinished =
        "--b\r\nContent-Disposition: form-data; name=\"batchRequest\"\r\n\r\n{}".to_owned();
    let (status, message) = call(api, upload("alice", "b", unfinished)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(message.contains("closing boundary"), "{message}");
    let spark = form(
        boundary,
        &[
            ("batchRequest", None, r#"{"batchType":"SPARK"}"#),
            ("resourceFile", Some("a.jar"), "x"),
        ],
    );
    let (status, message) = call(api, upload("alice", boundary, spark)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(message.contains("className"), "{message}");
    assert_eq!(std::fs::read_dir(work.join(".uploads")).unwrap().count(), 0);
    let mut huge = upload("alice", boundary, String::new());
    huge.headers_mut()
        .insert("Content-Length", HeaderValue::from_static("1099511627776"));
    assert_eq!(call(api, huge).await.0, StatusCode::PAYLOAD_TOO_LARGE);
    let mut no_boundary = upload("alice", boundary, String::new());
    no_boundary.headers_mut().insert(
        "Content-Type",
        HeaderValue::from_static("multipart/form-data"),
    );
    assert_eq!(
        call(api, no_boundary).await.0,
        StatusCode::UNSUPPORTED_MEDIA_TYPE
    );
}

#[test]
fn uploaded_file_names_stay_in_their_directory() {
    assert_eq!(multipart::sanitize("../../etc/passwd"), "passwd");
    assert_eq!(
        multipart::sanitize("C:\\jobs\\daily job.py"),
        "daily_job.py"
    );
    assert_eq!(multipart::sanitize(".."), "resource");
    assert_eq!(multipart::sanitize(""), "resource");
    assert_eq!(
        multipart::boundary("multipart/form-data; boundary=\"a b\"").as_deref(),
        Some("a b")
    );
    assert_eq!(multipart::boundary("multipart/mixed; boundary=x"), None);
}

#[tokio::test]
async fn a_form_arriving_a_byte_at_a_time_parses_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let boundary = "xYz";
    let script = "a\r\n--xY\r\n--xYq is not it either\r\nb";
    let body = form(
        boundary,
        &[
            ("batchRequest", None, "{\"batchType\":\"PYSPARK\"}"),
            ("resourceFile", Some("job.py"), script),
        ],
    );
    let frames: Vec<Result<hyper::body::Frame<Bytes>, std::convert::Infallible>> = body
        .bytes()
        .map(|b| Ok(hyper::body::Frame::data(Bytes::copy_from_slice(&[b]))))
        .collect();
    let stream = http_body_util::StreamBody::new(futures::stream::iter(frames));
    let staging = dir.path().join("s");
    let upload = multipart::read(stream, boundary, &staging, u64::MAX)
        .await
        .unwrap();
    assert_eq!(&upload.request[..], b"{\"batchType\":\"PYSPARK\"}");
    assert_eq!(upload.file, staging.join("job.py"));
    assert_eq!(std::fs::read_to_string(&upload.file).unwrap(), script);
    // Over the cap, the staged upload is removed.
    let frames: Vec<Result<hyper::body::Frame<Bytes>, std::convert::Infallible>> =
        vec![Ok(hyper::body::Frame::data(Bytes::from(body)))];
    let stream = http_body_util::StreamBody::new(futures::stream::iter(frames));
    let capped = dir.path().join("capped");
    assert!(matches!(
        multipart::read(stream, boundary, &capped, 10).await,
        Err(multipart::UploadError::TooLarge)
    ));
    assert!(!capped.exists());
}

#[tokio::test]
async fn a_restarted_manager_follows_a_batch_whose_process_lives_and_can_cancel_it() {
    use std::os::unix::process::CommandExt;
    let f = fixture();
    let work = f._dir.path().join("work");
    let dir = work.join("batches");
    let start_orphan = |seconds: &str| {
        let child = std::process::Command::new("sleep")
            .arg(seconds)
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = child.id();
        let record = BatchRecord {
            id: uuid::Uuid::new_v4(),
            user: "alice".to_owned(),
            real_user: "alice".to_owned(),
            batch_type: BatchType::PySpark,
            name: Some(format!("orphan-{seconds}")),
            cluster: "default".to_owned(),
            state: BatchState::Running,
            create_time: 1,
            app_start_time: 1,
            end_time: 0,
            app_id: None,
            app_url: None,
            app_state: Some("RUNNING".to_owned()),
            app_diagnostic: None,
            kyuubi_instance: "old:1".to_owned(),
            pid: Some(pid),
            pid_start: crate::batch::process_start(pid),
        };
        std::fs::write(
            dir.join(format!("{}.json", record.id)),
            serde_json::to_vec(&record).unwrap(),
        )
        .unwrap();
        (record.id.to_string(), child)
    };
    let (long, mut long_child) = start_orphan("60");
    let (short, mut short_child) = start_orphan("0.3");
    let restarted = open_api(f.another_gateway("h:1"));
    let running = on_batch(&restarted, "GET", &long, "alice").await;
    assert_eq!(running["state"], "RUNNING");
    // The short one ends on its own (reaped here, as init would reap an orphan).
    let _ = short_child.wait();
    let ended = wait_for_state(&restarted, &short, "alice", "ERROR").await;
    assert!(
        ended["appDiagnostic"]
            .as_str()
            .unwrap()
            .contains("exit status is unknown"),
        "{ended}"
    );
    // The long one is cancelled through its process group.
    let reaper = std::thread::spawn(move || long_child.wait());
    let closed = on_batch(&restarted, "DELETE", &long, "alice").await;
    assert_eq!(closed["success"], true, "{closed}");
    assert!(
        !reaper.join().unwrap().unwrap().success(),
        "sleep was killed"
    );
    let canceled = on_batch(&restarted, "GET", &long, "alice").await;
    assert_eq!(canceled["state"], "CANCELED");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resubmission_with_the_same_batch_id_answers_with_the_batch_already_started() {
    let f = fixture();
    let api = &f.api;
    let with_id = |id: &str, resource: &str| {
        format!(
            r#"{{"batchType":"PYSPARK","resource":"{resource}","conf":{{"kyuubi.batch.id":"{id}"}}}}"#
        )
    };
    // Eight clients retrying at once, against two gateways sharing the work directory: one
    // batch starts, the others are told it is a duplicate.
    let other = f.another_gateway("other:1");
    let raced = uuid::Uuid::new_v4().to_string();
    let runtime = tokio::runtime::Handle::current();
    let answers: Vec<BatchView> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..8)
            .map(|n| {
                let manager = if n % 2 == 0 { &api.batches } else { &other };
                let body = with_id(&raced, "/jobs/sleep.py");
                let runtime = runtime.clone();
                scope.spawn(move || {
                    let _context = runtime.enter();
                    let request = BatchRequest::from_json(body.as_bytes()).unwrap();
                    manager
                        .submit("alice", LOOPBACK, request, None, None)
                        .unwrap()
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    assert!(answers.iter().all(|batch| batch.id == raced), "{answers:?}");
    let started = answers
        .iter()
        .filter(|batch| !batch.batch_info.contains_key(DUPLICATED))
        .count();
    assert_eq!(started, 1, "{answers:?}");
    assert!(answers
        .iter()
        .all(|batch| batch.batch_info.is_empty() || batch.batch_info[DUPLICATED] == "true"));
    assert_eq!(api.batches.len() + other.len(), 1, "one batch started");

    // Over REST: a retry, even of a different request, shows the batch already running.
    let id = uuid::Uuid::new_v4().to_string();
    let first = post_batch(api, "alice", &with_id(&id, "/jobs/sleep.py")).await;
    assert_eq!(first["batchInfo"], serde_json::json!({}));
    wait_for_state(api, &id, "alice", "RUNNING").await;
    let again = post_batch(api, "alice", &with_id(&id, "/jobs/ok.py")).await;
    assert_eq!(
        (again["id"].as_str(), again["state"].as_str()),
        (Some(id.as_str()), Some("RUNNING"))
    );
    assert_eq!(again["batchInfo"][DUPLICATED], "true");
    // An upload with a taken id leaves nothing staged.
    let boundary = "----kumiho-dup";
    let form_body = form(
        boundary,
        &[
            ("batchRequest", None, &with_id(&id, "ignored")),
            ("resourceFile", Some("job.py"), "print(1)"),
        ],
    );
    let uploaded = json_of(api, upload("alice", boundary, form_body)).await;
    assert_eq!(uploaded["batchInfo"][DUPLICATED], "true");
    let staging = f._dir.path().join("work/batches/.uploads");
    assert_eq!(std::fs::read_dir(&staging).map_or(0, |d| d.count()), 0);

    // Another user may not take the id, nor see the batch through it.
    let (status, body) = call(
        api,
        request(
            "POST",
            "/api/v1/batches",
            Some("bob"),
            &with_id(&id, "/jobs/ok.py"),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(body.contains("another user's batch"), "{body}");
    // An id that is not a UUID is the client's mistake.
    let (status, body) = call(
        api,
        request(
            "POST",
            "/api/v1/batches",
            Some("alice"),
            &with_id("job-1", "/a.py"),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body.contains("kyuubi.batch.id=job-1 must be a UUID"),
        "{body}"
    );

    for manager in [&api.batches, &other] {
        for batch in [&raced, &id] {
            let _ = manager.cancel(batch, "alice", None, true).await;
        }
    }
}

/// `batchInfo`'s mark of a duplicate submission.
const DUPLICATED: &str = crate::batch::DUPLICATED_KEY;

#[tokio::test]
async fn batches_that_ended_longer_ago_than_the_max_age_are_forgotten_with_their_files() {
    let f = fixture();
    let api = &f.api;
    let submit = |resource: &str| {
        api.batches
            .submit(
                "alice",
                LOOPBACK,
                BatchRequest::from_json(submission(resource).as_bytes()).unwrap(),
                None,
                None,
            )
            .unwrap()
            .id
    };
    let finished = submit("/jobs/ok.py");
    let running = submit("/jobs/sleep.py");
    wait_for_state(api, &finished, "alice", "FINISHED").await;
    wait_for_state(api, &running, "alice", "RUNNING").await;
    // A batch that ended four days ago, as a gateway of back then left it.
    let dir = f._dir.path().join("work/batches");
    let mut old: BatchRecord =
        serde_json::from_slice(&std::fs::read(dir.join(format!("{finished}.json"))).unwrap())
            .unwrap();
    old.id = uuid::Uuid::new_v4();
    old.end_time -= 4 * 24 * 3600 * 1000;
    std::fs::write(
        dir.join(format!("{}.json", old.id)),
        serde_json::to_vec(&old).unwrap(),
    )
    .unwrap();
    std::fs::write(dir.join(format!("{}.log", old.id)), "old output\n").unwrap();
    std::fs::create_dir_all(dir.join(old.id.to_string())).unwrap();

    let restarted = f.another_gateway("h:1");
    assert_eq!(restarted.len(), 3);
    restarted.keep_for(Duration::from_secs(72 * 3600));
    let listed: Vec<String> = restarted
        .list(
            &BatchFilter {
                size: 10,
                ..Default::default()
            },
            "alice",
            None,
        )
        .batches
        .into_iter()
        .map(|batch| batch.id)
        .collect();
    assert_eq!(listed, [finished.clone(), running.clone()]);
    let old_id = old.id.to_string();
    assert!(matches!(
        restarted.get(&old_id, "alice", None),
        Err(GatewayError::NotFound(_))
    ));
    for gone in [
        dir.join(format!("{old_id}.json")),
        dir.join(format!("{old_id}.log")),
        dir.join(&old_id),
    ] {
        assert!(!gone.exists(), "{} is left", gone.display());
    }
    assert!(dir.join(format!("{finished}.log")).exists());
    // The running one is kept however old, and the finished one once it is older than asked.
    assert_eq!(restarted.remove_ended_before(Duration::ZERO), 1);
    assert!(restarted.get(&running, "alice", None).is_ok());
    assert!(!dir.join(format!("{finished}.json")).exists());
    api.batches
        .cancel(&running, "alice", None, true)
        .await
        .unwrap();
}

#[tokio::test]
async fn gateways_sharing_a_work_directory_serve_each_others_batches() {
    let f = fixture();
    // Two gateways on one work directory, each serving REST on a port of its own; the batch
    // is submitted to `a` after `b` started, so `b` knows it only from its record.
    let serve_gateway = |instance_listener: tokio::net::TcpListener| {
        let instance = instance_listener.local_addr().unwrap().to_string();
        let api = Arc::new(open_api(f.another_gateway(&instance)));
        let shutdown = CancellationToken::new();
        let server = tokio::spawn(serve(
            instance_listener,
            api.clone(),
            None,
            None,
            shutdown.clone(),
        ));
        (instance, api, shutdown, server)
    };
    let bind = || tokio::net::TcpListener::bind("127.0.0.1:0");
    let (a_instance, a, a_shutdown, a_server) = serve_gateway(bind().await.unwrap());
    let (_, b, _b_shutdown, _) = serve_gateway(bind().await.unwrap());
    let submit = |api: Arc<RestApi>| async move {
        let batch = post_batch(&api, "alice", &submission("/jobs/sleep.py")).await;
        let id = batch["id"].as_str().unwrap().to_owned();
        wait_for_state(&api, &id, "alice", "RUNNING").await;
        id
    };
    let id = submit(a.clone()).await;

    let seen = on_batch(&b, "GET", &id, "alice").await;
    assert_eq!(seen["state"], "RUNNING", "{seen}");
    assert_eq!(seen["kyuubiInstance"], a_instance.as_str());
    let listed = json_of(&b, request("GET", "/api/v1/batches", Some("alice"), "")).await;
    assert_eq!(listed["batches"][0]["id"], id.as_str(), "{listed}");
    let log = json_of(
        &b,
        request(
            "GET",
            &format!("/api/v1/batches/{id}/localLog"),
            Some("alice"),
            "",
        ),
    )
    .await;
    assert!(
        log["logRowSet"][0]
            .as_str()
            .unwrap()
            .starts_with("kumiho: starting"),
        "{log}"
    );
    let (status, body) = call(
        &b,
        request("GET", &format!("/api/v1/batches/{id}"), Some("bob"), ""),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");

    // Cancelling through `b` is done by `a`, which runs the batch.
    let closed = on_batch(&b, "DELETE", &id, "alice").await;
    assert_eq!(closed["success"], true, "{closed}");
    for api in [&a, &b] {
        let batch = on_batch(api, "GET", &id, "alice").await;
        assert_eq!(batch["state"], "CANCELED", "{batch}");
    }

    // A gateway started while `a` runs a batch follows it, and still leaves its cancel to
    // `a`, so that `a`, which waits for the process, records it CANCELED (not ERROR).
    let followed = submit(a.clone()).await;
    let (_, c, _c_shutdown, _) = serve_gateway(bind().await.unwrap());
    let closed = on_batch(&c, "DELETE", &followed, "alice").await;
    assert_eq!(closed["success"], true, "{closed}");
    let ended = on_batch(&a, "GET", &followed, "alice").await;
    assert_eq!(
        (ended["state"].as_str(), ended["appState"].as_str()),
        (Some("CANCELED"), Some("KILLED")),
        "{ended}"
    );

    // When `a` does not answer, `b` says which gateway runs the batch.
    let second = submit(a.clone()).await;
    a_shutdown.cancel();
    a_server.await.unwrap();
    let (status, body) = call(
        &b,
        request(
            "DELETE",
            &format!("/api/v1/batches/{second}"),
            Some("alice"),
            "",
        ),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{body}");
    assert!(body.contains(&a_instance), "{body}");
    a.batches
        .cancel(&second, "alice", None, true)
        .await
        .unwrap();
}

/// A gateway's REST API with sessions: the fixture's clusters (`admin` is a super-user of
/// `default`), an embedded registry in its work directory, and no engine builder, so that a
/// session opens at once and its launch fails.
struct Gateway {
    fixture: Fixture,
    sessions: Arc<crate::session::SessionManager>,
    statements: sessions::SessionsApi,
}

fn gateway() -> Gateway {
    let fixture = fixture();
    let (clusters, _) = ClusterRegistry::load(&fixture._dir.path().join("clusters")).unwrap();
    let router = crate::routing::Router {
        clusters: Arc::new(clusters),
        registries: Arc::new(crate::registries::Registries::new(
            &fixture._dir.path().join("work"),
        )),
        groups: Arc::new(kumiho_engine_launcher::HostGroupProvider),
        default_cluster: "default".to_owned(),
        max_pool_size: 4,
        server_user: "kumiho".to_owned(),
        version: "0.1.0".to_owned(),
    };
    let metrics = Arc::new(crate::metrics::Metrics::new());
    let sessions = Arc::new(crate::session::SessionManager::new(
        router,
        Arc::new(kumiho_engine_launcher::Launcher::new()),
        Duration::from_secs(5),
        3,
        metrics.clone(),
    ));
    let service = Arc::new(crate::metrics::Metered::new(
        crate::proxy::Gateway::new(sessions.clone()),
        metrics,
    ));
    let directory = super::servers::GatewayDirectory {
        advertised: super::servers::advertised_for_tests(
            "127.0.0.1",
            crate::config::HaTransportMode::Binary,
        ),
        ha: None,
    };
    let statements =
        sessions::SessionsApi::new(service, sessions.clone(), "127.0.0.1:10099".into())
            .with_directory(directory);
    Gateway {
        fixture,
        sessions,
        statements,
    }
}

impl Gateway {
    async fn call(&self, method: &str, uri: &str, user: &str, body: &str) -> (StatusCode, String) {
        let req = request(method, uri, Some(user), body);
        let response = self
            .fixture
            .api
            .respond_with(Some(&self.statements), req, "127.0.0.1:1".parse().unwrap())
            .await;
        let status = response.status();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    async fn json(&self, method: &str, uri: &str, user: &str) -> serde_json::Value {
        let (status, body) = self.call(method, uri, user, "").await;
        assert_eq!(status, StatusCode::OK, "{method} {uri}: {body}");
        serde_json::from_str(&body).unwrap()
    }

    fn work_dir(&self) -> std::path::PathBuf {
        self.fixture._dir.path().join("work")
    }
}

#[test]
fn admin_and_exec_pool_paths_route() {
    assert_eq!(
        route("/api/v1/sessions/execPool/statistic"),
        Some(Route::ExecPool)
    );
    assert_eq!(route("/api/v1/admin/sessions"), Some(Route::AdminSessions));
    assert_eq!(
        route("/api/v1/admin/sessions/s"),
        Some(Route::AdminSession("s"))
    );
    assert_eq!(
        route("/api/v1/admin/operations/"),
        Some(Route::AdminOperations)
    );
    assert_eq!(
        route("/api/v1/admin/operations/o"),
        Some(Route::AdminOperation("o"))
    );
    assert_eq!(route("/api/v1/admin/engine"), Some(Route::AdminEngine));
    assert_eq!(route("/api/v1/admin/server"), Some(Route::AdminServers));
    assert_eq!(
        route("/api/v1/admin/batch/count"),
        Some(Route::AdminBatchCount)
    );
    assert_eq!(
        route("/api/v1/admin/refresh/deny_users"),
        Refresh::parse("deny_users").map(Route::AdminRefresh)
    );
    assert_eq!(route("/api/v1/admin/refresh/nonsense"), None);
    assert_eq!(route("/api/v1/admin/nonsense"), None);
}

#[tokio::test]
async fn rest_sessions_are_listed_and_an_admin_closes_them_for_good() {
    let gateway = gateway();
    let opened = gateway.json("POST", "/api/v1/sessions", "ann").await;
    let id = opened["identifier"].as_str().unwrap().to_owned();
    let listed = gateway.json("GET", "/api/v1/sessions", "ann").await;
    assert_eq!(listed[0]["identifier"], id.as_str(), "{listed}");
    assert_eq!(listed[0]["ipAddr"], "127.0.0.1", "{listed}");
    assert_eq!(
        gateway.json("GET", "/api/v1/sessions", "bob").await,
        serde_json::json!([])
    );

    // The admin API is the super-users'.
    for (method, path) in [
        ("GET", "/api/v1/admin/sessions".to_owned()),
        ("DELETE", format!("/api/v1/admin/sessions/{id}")),
        ("GET", "/api/v1/admin/operations".to_owned()),
        ("GET", "/api/v1/admin/engine".to_owned()),
        ("DELETE", "/api/v1/admin/engine".to_owned()),
    ] {
        let (status, body) = gateway.call(method, &path, "ann", "").await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{method} {path}: {body}");
        assert!(
            body.contains("`ann`") && body.contains("super-users"),
            "{body}"
        );
    }
    let all = gateway.json("GET", "/api/v1/admin/sessions", "admin").await;
    assert_eq!(all[0]["user"], "ann", "{all}");
    let none = gateway
        .json("GET", "/api/v1/admin/sessions?users=bob,carl", "admin")
        .await;
    assert_eq!(none, serde_json::json!([]));

    let (status, body) = gateway
        .call(
            "DELETE",
            &format!("/api/v1/admin/sessions/{id}"),
            "admin",
            "",
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(gateway.sessions.is_empty());
    let (status, body) = gateway
        .call("GET", &format!("/api/v1/sessions/{id}"), "ann", "")
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(
        body.contains("closed by administrator `admin`") && body.contains("open a new session"),
        "{body}"
    );
    let (status, _) = gateway
        .call(
            "DELETE",
            &format!("/api/v1/admin/sessions/{id}"),
            "admin",
            "",
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_exec_pool_statistic_is_the_gateways_background_work() {
    let gateway = gateway();
    let statistic = gateway
        .json("GET", "/api/v1/sessions/execPool/statistic", "ann")
        .await;
    assert_eq!(
        statistic,
        serde_json::json!({"execPoolSize": 3, "execPoolActiveCount": 0, "execPoolWorkQueueSize": 0})
    );
}

#[tokio::test]
async fn an_admin_lists_a_users_engines_and_stops_the_process_listening_at_one() {
    use kumiho_engine_launcher::{EmbeddedRegistry, EngineEndpoint, Registry};
    let gateway = gateway();
    // An "engine": a process listening on a port of this host, registered for user `eve`;
    // started in the background of a shell, so that it is not this process's child (which
    // would stay a zombie until waited for) but init's, as an engine whose gateway is gone.
    let mut shell = std::process::Command::new("sh")
        .args([
            "-c",
            "python3 -c 'import os,socket,time\ns=socket.socket()\ns.bind((\"127.0.0.1\",0))\ns.listen()\nprint(os.getpid(),s.getsockname()[1],flush=True)\ntime.sleep(60)' ref-eve &",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(shell.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    shell.wait().unwrap();
    let (pid, port) = line.trim().split_once(' ').unwrap();
    let (pid, port): (u32, u16) = (pid.parse().unwrap(), port.parse().unwrap());
    let registry = EmbeddedRegistry::open(gateway.work_dir()).unwrap();
    let space = "/kumiho_0.1.0_USER_DATAFUSION/eve/default";
    let registered = registry
        .register_engine(
            space,
            EngineEndpoint {
                host: "127.0.0.1".to_owned(),
                port,
                version: "0.1.0".to_owned(),
                ref_id: "ref-eve".to_owned(),
            },
        )
        .await
        .unwrap();

    let engines = gateway
        .json(
            "GET",
            "/api/v1/admin/engine?hive.server2.proxy.user=eve",
            "admin",
        )
        .await;
    assert_eq!(engines.as_array().unwrap().len(), 1, "{engines}");
    let listed = &engines[0];
    assert_eq!(
        (
            &listed["user"],
            &listed["engineType"],
            &listed["sharelevel"],
            &listed["subdomain"],
            &listed["namespace"],
            &listed["attributes"]["refId"],
        ),
        (
            &serde_json::json!("eve"),
            &serde_json::json!("DATAFUSION"),
            &serde_json::json!("USER"),
            &serde_json::json!("default"),
            &serde_json::json!(space),
            &serde_json::json!("ref-eve"),
        ),
        "{listed}"
    );
    assert_eq!(listed["instance"], format!("127.0.0.1:{port}"));
    for other in [
        "proxyUser=fay",
        "proxyUser=eve&sharelevel=GROUP",
        "proxyUser=eve&subdomain=etl",
    ] {
        let listed = gateway
            .json("GET", &format!("/api/v1/admin/engine?{other}"), "admin")
            .await;
        assert_eq!(listed, serde_json::json!([]), "{other}");
    }
    let (status, body) = gateway
        .call("GET", "/api/v1/admin/engine?sharelevel=TEAM", "admin", "")
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, body) = gateway
        .call("GET", "/api/v1/admin/engine?cluster=nospark", "admin", "")
        .await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "not a super-user there: {body}"
    );

    let (status, body) = gateway
        .call(
            "DELETE",
            "/api/v1/admin/engine?hive.server2.proxy.user=eve",
            "admin",
            "",
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        body.contains("refId=ref-eve") && body.contains(&format!("process {pid} stopped")),
        "{body}"
    );
    assert!(!kumiho_engine_launcher::is_alive(pid));
    drop(registered);
    let (status, body) = gateway
        .call(
            "DELETE",
            "/api/v1/admin/engine?hive.server2.proxy.user=eve",
            "admin",
            "",
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(body.contains("no engine is registered"), "{body}");
}

#[tokio::test]
async fn without_ha_the_server_list_is_this_gateway_and_refreshes_are_for_admins() {
    let gateway = gateway();
    let servers = gateway.json("GET", "/api/v1/admin/server", "admin").await;
    assert_eq!(
        servers,
        serde_json::json!([{
            "nodeName": "serverUri=127.0.0.1:10009;version=1.2.0",
            "namespace": "",
            "instance": "127.0.0.1:10009",
            "host": "127.0.0.1",
            "port": 10009,
            "attributes": {"serverUri": "127.0.0.1:10009", "version": "1.2.0"},
            "status": "Running",
        }])
    );
    for (method, path) in [
        ("GET", "/api/v1/admin/server"),
        ("POST", "/api/v1/admin/refresh/hadoop_conf"),
        ("POST", "/api/v1/admin/refresh/deny_ips"),
    ] {
        let (status, body) = gateway.call(method, path, "ann", "").await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{method} {path}: {body}");
    }
    let (status, body) = gateway
        .call(
            "POST",
            "/api/v1/admin/refresh/user_defaults_conf",
            "admin",
            "",
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        body.starts_with("Refresh the user defaults conf successfully: ")
            && body.contains("no cluster changed"),
        "{body}"
    );
    let (status, body) = gateway
        .call("POST", "/api/v1/admin/refresh/deny_users", "admin", "")
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        body.starts_with("Refresh the deny users successfully: "),
        "{body}"
    );
}

#[tokio::test]
async fn an_admin_counts_every_users_batches_by_type_user_and_state() {
    let f = fixture();
    let api = &f.api;
    let mut finished = Vec::new();
    for user in ["alice", "alice", "bob"] {
        let batch = post_batch(api, user, &submission("/jobs/ok.py")).await;
        finished.push((batch["id"].as_str().unwrap().to_owned(), user));
    }
    let spark = r#"{"batchType":"SPARK","resource":"/jobs/etl.jar","className":"etl.Main","conf":{"spark.ui.enabled":"false"}}"#;
    let jar = post_batch(api, "carol", spark).await;
    finished.push((jar["id"].as_str().unwrap().to_owned(), "carol"));
    for (id, user) in &finished {
        wait_for_state(api, id, user, "FINISHED").await;
    }
    let running = post_batch(api, "bob", &submission("/jobs/sleep.py")).await;
    let running_id = running["id"].as_str().unwrap().to_owned();
    wait_for_state(api, &running_id, "bob", "RUNNING").await;
    let count = |query: &'static str, user: &'static str| async move {
        call(
            api,
            request(
                "GET",
                &format!("/api/v1/admin/batch/count{query}"),
                Some(user),
                "",
            ),
        )
        .await
    };
    for (query, expected) in [
        // Kyuubi's default type is SPARK.
        ("", 1),
        ("?batchType=PYSPARK", 4),
        ("?batchType=PYSPARK&batchUser=alice", 2),
        ("?batchType=PYSPARK&batchState=RUNNING", 1),
        ("?batchType=PYSPARK&batchUser=bob&batchState=FINISHED", 1),
        ("?batchType=SPARK&batchUser=alice", 0),
    ] {
        let (status, body) = count(query, "admin").await;
        assert_eq!(status, StatusCode::OK, "{query}: {body}");
        let body: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(body, serde_json::json!({ "count": expected }), "{query}");
    }
    // Users count nothing but get told why; a bad state is the caller's fault.
    let (status, body) = count("?batchType=PYSPARK", "alice").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(body.contains("super-users"), "{body}");
    let (status, body) = count("?batchState=SLEEPY", "admin").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    on_batch(api, "DELETE", &running_id, "bob").await;
}
