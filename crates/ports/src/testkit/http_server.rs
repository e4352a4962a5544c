//! A tiny HTTP/1.1 server on `127.0.0.1` for the tests of network adapters (web fetch, search
//! backends, media endpoints): never the internet.
//!
//! Each connection gets a thread, one request and one reply (`Connection: close`). The handler
//! sees the request and answers with a [`Reply`]: a whole body, a long body generated as it is
//! written (to test caps: [`Reply::stream`] counts the bytes the client actually took), or a
//! delay first (to test timeouts).
//!
//! ```
//! use kun_ports::testkit::{LocalHttpServer, Reply};
//! let server = LocalHttpServer::start(|request| {
//!     Reply::ok("text/plain", format!("you asked for {}", request.path))
//! });
//! assert!(server.url("/a").starts_with("http://127.0.0.1:"));
//! ```

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// A request as the server read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRequest {
    /// `GET`, `POST`, …
    pub method: String,
    /// The path with its query string.
    pub path: String,
    /// Headers, names lower-cased, in order.
    pub headers: Vec<(String, String)>,
    /// The body (by `Content-Length`).
    pub body: Vec<u8>,
}

impl RecordedRequest {
    /// The first header called `name` (case-insensitive).
    #[must_use]
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The path without its query string.
    #[must_use]
    pub fn route(&self) -> &str {
        self.path.split('?').next().unwrap_or_default()
    }

    /// A query parameter, percent- and plus-decoded.
    #[must_use]
    pub fn query(&self, name: &str) -> Option<String> {
        let query = self.path.split_once('?')?.1;
        query.split('&').find_map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(key) == name).then(|| decode(value))
        })
    }

    /// The body as (lossy) UTF-8.
    #[must_use]
    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                if let Ok(byte) = u8::from_str_radix(hex, 16) {
                    out.push(byte);
                    i += 2;
                } else {
                    out.push(b'%');
                }
            }
            other => out.push(other),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// How the server answers one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A whole response.
    Full {
        /// Status code.
        status: u16,
        /// Headers (`Content-Length` and `Connection` are added).
        headers: Vec<(String, String)>,
        /// Body bytes.
        body: Vec<u8>,
    },
    /// `total` bytes made of `chunk` repeated, written as the client reads them; `sent` counts
    /// what was written before the client stopped reading.
    Stream {
        /// Content type.
        content_type: String,
        /// How many bytes the response announces and tries to send.
        total: u64,
        /// The repeated piece.
        chunk: Vec<u8>,
        /// Bytes written so far.
        sent: Arc<AtomicU64>,
    },
    /// Waits, then answers.
    Delay(Duration, Box<Reply>),
}

impl Reply {
    /// 200 with this content type and body.
    #[must_use]
    pub fn ok(content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Self::Full {
            status: 200,
            headers: vec![("Content-Type".to_owned(), content_type.to_owned())],
            body: body.into(),
        }
    }

    /// A status with a short text body.
    #[must_use]
    pub fn status(status: u16, body: impl Into<Vec<u8>>) -> Self {
        Self::Full {
            status,
            headers: vec![("Content-Type".to_owned(), "text/plain".to_owned())],
            body: body.into(),
        }
    }

    /// A redirect to `location` (302).
    #[must_use]
    pub fn redirect(location: &str) -> Self {
        Self::Full {
            status: 302,
            headers: vec![("Location".to_owned(), location.to_owned())],
            body: Vec::new(),
        }
    }

    /// `total` bytes of `chunk` repeated, counting what was sent into `sent`.
    #[must_use]
    pub fn stream(content_type: &str, total: u64, chunk: &[u8], sent: Arc<AtomicU64>) -> Self {
        Self::Stream {
            content_type: content_type.to_owned(),
            total,
            chunk: chunk.to_vec(),
            sent,
        }
    }

    /// Adds a header to a full reply (other replies are returned unchanged).
    #[must_use]
    pub fn header(mut self, name: &str, value: &str) -> Self {
        if let Self::Full { headers, .. } = &mut self {
            headers.push((name.to_owned(), value.to_owned()));
        }
        self
    }

    /// This reply after `delay`.
    #[must_use]
    pub fn after(self, delay: Duration) -> Self {
        Self::Delay(delay, Box::new(self))
    }
}

type Handler = dyn Fn(&RecordedRequest) -> Reply + Send + Sync;

/// The server; stops when dropped.
pub struct LocalHttpServer {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<RecordedRequest>>>,
    stop: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for LocalHttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalHttpServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl LocalHttpServer {
    /// Starts a server on `127.0.0.1` with a free port.
    ///
    /// # Panics
    /// When no port can be bound.
    pub fn start(handler: impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let handler: Arc<Handler> = Arc::new(handler);
        let acceptor = {
            let requests = Arc::clone(&requests);
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let handler = Arc::clone(&handler);
                    let requests = Arc::clone(&requests);
                    std::thread::spawn(move || serve(stream, &*handler, &requests));
                }
            })
        };
        Self {
            addr,
            requests,
            stop,
            acceptor: Some(acceptor),
        }
    }

    /// The bound address.
    #[must_use]
    pub const fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:<port><path>`.
    #[must_use]
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Every request so far, in arrival order.
    #[must_use]
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

impl Drop for LocalHttpServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the acceptor so it sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

fn serve(stream: TcpStream, handler: &Handler, requests: &Mutex<Vec<RecordedRequest>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let Some(request) = read_request(&mut reader) else {
        return;
    };
    if let Ok(mut all) = requests.lock() {
        all.push(request.clone());
    }
    let reply = handler(&request);
    write_reply(stream, reply);
}

fn read_request(reader: &mut BufReader<TcpStream>) -> Option<RecordedRequest> {
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).ok()? == 0 {
            break;
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    let length = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
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
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

fn write_reply(mut stream: TcpStream, reply: Reply) {
    match reply {
        Reply::Delay(delay, reply) => {
            std::thread::sleep(delay);
            write_reply(stream, *reply);
        }
        Reply::Full {
            status,
            headers,
            body,
        } => {
            let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
            for (name, value) in &headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str(&format!(
                "Content-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            ));
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
            let _ = stream.flush();
        }
        Reply::Stream {
            content_type,
            total,
            chunk,
            sent,
        } => {
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {total}\r\nConnection: close\r\n\r\n"
            );
            if stream.write_all(head.as_bytes()).is_err() || chunk.is_empty() {
                return;
            }
            let mut left = total;
            while left > 0 {
                let n = chunk.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                if stream.write_all(&chunk[..n]).is_err() {
                    return;
                }
                sent.fetch_add(n as u64, Ordering::SeqCst);
                left -= n as u64;
            }
            let _ = stream.flush();
        }
    }
}
