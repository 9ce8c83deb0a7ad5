//! The gate against a stand-in Thrift Server: SASL PLAIN admitting only the gate's token, that
//! records the user, then echo.

use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;

use super::*;

const SECRET: &str = "the-internal-secret";

/// A Thrift Server stand-in: negotiates PLAIN admitting only `token`, reports the user, echoes.
async fn fake_thrift_server(token: &GateToken) -> (String, mpsc::UnboundedReceiver<String>) {
    let token = SharedSecret::new(token.expose());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let (users, users_seen) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let users = users.clone();
            let token = token.clone();
            tokio::spawn(async move {
                let mut conn = Connection::new(stream, Framing::Raw, NEGOTIATION_LIMIT);
                let Ok(user) = sasl::accept_plain(&mut conn, &token).await else {
                    return;
                };
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

/// A gate in front of `upstream`, logging in there with `token`, serving on a free port;
/// returns it and its address.
async fn gate_to(upstream: String, token: GateToken) -> (Arc<Gate>, String) {
    let gate = Gate::new(upstream, SharedSecret::new(SECRET), token);
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
    let token = GateToken::generate().unwrap();
    let (upstream, mut users_seen) = fake_thrift_server(&token).await;
    let (gate, address) = gate_to(upstream, token).await;
    let mut client = connect(&address, "alice", SECRET).await.unwrap();
    assert_eq!(users_seen.recv().await.unwrap(), "alice");
    // SASL data frames go through unchanged and come back, a small one and one larger than
    // the relay's buffers.
    for payload in [b"hello".to_vec(), vec![7u8; 3 * RELAY_BUFFER + 5]] {
        let length = u32::try_from(payload.len()).unwrap().to_be_bytes();
        let frame = [&length[..], &payload].concat();
        let (mut read, mut write) = client.split();
        let (written, echoed) = tokio::join!(write.write_all(&frame), async {
            let mut echoed = vec![0; frame.len()];
            read.read_exact(&mut echoed).await.map(|_| echoed)
        });
        written.unwrap();
        assert_eq!(echoed.unwrap(), frame);
    }
    assert_eq!(gate.open_connections(), 1);
    drop(client);
    until_open(&gate, 0).await;
}

#[tokio::test]
async fn a_wrong_password_is_refused_with_a_message_and_never_reaches_spark() {
    let token = GateToken::generate().unwrap();
    let (upstream, mut users_seen) = fake_thrift_server(&token).await;
    let (gate, address) = gate_to(upstream, token).await;
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
    let (_gate, address) = gate_to(upstream, GateToken::generate().unwrap()).await;
    let error = connect(&address, "alice", SECRET)
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("not accepting connections"), "{error}");
}

#[tokio::test]
async fn a_gate_whose_token_the_thrift_server_refuses_lets_nobody_in() {
    let (upstream, mut users_seen) = fake_thrift_server(&GateToken::generate().unwrap()).await;
    let (gate, address) = gate_to(upstream, GateToken::generate().unwrap()).await;
    let error = connect(&address, "alice", SECRET).await;
    // The client was told COMPLETE by the gate, then the gate closed: nothing is relayed.
    if let Ok(mut client) = error {
        let mut byte = [0u8; 1];
        assert_eq!(client.read(&mut byte).await.unwrap_or(0), 0);
    }
    until_open(&gate, 0).await;
    assert!(
        users_seen.try_recv().is_err(),
        "the Thrift Server admitted the gate"
    );
}
