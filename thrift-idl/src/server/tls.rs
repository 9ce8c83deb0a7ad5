//! TLS on a server's port: a certificate chain and its key from PEM files, read again when
//! they change, and the per-connection handshake.
//!
//! A TLS port takes TLS only. A connection is told apart by its first byte, peeked (not read):
//! a TLS handshake starts with a handshake record, `0x16`. Anything else is a plaintext client
//! on the TLS port; it gets an answer it can show its user, from the bytes the port's kind
//! (binary or HTTP) chooses, and is closed, with one line in the log. Its bytes never reach
//! rustls and nothing is allocated for them.
//!
//! The files are looked at again (their size, time and inode) at most once per
//! [`RELOAD_CHECK`], when a connection arrives: a certificate renewed on disk (certbot, a
//! Kubernetes secret's symlink swap) serves new connections within seconds, with no restart.
//! A pair that does not load (a key written before its certificate, say) is logged once and
//! the last good pair stays in force. Key material is never logged; errors name the file and
//! what is wrong with it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::ParsedCertificate;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

/// How often the certificate and key files are looked at for a change, at most.
pub const RELOAD_CHECK: Duration = Duration::from_secs(1);

/// Longest time a client has to send its first byte and finish the TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);

/// First byte of a TLS record carrying a handshake message (a ClientHello opens with it).
const TLS_HANDSHAKE_RECORD: u8 = 0x16;

/// What a plaintext client on a TLS port is answered, given its first byte: bytes to write
/// before closing, or `None` to close at once.
pub type PlaintextAnswer = fn(first_byte: u8) -> Option<Vec<u8>>;

/// TLS for a server's ports, shared by their connections.
pub struct ServerTls {
    cert_file: PathBuf,
    key_file: PathBuf,
    /// A std mutex: held only to look at the files, never across an `.await`.
    current: Mutex<Current>,
}

/// The pair in force and what is known of the files.
struct Current {
    acceptor: TlsAcceptor,
    /// The files as they were when `acceptor` was loaded from them.
    loaded: Stamp,
    /// When the files were last looked at.
    checked: Instant,
    /// The files as they were when they last failed to load: not tried (nor logged) again
    /// until they change again.
    refused: Option<Stamp>,
}

/// What tells that a file changed: size, modification time and inode, of both files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp([Option<(u64, SystemTime, u64)>; 2]);

impl Stamp {
    fn of(cert_file: &Path, key_file: &Path) -> Self {
        let file = |path: &Path| {
            let meta = std::fs::metadata(path).ok()?;
            Some((meta.len(), meta.modified().ok()?, inode(&meta)))
        };
        Stamp([file(cert_file), file(key_file)])
    }
}

#[cfg(unix)]
fn inode(meta: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(meta)
}

#[cfg(not(unix))]
fn inode(_: &std::fs::Metadata) -> u64 {
    0
}

impl ServerTls {
    /// Loads the certificate chain (PEM, the server's certificate first, then the
    /// intermediates) and its private key (PEM: PKCS#8, PKCS#1 RSA or SEC1 EC). The error
    /// names the file and what is wrong: missing, unreadable, no PEM of the right kind, an
    /// encrypted key, a key that is not the certificate's.
    pub fn load(cert_file: &Path, key_file: &Path) -> Result<Self, String> {
        let loaded = Stamp::of(cert_file, key_file);
        let config = load_config(cert_file, key_file)?;
        Ok(Self {
            cert_file: cert_file.to_owned(),
            key_file: key_file.to_owned(),
            current: Mutex::new(Current {
                acceptor: TlsAcceptor::from(config),
                loaded,
                checked: Instant::now(),
                refused: None,
            }),
        })
    }

    /// The certificate chain's file.
    pub fn cert_file(&self) -> &Path {
        &self.cert_file
    }

    /// The acceptor for a new connection, from files read again if they changed.
    fn acceptor(&self) -> TlsAcceptor {
        let mut current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        if current.checked.elapsed() >= RELOAD_CHECK {
            current.checked = Instant::now();
            let stamp = Stamp::of(&self.cert_file, &self.key_file);
            if stamp != current.loaded && Some(stamp) != current.refused {
                match load_config(&self.cert_file, &self.key_file) {
                    Ok(config) => {
                        current.acceptor = TlsAcceptor::from(config);
                        current.loaded = stamp;
                        current.refused = None;
                        tracing::info!(cert_file = %self.cert_file.display(), "TLS certificate reloaded");
                    }
                    Err(e) => {
                        current.refused = Some(stamp);
                        tracing::warn!(error = %e, "the TLS certificate or key changed but does not load; the last good pair stays in force");
                    }
                }
            }
        }
        current.acceptor.clone()
    }

    /// Runs the server side of the handshake on a new connection. `None`: the connection is
    /// over (the client hung up, was not speaking TLS and was answered with
    /// `plaintext_answer`, failed the handshake, or shutdown came first); one line is logged.
    pub async fn accept(
        &self,
        stream: TcpStream,
        plaintext_answer: PlaintextAnswer,
        shutdown: &CancellationToken,
    ) -> Option<TlsStream<TcpStream>> {
        let handshake = async {
            let mut first = [0u8; 1];
            match stream.peek(&mut first).await {
                Ok(0) => return Err(None),
                Ok(_) => {}
                Err(e) => {
                    return Err(Some(format!(
                        "connection failed before its first byte: {e}"
                    )))
                }
            }
            if first[0] != TLS_HANDSHAKE_RECORD {
                return Ok(Err((stream, first[0])));
            }
            match self.acceptor().accept(stream).await {
                Ok(stream) => Ok(Ok(stream)),
                Err(e) => Err(Some(format!("TLS handshake failed: {e}"))),
            }
        };
        let outcome = tokio::select! {
            _ = shutdown.cancelled() => return None,
            outcome = tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake) => outcome,
        };
        match outcome {
            Ok(Ok(Ok(stream))) => Some(stream),
            Ok(Ok(Err((stream, first)))) => {
                tracing::info!(
                    first_byte = format_args!("{first:#04x}"),
                    "a plaintext client on a TLS port: refused (the client should connect with TLS, e.g. JDBC ;ssl=true)"
                );
                answer_plaintext(stream, plaintext_answer(first)).await;
                None
            }
            Ok(Err(None)) => {
                tracing::debug!("client hung up before its first byte");
                None
            }
            Ok(Err(Some(reason))) => {
                tracing::info!("{reason}");
                None
            }
            Err(_) => {
                tracing::info!(
                    "the TLS handshake did not finish within {}s; closed",
                    HANDSHAKE_TIMEOUT.as_secs()
                );
                None
            }
        }
    }
}

impl std::fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerTls")
            .field("cert_file", &self.cert_file)
            .field("key_file", &self.key_file)
            .finish_non_exhaustive()
    }
}

/// Writes `answer` (if any) to a plaintext client and closes without resetting the
/// connection: what the client sent meanwhile is read and dropped (into a buffer on the
/// stack, at most 64 KiB and one second), so that the answer is not lost to a reset.
async fn answer_plaintext(mut stream: TcpStream, answer: Option<Vec<u8>>) {
    let mut sink = [0u8; 4096];
    let closing = async {
        if let Some(answer) = answer {
            stream.write_all(&answer).await?;
        }
        stream.shutdown().await?;
        let mut drained = 0;
        while drained < 64 * 1024 {
            match stream.read(&mut sink).await? {
                0 => break,
                n => drained += n,
            }
        }
        Ok::<_, std::io::Error>(())
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), closing).await;
}

/// The server configuration for a certificate chain and key, each error naming its file.
fn load_config(cert_file: &Path, key_file: &Path) -> Result<Arc<rustls::ServerConfig>, String> {
    let certs = read_certificates(cert_file, "certificate file")?;
    let key = read_key(key_file)?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let signing_key = provider.key_provider.load_private_key(key).map_err(|e| {
        format!(
            "key file {}: not a usable private key ({e}); RSA, ECDSA P-256/P-384 and Ed25519 keys are supported, and an EC key must hold its public key, which keys exported from Java keystores leave out: rewrite it with `openssl ec -in KEY -out KEY`",
            key_file.display()
        )
    })?;
    let certified = rustls::sign::CertifiedKey::new(certs, signing_key);
    let end_entity = certified.end_entity_cert().map_err(|e| e.to_string())?;
    ParsedCertificate::try_from(end_entity).map_err(|e| {
        format!(
            "certificate file {}: the first certificate does not parse ({e})",
            cert_file.display()
        )
    })?;
    match certified.keys_match() {
        Ok(()) | Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::Unknown)) => {}
        Err(_) => {
            return Err(format!(
                "key file {} is not the private key of the first certificate in {}; give the key the certificate was issued for, and the server's own certificate first in the chain",
                key_file.display(),
                cert_file.display()
            ))
        }
    }
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(rustls::sign::SingleCertAndKey::from(certified)));
    Ok(Arc::new(config))
}

/// Reads a PEM file whole; the error names it and says what is wrong.
fn read_pem(path: &Path, what: &str) -> Result<Vec<u8>, String> {
    let text = std::fs::read(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!("{what} {} does not exist", path.display()),
        std::io::ErrorKind::PermissionDenied => format!(
            "{what} {} cannot be read by this user: permission denied",
            path.display()
        ),
        _ => format!("{what} {} cannot be read: {e}", path.display()),
    })?;
    if text.is_empty() {
        return Err(format!("{what} {} is empty", path.display()));
    }
    Ok(text)
}

/// Why a PEM file did not parse, without quoting its content (a key file's lines are key
/// material).
fn pem_error(error: &pem::Error) -> &'static str {
    match error {
        pem::Error::MissingSectionEnd { .. } => "a PEM section has no END line",
        pem::Error::IllegalSectionStart { .. } => "a PEM BEGIN line is malformed",
        pem::Error::Base64Decode(_) => "a PEM section is not valid base64",
        _ => "it is not valid PEM",
    }
}

/// The certificates of a PEM file, in order; `what` names the file in errors ("certificate
/// file", "CA file"). Also how the gateway reads the CAs it trusts as a TLS client (LDAP).
pub fn read_certificates(path: &Path, what: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let text = read_pem(path, what)?;
    let certs = CertificateDer::pem_slice_iter(&text)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{what} {}: {}", path.display(), pem_error(&e)))?;
    if certs.is_empty() {
        return Err(format!(
            "{what} {} holds no PEM certificate (-----BEGIN CERTIFICATE-----){}",
            path.display(),
            if looks_like_der_or_keystore(&text) {
                "; it looks binary (DER, or a Java keystore): convert it to PEM, see the README"
            } else {
                ""
            }
        ));
    }
    Ok(certs)
}

/// The private key of a PEM file.
fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, String> {
    let what = "key file";
    let text = read_pem(path, what)?;
    match PrivateKeyDer::from_pem_slice(&text) {
        Ok(key) => Ok(key),
        Err(pem::Error::NoItemsFound) => {
            let hint = if contains(&text, b"ENCRYPTED PRIVATE KEY")
                || contains(&text, b"Proc-Type: 4,ENCRYPTED")
            {
                "; the key is encrypted: write it out unencrypted (`openssl pkey -in KEY -out KEY.pem`) and protect the file (mode 0600)"
            } else if contains(&text, b"BEGIN CERTIFICATE") {
                "; it holds a certificate: give the private key's file"
            } else if looks_like_der_or_keystore(&text) {
                "; it looks binary (DER, or a Java keystore): convert it to PEM, see the README"
            } else {
                ""
            };
            Err(format!(
                "{what} {} holds no PEM private key (-----BEGIN PRIVATE KEY-----, RSA or EC){hint}",
                path.display()
            ))
        }
        Err(e) => Err(format!("{what} {}: {}", path.display(), pem_error(&e))),
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

/// DER and Java keystores start with bytes no text file does.
fn looks_like_der_or_keystore(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x30]) || bytes.starts_with(&[0xfe, 0xed, 0xfe, 0xed])
}
