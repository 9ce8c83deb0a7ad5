//! `multipart/form-data` batch submissions with the resource uploaded (Kyuubi's
//! `openBatchSessionWithUpload`): the part `batchRequest` (JSON, at most [`MAX_BODY`]) and
//! the part `resourceFile`, streamed to a file as it arrives, never held in memory.

use std::path::{Path, PathBuf};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Body;
use memchr::memmem;
use tokio::io::AsyncWriteExt;

use super::MAX_BODY;

/// Longest header block of one part.
const MAX_PART_HEADERS: usize = 16 * 1024;

/// The uploaded request: the `batchRequest` JSON and the resource file, staged in a
/// directory of its own (which the caller moves or removes).
#[derive(Debug)]
pub struct Upload {
    pub request: Bytes,
    /// The uploaded file, in `staging`, under its (sanitised) file name.
    pub file: PathBuf,
    /// The directory of this upload.
    pub staging: PathBuf,
}

/// Why an upload was refused.
#[derive(Debug)]
pub enum UploadError {
    /// Over the cap: 413.
    TooLarge,
    /// Not a form the API takes: 400, with what is wrong.
    Bad(String),
    /// The staging file could not be written: the gateway's fault.
    Io(std::io::Error),
}

/// The boundary of a `multipart/form-data` content type.
pub fn boundary(content_type: &str) -> Option<String> {
    let (kind, params) = content_type.split_once(';')?;
    if !kind.trim().eq_ignore_ascii_case("multipart/form-data") {
        return None;
    }
    params.split(';').find_map(|param| {
        let (key, value) = param.split_once('=')?;
        key.trim()
            .eq_ignore_ascii_case("boundary")
            .then(|| value.trim().trim_matches('"').to_owned())
            .filter(|b| !b.is_empty() && b.len() <= 70)
    })
}

/// Reads a form from `body`, at most `max` bytes in all, staging the file under `staging`
/// (created; removed again when the form is refused).
pub async fn read<B>(
    body: B,
    boundary: &str,
    staging: &Path,
    max: u64,
) -> Result<Upload, UploadError>
where
    B: Body<Data = Bytes>,
    B::Error: std::fmt::Display,
{
    let result = read_into(body, boundary, staging, max).await;
    if result.is_err() {
        let _ = tokio::fs::remove_dir_all(staging).await;
    }
    result
}

async fn read_into<B>(
    body: B,
    boundary: &str,
    staging: &Path,
    max: u64,
) -> Result<Upload, UploadError>
where
    B: Body<Data = Bytes>,
    B::Error: std::fmt::Display,
{
    tokio::fs::create_dir_all(staging)
        .await
        .map_err(UploadError::Io)?;
    let mut parser = Parser::new(boundary, staging.to_owned());
    let mut body = std::pin::pin!(body);
    let mut total: u64 = 0;
    while let Some(frame) = body.frame().await {
        let frame =
            frame.map_err(|e| UploadError::Bad(format!("cannot read the request body: {e}")))?;
        if let Ok(data) = frame.into_data() {
            total += data.len() as u64;
            if total > max {
                return Err(UploadError::TooLarge);
            }
            parser.feed(&data).await?;
        }
    }
    parser.finish().await
}

/// Where the parser is in the form.
enum State {
    /// Before the first boundary.
    Preamble,
    /// In a part's headers.
    Headers,
    /// In a part's content.
    Content(Sink),
    /// After the closing boundary.
    Epilogue,
}

/// Where a part's content goes.
enum Sink {
    Request(Vec<u8>),
    File(tokio::fs::File),
}

struct Parser {
    /// `\r\n--BOUNDARY`: every delimiter, the first one included once the body is given a
    /// leading CRLF.
    delimiter: Vec<u8>,
    buf: Vec<u8>,
    state: State,
    staging: PathBuf,
    request: Option<Vec<u8>>,
    file: Option<PathBuf>,
}

impl Parser {
    fn new(boundary: &str, staging: PathBuf) -> Parser {
        Parser {
            delimiter: format!("\r\n--{boundary}").into_bytes(),
            buf: b"\r\n".to_vec(),
            state: State::Preamble,
            staging,
            request: None,
            file: None,
        }
    }

    async fn feed(&mut self, data: &[u8]) -> Result<(), UploadError> {
        self.buf.extend_from_slice(data);
        loop {
            match &mut self.state {
                State::Epilogue => {
                    self.buf.clear();
                    return Ok(());
                }
                State::Preamble => match memmem::find(&self.buf, &self.delimiter) {
                    Some(at) => {
                        self.buf.drain(..at + self.delimiter.len());
                        self.state = State::Headers;
                    }
                    None => {
                        let keep = self.delimiter.len();
                        let cut = self.buf.len().saturating_sub(keep);
                        self.buf.drain(..cut);
                        return Ok(());
                    }
                },
                State::Headers => {
                    // The delimiter's line end, or `--` after the last one, comes first.
                    if self.buf.len() < 2 {
                        return Ok(());
                    }
                    if self.buf.starts_with(b"--") {
                        self.state = State::Epilogue;
                        continue;
                    }
                    let Some(end) = memmem::find(&self.buf, b"\r\n\r\n") else {
                        if self.buf.len() > MAX_PART_HEADERS {
                            return Err(UploadError::Bad(
                                "a part's headers are too long".to_owned(),
                            ));
                        }
                        return Ok(());
                    };
                    let headers: Vec<u8> = self.buf.drain(..end + 4).collect();
                    let sink = self.open_part(&String::from_utf8_lossy(&headers)).await?;
                    self.state = State::Content(sink);
                }
                State::Content(sink) => {
                    let found = memmem::find(&self.buf, &self.delimiter);
                    let cut = match found {
                        Some(at) => at,
                        None => self.buf.len().saturating_sub(self.delimiter.len()),
                    };
                    let content: Vec<u8> = self.buf.drain(..cut).collect();
                    match sink {
                        Sink::Request(bytes) => {
                            bytes.extend_from_slice(&content);
                            if bytes.len() > MAX_BODY {
                                return Err(UploadError::TooLarge);
                            }
                        }
                        Sink::File(file) => {
                            file.write_all(&content).await.map_err(UploadError::Io)?
                        }
                    }
                    if found.is_none() {
                        return Ok(());
                    }
                    self.buf.drain(..self.delimiter.len());
                    match std::mem::replace(&mut self.state, State::Headers) {
                        State::Content(Sink::Request(bytes)) => self.request = Some(bytes),
                        State::Content(Sink::File(mut file)) => {
                            file.flush().await.map_err(UploadError::Io)?
                        }
                        _ => unreachable!("in a part's content"),
                    }
                }
            }
        }
    }

    /// The sink of a part, from its headers: `batchRequest` or `resourceFile`.
    async fn open_part(&mut self, headers: &str) -> Result<Sink, UploadError> {
        let headers = headers.trim_start_matches("\r\n");
        let disposition = headers
            .split("\r\n")
            .find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.trim()
                    .eq_ignore_ascii_case("content-disposition")
                    .then_some(value)
            })
            .ok_or_else(|| UploadError::Bad("a part has no Content-Disposition".to_owned()))?;
        let name = parameter(disposition, "name").unwrap_or_default();
        match name.as_str() {
            "batchRequest" if self.request.is_none() => Ok(Sink::Request(Vec::new())),
            "resourceFile" if self.file.is_none() => {
                let file_name = sanitize(&parameter(disposition, "filename").unwrap_or_default());
                let path = self.staging.join(file_name);
                let file = tokio::fs::File::create(&path)
                    .await
                    .map_err(UploadError::Io)?;
                self.file = Some(path);
                Ok(Sink::File(file))
            }
            "batchRequest" | "resourceFile" => Err(UploadError::Bad(format!(
                "the form has two `{name}` parts; send one"
            ))),
            other => Err(UploadError::Bad(format!(
                "part `{other}` is not supported: the form takes `batchRequest` (the BatchRequest JSON) and `resourceFile` (the jar or Python file); extra resource files are not supported"
            ))),
        }
    }

    async fn finish(self) -> Result<Upload, UploadError> {
        if !matches!(self.state, State::Epilogue) {
            return Err(UploadError::Bad(
                "the form ends before its closing boundary".to_owned(),
            ));
        }
        let request = self.request.ok_or_else(|| {
            UploadError::Bad(
                "the form has no `batchRequest` part (the BatchRequest JSON)".to_owned(),
            )
        })?;
        let file = self.file.ok_or_else(|| {
            UploadError::Bad(
                "the form has no `resourceFile` part (the jar or Python file)".to_owned(),
            )
        })?;
        Ok(Upload {
            request: Bytes::from(request),
            file,
            staging: self.staging,
        })
    }
}

/// A parameter (`name="value"` or `name=value`) of a header value.
fn parameter(value: &str, key: &str) -> Option<String> {
    value.split(';').skip(1).find_map(|param| {
        let (k, v) = param.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case(key)
            .then(|| v.trim().trim_matches('"').to_owned())
    })
}

/// An uploaded file's name as a plain file name: its last path segment, with anything but
/// letters, digits, `.`, `-` and `_` replaced; `resource` when nothing is left.
pub fn sanitize(name: &str) -> String {
    let last = name.rsplit(['/', '\\']).next().unwrap_or("");
    let clean: String = last
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '-' | '_' => c,
            _ => '_',
        })
        .collect();
    if clean.trim_matches('.').is_empty() {
        "resource".to_owned()
    } else {
        clean
    }
}
