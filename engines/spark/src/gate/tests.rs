//! The gate against a stand-in Thrift Server: SASL PLAIN that records the user, then echo.

use std::time::Duration;

use kumiho_thrift::auth::AnyPassword;
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;

use super::*;

const SECRET: &str = "the-internal-secret";

/// A Thrift Server stand-in: negotiates PLAIN with any password, reports the user, echoes.
async fn fake_thrift_server() -> (String, mpsc::UnboundedReceiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let (users, users_seen) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let users = users.clone();
            tokio::spawn(async move {
                let mut conn = Connection::new(stream, Framing::Raw, NEGOTIATION_LIMIT);
                let user = sasl::accept_plain(&mut conn, &AnyPassword).await.unwrap();
                users.send(user).unwrap();
                let (mut stream, unread) = conn.into_parts();
                stream.write_all(&unread).await.unwrap();
                let (mut read, mut write) = stream.split();
                let _ = tokio::io::copy(&mut read, &mut write).await;
            });
        }
    });
    (address, users_seen)
}

/// A gate in front of `upstream`, serving on a free port; returns it and its address.
async fn gate_to(upstream: String) -> (Arc<Gate>, String) {
    let gate = Gate::new(upstream, SharedSecret::new(SECRET));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    tokio::spawn(Arc::clone(&gate).serve(listener));
    (gate, address)
}

async fn connect(address: &str, user: &str, password: &str) -> Result<TcpStream, WireError> {
    let stream = TcpStream::connect(address).await?;
    let mut conn = Connection::new(stream, Framing::Raw, NEGOTIATION_LIMIT);
    sasl::start_plain(&mut conn, user, password).await?;
    Ok(conn.into_parts().0)
}

/// Waits (bounded) until the gate counts `expected` open connections.
async fn until_open(gate: &Gate, expected: usize) {
    tokio::time::timeout(Duration::from_secs(10), async {
        while gate.open_connections() != expected {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap_or_else(|_| {
        panic!(
            "open connections stayed {} instead of {expected}",
            gate.open_connections()
        )
    });
}

#[tokio::test]
async fn the_gateway_is_relayed_as_its_user_and_counted_while_connected() {
    let (upstream, mut users_seen) = fake_thrift_server().await;
    let (gate, address) = gate_to(upstream).await;
    let mut client = connect(&address, "alice", SECRET).await.unwrap();
    assert_eq!(users_seen.recv().await.unwrap(), "alice");
    // A SASL data frame goes through unchanged and comes back.
    let frame = [&5u32.to_be_bytes()[..], b"hello"].concat();
    client.write_all(&frame).await.unwrap();
    let mut echoed = vec![0; frame.len()];
    client.read_exact(&mut echoed).await.unwrap();
    assert_eq!(echoed, frame);
    assert_eq!(gate.open_connections(), 1);
    drop(client);
    until_open(&gate, 0).await;
}

#[tokio::test]
async fn a_wrong_password_is_refused_with_a_message_and_never_reaches_spark() {
    let (upstream, mut users_seen) = fake_thrift_server().await;
    let (gate, address) = gate_to(upstream).await;
    let error = connect(&address, "mallory", "guess").await.unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("wrong password for user 'mallory'") && !message.contains(SECRET),
        "{message}"
    );
    until_open(&gate, 0).await;
    assert!(
        users_seen.try_recv().is_err(),
        "the Thrift Server saw a login"
    );
}

#[tokio::test]
async fn a_thrift_server_that_is_gone_is_reported_in_the_sasl_answer() {
    let gone = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let upstream = gone.local_addr().unwrap().to_string();
    drop(gone);
    let (_gate, address) = gate_to(upstream).await;
    let error = connect(&address, "alice", SECRET)
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("not accepting connections"), "{error}");
}
