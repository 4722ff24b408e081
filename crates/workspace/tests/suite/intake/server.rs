//! A local https server for the clone tests: rustls on 127.0.0.1 with the test CA's certificate
//! (`fixtures/`, valid for `localhost` and `127.0.0.1` until 2120), one request per connection.
//! It serves git's smart HTTP protocol through `git http-backend` (CGI), answers every request
//! with a redirect, or accepts and never answers; it records each request line it receives.
//!
//! The fixtures are test-only keys made with openssl (an EC P-256 CA, and a leaf it signed for
//! `DNS:localhost, IP:127.0.0.1`); they protect nothing.

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// The CA git is told to trust (`UrlPolicy::ca_file`).
pub const CA_FILE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/suite/intake/fixtures/ca.pem"
);
const CERT: &[u8] = include_bytes!("fixtures/server.pem");
const KEY: &[u8] = include_bytes!("fixtures/server.key");

/// How the server answers.
#[derive(Debug, Clone)]
pub enum Mode {
    /// Git's smart HTTP for the bare repositories under `root`.
    Git { root: PathBuf },
    /// `302 Found` to `location` (with `{port}` replaced by the server's), whatever was asked.
    Redirect { location: String },
    /// Reads the request and never answers.
    Stall,
}

pub struct Server {
    pub port: u16,
    requests: Arc<Mutex<Vec<String>>>,
}

impl Server {
    pub fn start(mode: Mode) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let config = Arc::new(tls_config());
        let mode = match mode {
            Mode::Redirect { location } => Mode::Redirect {
                location: location.replace("{port}", &port.to_string()),
            },
            other => other,
        };
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&requests);
        // The thread ends with the test's process.
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (config, mode, seen) = (Arc::clone(&config), mode.clone(), Arc::clone(&seen));
                thread::spawn(move || {
                    let _ = serve(stream, config, &mode, &seen);
                });
            }
        });
        Server { port, requests }
    }

    /// `METHOD target` of every request so far.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

fn tls_config() -> rustls::ServerConfig {
    let certs = CertificateDer::pem_slice_iter(CERT)
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_slice(KEY).unwrap();
    rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap()
}

fn serve(
    tcp: TcpStream,
    config: Arc<rustls::ServerConfig>,
    mode: &Mode,
    seen: &Mutex<Vec<String>>,
) -> io::Result<()> {
    tcp.set_read_timeout(Some(Duration::from_secs(30)))?;
    let conn = rustls::ServerConnection::new(config).map_err(io::Error::other)?;
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    let mut reader = BufReader::new(&mut tls);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut headers = HashMap::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.trim_end().split_once(':') {
            headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_owned());
        }
    }
    let mut words = request_line.split_whitespace();
    let method = words.next().unwrap_or_default().to_owned();
    let target = words.next().unwrap_or_default().to_owned();
    seen.lock().unwrap().push(format!("{method} {target}"));
    if matches!(mode, Mode::Stall) {
        thread::sleep(Duration::from_secs(120));
        return Ok(());
    }
    if headers
        .get("expect")
        .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
    {
        reader
            .get_mut()
            .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
        reader.get_mut().flush()?;
    }
    let body = read_body(&mut reader, &headers)?;
    drop(reader);
    let response = match mode {
        Mode::Redirect { location } => format!(
            "HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
        .into_bytes(),
        Mode::Git { root } => cgi(root.clone(), &method, &target, &headers, body)?,
        Mode::Stall => Vec::new(),
    };
    tls.write_all(&response)?;
    tls.conn.send_close_notify();
    tls.flush()
}

fn read_body(reader: &mut impl BufRead, headers: &HashMap<String, String>) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    if let Some(length) = headers.get("content-length") {
        let length: usize = length.parse().map_err(io::Error::other)?;
        body.resize(length, 0);
        reader.read_exact(&mut body)?;
    } else if headers
        .get("transfer-encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
    {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size)?;
            let hex = size.trim().split(';').next().unwrap_or_default();
            let size = usize::from_str_radix(hex, 16).map_err(io::Error::other)?;
            if size == 0 {
                let mut trailer = String::new();
                while reader.read_line(&mut trailer)? > 2 {
                    trailer.clear();
                }
                break;
            }
            let start = body.len();
            body.resize(start + size, 0);
            reader.read_exact(&mut body[start..])?;
            let mut crlf = [0u8; 2];
            reader.read_exact(&mut crlf)?;
        }
    }
    Ok(body)
}

/// Runs `git http-backend` for one request and turns its CGI answer into an HTTP response.
fn cgi(
    root: PathBuf,
    method: &str,
    target: &str,
    headers: &HashMap<String, String>,
    body: Vec<u8>,
) -> io::Result<Vec<u8>> {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let mut cmd = Command::new("git");
    cmd.arg("http-backend")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_PROJECT_ROOT", &root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("REQUEST_METHOD", method)
        .env("PATH_INFO", path)
        .env("QUERY_STRING", query)
        .env("CONTENT_LENGTH", body.len().to_string());
    for (header, variable) in [
        ("content-type", "CONTENT_TYPE"),
        ("content-encoding", "HTTP_CONTENT_ENCODING"),
        ("git-protocol", "HTTP_GIT_PROTOCOL"),
    ] {
        if let Some(value) = headers.get(header) {
            cmd.env(variable, value);
        }
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut stdin = child.stdin.take().unwrap();
    let writer = thread::spawn(move || stdin.write_all(&body));
    let mut output = Vec::new();
    child.stdout.take().unwrap().read_to_end(&mut output)?;
    child.wait()?;
    let _ = writer.join();
    let split = output
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|at| (at, 4))
        .or_else(|| {
            output
                .windows(2)
                .position(|w| w == b"\n\n")
                .map(|at| (at, 2))
        })
        .ok_or_else(|| io::Error::other("http-backend printed no headers"))?;
    let (head, rest) = output.split_at(split.0);
    let content = &rest[split.1..];
    let mut status = "200 OK".to_owned();
    let mut response_headers = String::new();
    for line in String::from_utf8_lossy(head).lines() {
        match line.split_once(':') {
            Some((name, value)) if name.eq_ignore_ascii_case("status") => {
                status = value.trim().to_owned();
            }
            Some(_) => {
                response_headers.push_str(line.trim_end());
                response_headers.push_str("\r\n");
            }
            None => {}
        }
    }
    let mut response = format!(
        "HTTP/1.1 {status}\r\n{response_headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
        content.len()
    )
    .into_bytes();
    response.extend_from_slice(content);
    Ok(response)
}
