//! The server against careless and hostile clients, over real loopback
//! sockets: malformed, oversized, slow and silent requests are each answered
//! with a JSON error of the right status or cut off in bounded time; they do
//! not stall ordinary requests, nor does a variant another process is
//! solving; on-demand solving stays within its policy; no path of the
//! machine reaches a client; and the binary stops within seconds of SIGTERM
//! whatever its clients are doing.

#[path = "support/mod.rs"]
mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use bishops::server::{Limits, ServeOptions};
use serde_json::json;

use support::http::{Reply, get, post, raw, request};
use support::{Server, fresh_dir};

const START: &str = "5_4_a1-a3_e1-e3";

/// Asserts a JSON error reply of `status`; returns its message.
fn error_of(reply: &Reply, status: u16) -> String {
    assert_eq!(reply.status, status, "{reply:#?}");
    assert_eq!(reply.header("content-type"), Some("application/json"), "{reply:#?}");
    let message = reply.json()["error"].as_str().expect("an `error` string").to_owned();
    assert!(!message.is_empty() && !message.contains('\n'), "one line: {message:?}");
    message
}

/// Sends `bytes` and expects a JSON error of `status` back at once.
fn refused(addr: SocketAddr, bytes: &[u8], status: u16) -> String {
    let (reply, _) = raw(addr, bytes, Duration::from_secs(20));
    let reply = reply.unwrap_or_else(|| {
        panic!(
            "no reply to {:?}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(80)])
        )
    });
    error_of(&reply, status)
}

/// Options with short clocks, so that tests of timeouts take seconds.
fn quick() -> ServeOptions {
    ServeOptions {
        limits: Limits {
            head_timeout: Duration::from_secs(1),
            body_timeout: Duration::from_secs(1),
            idle_timeout: Duration::from_secs(2),
            write_timeout: Duration::from_secs(1),
            ..Limits::default()
        },
        ..ServeOptions::default()
    }
}

#[test]
fn what_the_http_layer_refuses_is_answered_in_json() {
    let dir = fresh_dir("hostile-http");
    let server = Server::start(&dir);
    let addr = server.addr;
    let limits = Limits::default();

    // Bytes that are not printable ASCII in the request line or a header.
    let message = refused(
        addr,
        b"GET /api/stats/\xff\xfe HTTP/1.1\r\nHost: localhost\r\n\r\n",
        400,
    );
    assert!(message.contains("printable ASCII"), "{message}");
    refused(addr, b"GET / HTTP/1.1\r\nX-Name: caf\xc3\xa9\r\n\r\n", 400);
    refused(addr, b"GET / HTTP/9.9\r\n\r\n", 400);
    // Percent-encoded bytes that are not UTF-8 reach the router, which says so.
    let message = error_of(&get(addr, "/api/stats/%FF%FE"), 400);
    assert!(message.contains("UTF-8"), "{message}");
    // In a query string they decode as U+FFFD, which is no position.
    let message = error_of(&get(addr, "/api/query?position=%FF"), 400);
    assert!(message.starts_with("bad position"), "{message}");
    // Too long a target, too many headers.
    let long = format!(
        "GET /api/query?position={} HTTP/1.1\r\n\r\n",
        "a".repeat(limits.uri_bytes)
    );
    assert!(refused(addr, long.as_bytes(), 414).contains("longer than"));
    let big = format!("GET / HTTP/1.1\r\nX-Big: {}\r\n\r\n", "a".repeat(limits.head_bytes));
    assert!(refused(addr, big.as_bytes(), 431).contains("headers are larger"));
    // Small headers, but more of them than hyper parses: hyper's own 431
    // would have no body.
    let many = format!(
        "GET / HTTP/1.1\r\n{}\r\n",
        "X-Many: a\r\n".repeat(bishops::server::gate::MAX_HEADERS + 1)
    );
    assert!(refused(addr, many.as_bytes(), 431).contains("lines"));
    // A body announced too large is refused before a byte of it is read.
    let began = Instant::now();
    let message = refused(
        addr,
        b"POST /api/verify HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 99999999999\r\n\r\n",
        413,
    );
    assert!(message.contains("larger than"), "{message}");
    assert!(began.elapsed() < Duration::from_secs(5));
    refused(
        addr,
        b"POST /api/verify HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        411,
    );
    // Not JSON, by its content type.
    let reply = request(addr, "POST", "/api/verify", None).unwrap();
    error_of(&reply, 415);
    let mut stream = TcpStream::connect(addr).unwrap();
    let body = r#"{"position": "5_4_a1-a3_e1-e3"}"#;
    write!(
        stream,
        "POST /api/verify HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    assert!(reply.starts_with("HTTP/1.1 415"), "{reply}");

    // The server still answers.
    assert_eq!(
        get(addr, &format!("/api/query?position={START}")).json()["remoteness"],
        18
    );
}

#[test]
fn input_is_measured_before_it_is_parsed() {
    let dir = fresh_dir("hostile-input");
    let server = Server::start(&dir);
    let addr = server.addr;

    // A position far longer than any board's is refused unread, in one line.
    let long = "a".repeat(3000);
    let message = error_of(&get(addr, &format!("/api/query?position={long}")), 400);
    assert!(
        message.contains("3000 bytes long; a position has at most 600"),
        "{message}"
    );
    assert!(message.len() < 200, "{message}");
    // The same in a request body just under the body limit: refused, small.
    let huge = "a1-".repeat(80_000);
    let reply = post(addr, "/api/verify", &json!({"position": huge, "moves": []}));
    let message = error_of(&reply, 400);
    assert!(message.contains("bytes long"), "{message}");
    assert!(message.len() < 200, "{message}");
    // A position of repeated mistakes says each once.
    let repeats = format!("5_4_{}_e1", ["a1"; 100].join("-"));
    let message = error_of(&get(addr, &format!("/api/query?position={repeats}")), 400);
    assert_eq!(message.matches("used twice").count(), 1, "{message}");
    // Moves are counted before a list is built past the limit, as a list or a text.
    let many = vec!["a3-b2"; bishops::server::MAX_VERIFY_MOVES + 1];
    let message = error_of(
        &post(addr, "/api/verify", &json!({"position": START, "moves": many})),
        400,
    );
    assert!(message.contains("more than 10000 moves"), "{message}");
    let text = "a3-b2 ".repeat(bishops::server::MAX_VERIFY_MOVES + 1);
    let message = error_of(
        &post(addr, "/api/verify", &json!({"position": START, "moves": text})),
        400,
    );
    assert!(message.contains("more than 10000 moves"), "{message}");
}

#[test]
fn slow_and_silent_clients_are_cut_off() {
    let dir = fresh_dir("hostile-slow");
    let options = quick();
    let server = Server::start_with(&dir, options.clone());
    let addr = server.addr;
    let slack = Duration::from_secs(3);

    // Silent: closed once idle, with nothing said.
    let (reply, lasted) = raw(addr, b"", Duration::from_secs(30));
    assert!(reply.is_none());
    assert!(lasted < options.limits.idle_timeout + slack, "{lasted:?}");
    // A head that never ends: 408 in JSON.
    let (reply, lasted) = raw(addr, b"GET / HTTP/1.1\r\nHost: localhost\r\n", Duration::from_secs(30));
    let message = error_of(&reply.expect("a 408"), 408);
    assert!(message.contains("did not arrive within 1 s"), "{message}");
    assert!(lasted < options.limits.head_timeout + slack, "{lasted:?}");
    // A body that never ends: the connection ends, with a JSON 408.
    let (reply, lasted) = raw(
        addr,
        b"POST /api/verify HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"pos",
        Duration::from_secs(30),
    );
    if let Some(reply) = reply {
        error_of(&reply, 408);
    }
    assert!(lasted < options.limits.body_timeout + slack, "{lasted:?}");
    // One byte at a time does not stretch the head's clock.
    let mut stream = TcpStream::connect(addr).unwrap();
    let began = Instant::now();
    for b in b"GET /api/variants HTTP/1.1\r\nHost: localhost\r\nX-Slow: "
        .iter()
        .cycle()
    {
        // Stop writing once the server has answered, so as to read it whole.
        stream.set_nonblocking(true).unwrap();
        let answered = stream.peek(&mut [0u8; 1]).is_ok();
        stream.set_nonblocking(false).unwrap();
        if answered || began.elapsed() > Duration::from_secs(20) || stream.write_all(&[*b]).is_err() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut reply = Vec::new();
    let _ = stream.read_to_end(&mut reply);
    assert!(String::from_utf8_lossy(&reply).starts_with("HTTP/1.1 408"), "{reply:?}");
    assert!(
        began.elapsed() < options.limits.head_timeout + slack,
        "{:?}",
        began.elapsed()
    );
    // A kept-alive connection is closed once idle after its answer.
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        stream,
        "GET /api/query?position={START} HTTP/1.1\r\nHost: localhost\r\n\r\n"
    )
    .unwrap();
    let began = Instant::now();
    let mut all = Vec::new();
    let _ = stream.read_to_end(&mut all);
    assert!(String::from_utf8_lossy(&all).starts_with("HTTP/1.1 200"));
    assert!(
        began.elapsed() < options.limits.idle_timeout + slack,
        "{:?}",
        began.elapsed()
    );
    // A client that sends its request and closes its side still gets the answer.
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET /api/query?position={START} HTTP/1.1\r\nHost: localhost\r\n\r\n"
    )
    .unwrap();
    stream.shutdown(std::net::Shutdown::Write).unwrap();
    let mut all = String::new();
    stream.read_to_string(&mut all).unwrap();
    assert!(
        all.starts_with("HTTP/1.1 200") && all.contains("\"remoteness\":18"),
        "{all}"
    );
}

#[test]
fn a_client_that_reads_none_of_its_answers_is_cut_off() {
    let dir = fresh_dir("hostile-unread");
    // Only the clock of writes may end the connection in time.
    let mut options = ServeOptions::default();
    options.limits.write_timeout = Duration::from_secs(1);
    let server = Server::start_with(&dir, options.clone());
    let addr = server.addr;
    // Requests whose answers (near 1 MB each) fill every buffer between
    // the server and a client that reads none of them.
    let moves = "a3-b2 b2-a3 ".repeat(bishops::server::MAX_VERIFY_MOVES / 2);
    let body = json!({"position": START, "moves": moves}).to_string();
    let one = format!(
        "POST /api/verify HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let count = 40;
    let mut stream = TcpStream::connect(addr).unwrap();
    let mut writer = stream.try_clone().unwrap();
    let sender = std::thread::spawn(move || {
        for _ in 0..count {
            if writer.write_all(one.as_bytes()).is_err() {
                break;
            }
        }
    });
    // Wait until the answers waiting unread stop growing for well over the
    // write timeout: the server's writes are blocked, so it gives up on
    // this client. (A fixed sleep is not enough on a loaded machine, where
    // the answers take longer than the timeout to fill the buffers.)
    let settled = options.limits.write_timeout * 3;
    let (mut waiting, mut since, deadline) = (0, Instant::now(), Instant::now() + Duration::from_secs(120));
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        let now = unread(&stream);
        if now != waiting {
            (waiting, since) = (now, Instant::now());
        } else if waiting > 0 && since.elapsed() > settled {
            break;
        }
    }
    // The server has given up on this client: what it reads now ends
    // short of the answers it asked for, at once.
    let began = Instant::now();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut all = Vec::new();
    let _ = stream.read_to_end(&mut all);
    let answered = String::from_utf8_lossy(&all).matches("HTTP/1.1 200").count();
    assert!(
        answered < count,
        "all {answered} answers were kept for a client that read none"
    );
    assert!(began.elapsed() < Duration::from_secs(5), "{:?}", began.elapsed());
    sender.join().unwrap();
    // And the server still answers.
    assert_eq!(
        get(addr, &format!("/api/query?position={START}")).json()["remoteness"],
        18
    );
}

/// The bytes that have come in on `stream` and wait to be read.
fn unread(stream: &TcpStream) -> usize {
    use std::os::fd::AsRawFd;
    let mut count: libc::c_int = 0;
    // SAFETY: FIONREAD writes one c_int through the pointer, which points
    // at `count`; the descriptor is open for as long as `stream` lives.
    let done = unsafe { libc::ioctl(stream.as_raw_fd(), libc::FIONREAD, &mut count) };
    assert_eq!(done, 0, "FIONREAD failed: {}", std::io::Error::last_os_error());
    usize::try_from(count).unwrap_or(0)
}

#[test]
fn hostile_requests_do_not_stall_ordinary_ones() {
    let dir = fresh_dir("hostile-load");
    let server = Server::start_with(&dir, quick());
    let addr = server.addr;
    assert_eq!(get(addr, &format!("/api/query?position={START}")).status, 200);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let slowest = std::thread::scope(|scope| {
        // Big bodies of nonsense and heads that never end, from six threads.
        for t in 0..6 {
            let stop = &stop;
            scope.spawn(move || {
                let body = json!({"position": "a".repeat(250_000), "moves": []});
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    if t % 2 == 0 {
                        let _ = post(addr, "/api/verify", &body);
                    } else {
                        let _ = raw(addr, b"GET / HTTP/1.1\r\nX: ", Duration::from_millis(300));
                    }
                }
            });
        }
        let mut slowest = Duration::ZERO;
        for _ in 0..40 {
            let began = Instant::now();
            let reply = get(addr, &format!("/api/query?position={START}"));
            assert_eq!(reply.json()["remoteness"], 18);
            slowest = slowest.max(began.elapsed());
            std::thread::sleep(Duration::from_millis(50));
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        slowest
    });
    // A bound that only a stalled server misses, on any machine.
    assert!(
        slowest < Duration::from_secs(3),
        "the slowest ordinary query took {slowest:?}"
    );
}

#[test]
fn a_variant_solved_elsewhere_holds_up_no_other() {
    let dir = fresh_dir("hostile-busy");
    let server = Server::start(&dir);
    let addr = server.addr;
    assert_eq!(get(addr, &format!("/api/query?position={START}")).status, 200);
    // Another process (here, this one) is solving 7x6: its lock is held.
    let lock = bishops::storage::WriteLock::acquire(&dir, "7x6", &mut || {}).unwrap();
    let began = Instant::now();
    let reply = get(addr, "/api/query?position=7_6_a1-a3-a5_g1-g3-g5");
    let message = error_of(&reply, 503);
    assert!(message.contains("being solved by another process"), "{message}");
    assert_eq!(reply.header("retry-after"), Some("5"));
    assert!(began.elapsed() < Duration::from_secs(5));
    assert_eq!(
        get(addr, &format!("/api/query?position={START}")).json()["remoteness"],
        18
    );
    drop(lock);
    assert_eq!(
        get(addr, "/api/query?position=7_6_a1-a3-a5_g1-g3-g5").json()["remoteness"],
        16
    );
}

#[test]
fn only_named_variants_are_solved_on_demand_unless_allowed() {
    let dir = fresh_dir("hostile-demand");
    let server = Server::start(&dir);
    let six = "6_4_a1-a3_f2-f4";
    let message = error_of(&get(server.addr, &format!("/api/query?position={six}")), 409);
    assert!(message.contains("only named variants"), "{message}");
    assert!(!message.contains(&dir.display().to_string()), "{message}");
    assert!(!dir.join("6x4-a1.sqlite").exists());
    drop(server);

    let dir = fresh_dir("hostile-demand-one");
    let mut options = ServeOptions::default();
    options.on_demand.standard = Some(1);
    let server = Server::start_with(&dir, options);
    assert_eq!(get(server.addr, &format!("/api/query?position={six}")).status, 200);
    let message = error_of(&get(server.addr, "/api/query?position=6_4_a2-a4_f1-f3"), 409);
    assert!(message.contains("named variants and a few others"), "{message}");
    assert!(dir.join("6x4-a1.sqlite").exists() && !dir.join("6x4-a2.sqlite").exists());
}

#[test]
fn no_path_of_the_machine_reaches_a_client() {
    let dir = fresh_dir("hostile-paths");
    let server = Server::start(&dir);
    let addr = server.addr;
    let here = dir.display().to_string();
    let stats = get(addr, "/api/stats/5x4");
    assert_eq!(stats.status, 200);
    assert!(
        stats.json().get("path").is_none() && !stats.body.contains(&here),
        "{}",
        stats.body
    );
    let message = error_of(&get(addr, "/api/stats/9x8"), 409);
    assert!(!message.contains(&here) && !message.contains(".sqlite"), "{message}");
    // A directory where a database belongs is the server's fault, not the
    // client's: 500, in words and no path, and the list of variants still
    // answers.
    std::fs::create_dir_all(dir.join("7x4.sqlite")).unwrap();
    let message = error_of(&get(addr, "/api/query?position=7_4_a1-a3_g1-g3"), 500);
    assert!(
        !message.contains(&here) && !message.contains('/') && !message.contains(".sqlite"),
        "{message}"
    );
    assert!(
        message.contains("database directory") && message.contains("log"),
        "{message}"
    );
    let variants = get(addr, "/api/variants");
    assert_eq!(variants.status, 200, "{variants:#?}");
    assert!(!variants.body.contains(&here), "{}", variants.body);
    let list = variants.json();
    let seven = variant_entry(&list, "7x4");
    assert_eq!(seven["solved"], false);
    assert!(seven["problem"].is_string(), "{seven}");
    let five = variant_entry(&list, "5x4");
    assert_eq!(five["solved"], true);
}

/// The report of `name` in a `/api/variants` document.
fn variant_entry<'a>(list: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    list["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == name)
        .unwrap()
}

#[cfg(unix)]
#[test]
fn a_fifo_where_a_database_belongs_is_a_server_fault_answered_at_once() {
    let dir = fresh_dir("hostile-fifo");
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("5x4.sqlite");
    let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path in a directory of this test's own.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    let server = Server::start(&dir);
    let began = Instant::now();
    let message = error_of(&get(server.addr, &format!("/api/query?position={START}")), 500);
    assert!(!message.contains(&dir.display().to_string()), "{message}");
    let variants = get(server.addr, "/api/variants");
    assert_eq!(variants.status, 200, "{variants:#?}");
    assert!(variant_entry(&variants.json(), "5x4")["problem"].is_string());
    assert!(began.elapsed() < Duration::from_secs(5), "{:?}", began.elapsed());
    // Nothing waited on the pipe, so the server stops as usual (in drop).
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
}

/// `bishops serve --port 0` over `dir`, its address read from its first
/// line; its stderr is read to the end meanwhile, so that the server never
/// blocks on it.
fn spawn_server(dir: &Path) -> (std::process::Child, SocketAddr) {
    let (child, addr, _log) = support::spawn_serve(dir, &[]);
    (child, addr)
}

/// The resident memory of process `pid`, in KiB.
fn resident_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap()
}

#[cfg(target_os = "linux")]
#[test]
fn huge_requests_cost_the_binary_little_memory() {
    let dir = fresh_dir("hostile-memory");
    let (mut child, addr) = spawn_server(&dir);
    assert_eq!(get(addr, &format!("/api/query?position={START}")).status, 200);
    let before = resident_kib(child.id());
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(move || {
                // A position of nothing but empty squares: 1.9 MB of it is
                // refused by its length, and as much as the body limit lets
                // through is refused by the position's.
                let huge = json!({"position": format!("5_4_{}_e1", "-".repeat(1_900_000)), "moves": []}).to_string();
                let head = format!(
                    "POST /api/verify HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                    huge.len()
                );
                // The server answers before the body is sent: a client that
                // wrote it all would find the connection gone.
                let request = [head.as_bytes(), &huge.as_bytes()[..1000]].concat();
                let big = json!({"position": format!("5_4_{}_e1", "-".repeat(250_000)), "moves": []});
                for _ in 0..25 {
                    let (reply, _) = raw(addr, &request, Duration::from_secs(20));
                    assert_eq!(reply.expect("a reply").status, 413);
                    assert_eq!(post(addr, "/api/verify", &big).status, 400);
                }
            });
        }
    });
    let after = resident_kib(child.id());
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        after < before + 64 * 1024,
        "resident memory grew from {before} KiB to {after} KiB"
    );
}

#[cfg(unix)]
#[test]
fn sigterm_stops_the_binary_within_seconds_whatever_its_clients_do() {
    let dir = fresh_dir("hostile-stop");
    let (mut child, addr) = spawn_server(&dir);
    assert_eq!(get(addr, &format!("/api/query?position={START}")).status, 200);
    // A silent connection, a head that never ends, a body that never ends,
    // and a kept-alive connection after an answer.
    let mut held = Vec::new();
    for bytes in [
        &b""[..],
        b"GET / HTTP/1.1\r\nHost: localhost\r\n",
        b"POST /api/verify HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 99\r\n\r\n{",
        b"GET /api/variants HTTP/1.1\r\nHost: localhost\r\n\r\n",
    ] {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream.write_all(bytes).unwrap();
        held.push(stream);
    }
    std::thread::sleep(Duration::from_millis(300));
    let began = Instant::now();
    assert!(
        Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap()
            .success()
    );
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if began.elapsed() > Duration::from_secs(15) {
            let _ = child.kill();
            panic!("still running 15 s after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
    assert!(
        began.elapsed() < Duration::from_secs(8),
        "stopping took {:?}",
        began.elapsed()
    );
    drop(held);
}
