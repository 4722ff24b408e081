//! A mock model provider: a real HTTP/1.1 server on 127.0.0.1 that answers each request with the
//! next scripted response and records every request it got.
//!
//! It runs on its own thread with its own tokio runtime, so it serves `#[tokio::test]`s and plain
//! tests that spawn a separate process (the `plumb` binary) alike. Every response carries
//! `connection: close` and no `content-length`, so the body ends where the connection closes; a
//! body is a list of [`Piece`]s, which lets a test pause, stall, or cut the connection anywhere.
//! When the script runs out, the server answers 500 with `mock: no more scripted responses`.
//! Request bodies are read by `content-length` (what reqwest sends); chunked uploads are not
//! supported.

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

/// One step of a response body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Send these bytes (and flush them).
    Bytes(Vec<u8>),
    /// Wait this long before the next piece.
    Pause(Duration),
    /// Close the connection here, leaving the rest unsent.
    Cut,
    /// Send nothing more and keep the connection open until the server shuts down.
    Stall,
}

/// A scripted answer to one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MockResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<Piece>,
}

impl MockResponse {
    /// A response with `status`, no headers and an empty body.
    pub fn new(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// 200 with `content-type: text/event-stream` and `body` sent in one piece.
    pub fn sse(body: impl AsRef<[u8]>) -> Self {
        Self::sse_pieces(vec![Piece::Bytes(body.as_ref().to_vec())])
    }

    /// 200 with `content-type: text/event-stream` and the body sent as `pieces`.
    pub fn sse_pieces(pieces: Vec<Piece>) -> Self {
        Self::new(200)
            .header("content-type", "text/event-stream")
            .body(pieces)
    }

    /// `status` with a JSON body (an API error, typically).
    pub fn json(status: u16, body: &Value) -> Self {
        Self::new(status)
            .header("content-type", "application/json")
            .body(vec![Piece::Bytes(body.to_string().into_bytes())])
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Replaces the body.
    pub fn body(mut self, pieces: Vec<Piece>) -> Self {
        self.body = pieces;
        self
    }
}

/// Splits `body` into pieces at awkward places: every `every` bytes, after the first byte of
/// every multi-byte UTF-8 character, and between every `\r` and `\n`.
pub fn awkward_pieces(body: &[u8], every: usize) -> Vec<Piece> {
    let every = every.max(1);
    let mut cuts: Vec<usize> = (every..body.len()).step_by(every).collect();
    for (at, byte) in body.iter().enumerate() {
        let splits_char = *byte >= 0xC0;
        let splits_crlf = *byte == b'\r' && body.get(at + 1) == Some(&b'\n');
        if (splits_char || splits_crlf) && at + 1 < body.len() {
            cuts.push(at + 1);
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    let mut pieces = Vec::new();
    let mut start = 0;
    for cut in cuts.into_iter().chain([body.len()]) {
        if cut > start {
            pieces.push(Piece::Bytes(body[start..cut].to_vec()));
            start = cut;
        }
    }
    pieces
}

/// A request as the server received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRequest {
    pub method: String,
    /// The request target, query included: `/v1/chat/completions`.
    pub path: String,
    /// Header names in lowercase; a repeated header keeps its last value.
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
}

impl RecordedRequest {
    /// The body as JSON; panics when it is not.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|error| {
            panic!(
                "the request body is not JSON ({error}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// The body as text (lossy).
    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// A header's value; `name` in any case.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }
}

#[derive(Default)]
struct State {
    responses: Mutex<VecDeque<MockResponse>>,
    requests: Mutex<Vec<RecordedRequest>>,
}

/// The running server; dropping it shuts it down.
pub struct MockServer {
    addr: SocketAddr,
    state: Arc<State>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl MockServer {
    /// Starts a server on a free port of 127.0.0.1 that answers requests with `responses`, in
    /// order, one each.
    pub fn start(responses: Vec<MockResponse>) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let addr = listener.local_addr().expect("listener address");
        let state = Arc::new(State {
            responses: Mutex::new(responses.into()),
            requests: Mutex::new(Vec::new()),
        });
        let (shutdown, stop) = oneshot::channel();
        let thread_state = Arc::clone(&state);
        let thread = std::thread::Builder::new()
            .name("mock-http".to_owned())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("mock server runtime");
                runtime.block_on(accept_loop(listener, thread_state, stop));
            })
            .expect("mock server thread");
        Self {
            addr,
            state,
            shutdown: Some(shutdown),
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT`, without a trailing `/`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received so far, in the order they arrived.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.state.requests.lock().expect("requests lock").clone()
    }

    /// How many scripted responses have not been served yet.
    pub fn remaining(&self) -> usize {
        self.state.responses.lock().expect("responses lock").len()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn accept_loop(
    listener: std::net::TcpListener,
    state: Arc<State>,
    mut stop: oneshot::Receiver<()>,
) {
    let listener = TcpListener::from_std(listener).expect("tokio listener");
    loop {
        tokio::select! {
            _ = &mut stop => break,
            accepted = listener.accept() => {
                if let Ok((socket, _)) = accepted {
                    tokio::spawn(serve(socket, Arc::clone(&state)));
                }
            }
        }
    }
    // Dropping the runtime after this returns ends every connection, stalled ones included.
}

async fn serve(mut socket: TcpStream, state: Arc<State>) {
    let Some(request) = read_request(&mut socket).await else {
        return;
    };
    state.requests.lock().expect("requests lock").push(request);
    let next = state.responses.lock().expect("responses lock").pop_front();
    let response = next.unwrap_or_else(|| {
        MockResponse::new(500)
            .header("content-type", "text/plain")
            .body(vec![Piece::Bytes(
                b"mock: no more scripted responses".to_vec(),
            )])
    });
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        response.status,
        reason(response.status)
    );
    for (name, value) in &response.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("connection: close\r\n\r\n");
    if socket.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    for piece in response.body {
        match piece {
            Piece::Bytes(bytes) => {
                if socket.write_all(&bytes).await.is_err() || socket.flush().await.is_err() {
                    return;
                }
            }
            Piece::Pause(duration) => tokio::time::sleep(duration).await,
            Piece::Cut => return,
            Piece::Stall => std::future::pending::<()>().await,
        }
    }
    let _ = socket.shutdown().await;
}

/// Reads one request: the head up to the blank line, then `content-length` bytes of body.
async fn read_request(socket: &mut TcpStream) -> Option<RecordedRequest> {
    const MAX_HEAD: usize = 1024 * 1024;
    let mut buffer = Vec::new();
    let head_end = loop {
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        if buffer.len() > MAX_HEAD {
            return None;
        }
        let mut chunk = [0u8; 8192];
        let read = socket.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?.to_owned();
    let path = request_line.next()?.to_owned();
    let headers: BTreeMap<String, String> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let length: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = buffer[head_end + 4..].to_vec();
    while body.len() < length {
        let mut chunk = [0u8; 8192];
        let read = socket.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..read]);
    }
    body.truncate(length);
    Some(RecordedRequest {
        method,
        path,
        headers,
        body,
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        409 => "Conflict",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Mock",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn awkward_pieces_split_chars_and_line_ends() {
        let body = "ab\r\né🦀x".as_bytes();
        let pieces = awkward_pieces(body, 3);
        let joined: Vec<u8> = pieces
            .iter()
            .flat_map(|p| match p {
                Piece::Bytes(b) => b.clone(),
                _ => Vec::new(),
            })
            .collect();
        assert_eq!(joined, body);
        let sizes: Vec<usize> = pieces
            .iter()
            .map(|p| match p {
                Piece::Bytes(b) => b.len(),
                _ => 0,
            })
            .collect();
        // cuts: every 3 (3, 6, 9), after \r (3), after é's lead (5), after 🦀's lead (7).
        assert_eq!(sizes, vec![3, 2, 1, 1, 2, 2]);
    }

    #[test]
    fn serves_in_order_then_500_and_records() {
        let server = MockServer::start(vec![MockResponse::sse("data: one\n\n")]);
        let send = |body: &str| {
            use std::io::{Read, Write};
            let mut stream = std::net::TcpStream::connect(server.addr()).unwrap();
            write!(
                stream,
                "POST /v1/x HTTP/1.1\r\nHost: a\r\nContent-Length: {}\r\nX-Key: K\r\n\r\n{body}",
                body.len()
            )
            .unwrap();
            let mut answer = String::new();
            stream.read_to_string(&mut answer).unwrap();
            answer
        };
        let first = send("{\"a\":1}");
        let second = send("");
        assert!(first.starts_with("HTTP/1.1 200 OK\r\n"), "{first}");
        assert!(first.ends_with("\r\n\r\ndata: one\n\n"), "{first}");
        assert!(second.starts_with("HTTP/1.1 500"), "{second}");
        assert!(
            second.ends_with("mock: no more scripted responses"),
            "{second}"
        );
        let requests = server.requests();
        assert_eq!(requests.len(), 2);
        assert_eq!(requests[0].method, "POST");
        assert_eq!(requests[0].path, "/v1/x");
        assert_eq!(requests[0].header("x-key"), Some("K"));
        assert_eq!(requests[0].json(), serde_json::json!({"a": 1}));
    }
}
