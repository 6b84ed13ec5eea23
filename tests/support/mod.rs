//! What the server and browser tests share: a small HTTP client and a
//! server started in-process on an ephemeral loopback port.

#![allow(dead_code)] // each test file uses its own part

pub mod http;
#[path = "../common/scratch.rs"]
mod scratch;
pub use scratch::Scratch;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;

use bishops::server::{self, ServeOptions};

/// A fresh, unique directory path under the cargo target's temporary
/// directory; it does not exist when returned, and is removed once the
/// test has passed ([`Scratch`]).
pub fn fresh_dir(name: &str) -> Scratch {
    Scratch::fresh(Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id())))
}

/// `bishops serve` over `dir`, run in this process on its own tokio runtime
/// and a real socket, `127.0.0.1:0`. Dropping it shuts the server down and
/// waits for it.
pub struct Server {
    pub addr: SocketAddr,
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<std::io::Result<()>>>,
}

impl Server {
    /// The server with the options `bishops serve` uses by default.
    pub fn start(dir: &Path) -> Server {
        Server::start_with(dir, ServeOptions::default())
    }

    /// The server with `options`.
    pub fn start_with(dir: &Path, options: ServeOptions) -> Server {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let dir: PathBuf = dir.to_path_buf();
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()?;
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener)?;
                let shutdown = async move {
                    // Waits on the blocking pool: a closed channel also stops.
                    let _ = tokio::task::spawn_blocking(move || stopped.recv()).await;
                };
                server::serve(listener, &dir, options, shutdown).await
            })
        });
        Server {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let result = thread.join();
            if !std::thread::panicking() {
                result.expect("the server thread panicked").expect("the server failed");
            }
        }
    }
}

/// `bishops serve --port 0 --db DIR ARGS…`: the child, the address its
/// first stderr line names, and a thread that returns the rest of its
/// stderr once it exits.
#[cfg(unix)]
pub fn spawn_serve(dir: &Path, args: &[&str]) -> (std::process::Child, SocketAddr, std::thread::JoinHandle<String>) {
    let (child, addr, lines) = spawn_serve_lines(dir, args);
    (child, addr, collect(lines))
}

/// A thread that gathers `lines` until their sender is gone.
fn collect(lines: mpsc::Receiver<String>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || lines.iter().collect())
}

/// [`spawn_serve`], then waits (at most a minute) for the first stderr
/// line after the address that starts with `prefix`: the child, the
/// address, the lines up to and including that one, and a thread that
/// returns the rest of stderr once the child exits.
#[cfg(unix)]
pub fn spawn_serve_until(
    dir: &Path,
    args: &[&str],
    prefix: &str,
) -> (std::process::Child, SocketAddr, String, std::thread::JoinHandle<String>) {
    let (mut child, addr, lines) = spawn_serve_lines(dir, args);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut before = String::new();
    loop {
        match lines.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now())) {
            Ok(line) => {
                before.push_str(&line);
                if line.starts_with(prefix) {
                    return (child, addr, before, collect(lines));
                }
            }
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("bishops serve {args:?} said no line starting {prefix:?}: {before}");
            }
        }
    }
}

/// [`spawn_serve`], with the rest of stderr given a line at a time as it
/// comes.
#[cfg(unix)]
fn spawn_serve_lines(dir: &Path, args: &[&str]) -> (std::process::Child, SocketAddr, mpsc::Receiver<String>) {
    use std::io::{BufRead, BufReader, Read};
    let mut child = Command::new(env!("CARGO_BIN_EXE_bishops"))
        .env_remove("BISHOPS_DB")
        .args(["serve", "--port", "0", "--db"])
        .arg(dir)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    stderr.read_line(&mut first).unwrap();
    let Some(addr) = first
        .strip_prefix("bishops: serving http://")
        .and_then(|rest| rest.split('/').next())
        .and_then(|addr| addr.parse().ok())
    else {
        let _ = child.kill();
        let _ = child.wait();
        let mut rest = String::new();
        let _ = stderr.read_to_string(&mut rest);
        panic!("bishops serve {args:?} did not start: {first}{rest}");
    };
    let (send, lines) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        while stderr.read_line(&mut line).is_ok_and(|n| n > 0) && send.send(std::mem::take(&mut line)).is_ok() {}
    });
    (child, addr, lines)
}
