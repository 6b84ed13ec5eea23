//! A minimal HTTP/1.1 client over `std::net::TcpStream`: one request per
//! connection (`Connection: close`), the reply read to its end. It sends
//! exactly the bytes a test means (a path like `/../Cargo.toml` goes out as
//! written, where a URL library would normalise it away), which is also all
//! the WebDriver tests need.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::Value;

/// A reply: status, headers (names lowercase), body.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    /// The body as JSON; panics with the reply when it is not.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("body is not JSON ({e}): {self:#?}"))
    }

    /// The value of header `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// Sends one request and reads the whole reply.
pub fn request(addr: SocketAddr, method: &str, path: &str, body: Option<&str>) -> std::io::Result<Reply> {
    let host = addr.to_string();
    let mut headers = vec![("Host", host.as_str())];
    if body.is_some() {
        headers.push(("Content-Type", "application/json"));
    }
    request_with(addr, method, path, &headers, body)
}

/// Sends one request with exactly `headers` (no `Host` unless one is
/// among them), then `Connection: close` and the body's length, and reads
/// the whole reply.
pub fn request_with(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> std::io::Result<Reply> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(120)))?;
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    for (name, value) in headers {
        head += &format!("{name}: {value}\r\n");
    }
    head += "Connection: close\r\n";
    if let Some(body) = body {
        head += &format!("Content-Length: {}\r\n", body.len());
    }
    head += "\r\n";
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.unwrap_or("").as_bytes())?;
    // Read until the reply is whole: some servers (chromedriver) keep the
    // connection open despite `Connection: close`.
    let mut raw = Vec::new();
    let mut buffer = [0; 64 * 1024];
    loop {
        let n = stream.read(&mut buffer)?;
        raw.extend_from_slice(&buffer[..n]);
        if n == 0 || complete(&raw) {
            return Ok(parse(&raw));
        }
    }
}

/// Whether `raw` holds a whole reply: headers, and the body its
/// `Content-Length` or chunked encoding announces.
fn complete(raw: &[u8]) -> bool {
    let Some(split) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
    let body = &raw[split + 4..];
    if let Some(length) = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
    {
        return body.len() >= length;
    }
    head.contains("transfer-encoding: chunked") && body.ends_with(b"0\r\n\r\n")
}

fn parse(raw: &[u8]) -> Reply {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no end of headers in {:?}", String::from_utf8_lossy(raw)));
    let head = std::str::from_utf8(&raw[..split]).expect("headers are UTF-8");
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap();
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    if headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"))
    {
        body = dechunk(&body);
    }
    Reply {
        status,
        headers,
        body: String::from_utf8(body).expect("body is UTF-8"),
    }
}

/// The body of a chunked reply.
fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let line_end = data.windows(2).position(|w| w == b"\r\n").expect("chunk size line");
        let size_text = std::str::from_utf8(&data[..line_end]).unwrap();
        let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16).expect("chunk size");
        if size == 0 {
            return body;
        }
        let start = line_end + 2;
        body.extend_from_slice(&data[start..start + size]);
        data = &data[start + size + 2..];
    }
}

/// `GET path`; panics when the connection fails.
pub fn get(addr: SocketAddr, path: &str) -> Reply {
    request(addr, "GET", path, None).unwrap_or_else(|e| panic!("GET {path}: {e}"))
}

/// `POST path` with a JSON body; panics when the connection fails.
pub fn post(addr: SocketAddr, path: &str, body: &Value) -> Reply {
    request(addr, "POST", path, Some(&body.to_string())).unwrap_or_else(|e| panic!("POST {path}: {e}"))
}

/// `DELETE path`; panics when the connection fails.
pub fn delete(addr: SocketAddr, path: &str) -> Reply {
    request(addr, "DELETE", path, None).unwrap_or_else(|e| panic!("DELETE {path}: {e}"))
}

/// Sends `bytes` as they are on a new connection and reads until the server
/// closes it or `wait` passes: the reply if one came whole, and how long
/// the connection lasted. For requests no well-behaved client sends.
pub fn raw(addr: SocketAddr, bytes: &[u8], wait: Duration) -> (Option<Reply>, Duration) {
    let began = std::time::Instant::now();
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(wait)).unwrap();
    // A server may answer and close before it has read everything sent.
    let _ = stream.write_all(bytes);
    let mut raw = Vec::new();
    let mut buffer = [0; 64 * 1024];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => raw.extend_from_slice(&buffer[..n]),
        }
        if began.elapsed() > wait {
            break;
        }
    }
    let reply = complete(&raw).then(|| parse(&raw));
    (reply, began.elapsed())
}
