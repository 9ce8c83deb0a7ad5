use tokio::io::{duplex, AsyncWriteExt};

use super::*;

fn frame(payload: &[u8]) -> Vec<u8> {
    let mut bytes = (payload.len() as u32).to_be_bytes().to_vec();
    bytes.extend_from_slice(payload);
    bytes
}

#[tokio::test]
async fn trusted_frames_are_taken_whole_however_the_socket_splits_them() {
    let (mut peer, stream) = duplex(64);
    let mut conn = Connection::new(stream, Framing::SaslFrames, 1 << 20);
    conn.trust_frame_boundaries();
    // Not a Thrift message: proof that nothing walks the bytes.
    let first = vec![0xAB; 300];
    let second = b"second".to_vec();
    let mut wire = frame(&first);
    wire.extend(frame(&second));
    let writer = tokio::spawn(async move {
        for piece in wire.chunks(7) {
            peer.write_all(piece).await.unwrap();
        }
        peer
    });
    assert_eq!(conn.read_message().await.unwrap().unwrap(), first);
    assert_eq!(conn.read_message().await.unwrap().unwrap(), second);
    drop(writer.await.unwrap());
    assert!(conn.read_message().await.unwrap().is_none());
}

#[tokio::test]
async fn a_trusted_frame_over_the_limit_is_refused_before_it_arrives() {
    let (mut peer, stream) = duplex(64);
    let mut conn = Connection::new(stream, Framing::SaslFrames, 1024);
    conn.trust_frame_boundaries();
    peer.write_all(&(1u32 << 31).to_be_bytes()).await.unwrap();
    let error = conn.read_message().await.unwrap_err();
    assert!(matches!(error, WireError::TooLarge { .. }), "{error:?}");
}

#[tokio::test]
async fn a_frame_cut_short_by_the_peer_is_an_error_not_a_message() {
    let (mut peer, stream) = duplex(64);
    let mut conn = Connection::new(stream, Framing::SaslFrames, 1024);
    conn.trust_frame_boundaries();
    peer.write_all(&frame(b"whole")[..6]).await.unwrap();
    drop(peer);
    assert!(matches!(
        conn.read_message().await.unwrap_err(),
        WireError::Closed
    ));
}
