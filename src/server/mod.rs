//! `bishops serve`: the puzzle in a browser, and a JSON API over the
//! [`Tablebase`].
//!
//! One page and its script, compiled into the binary, and five API routes
//! answering with the same documents as the command line's `--json`:
//!
//! | route | answers | like |
//! |---|---|---|
//! | `GET /api/query?position=P[&variant=V]` | a [`Probe`](crate::Probe) | `bishops query P --json` |
//! | `GET /api/line?position=P[&variant=V]` | a [`Line`](crate::Line) | `bishops line P --json` |
//! | `POST /api/verify` `{"position", "moves", "variant"?}` | a [`Verification`](crate::Verification) | `bishops verify P MOVES… --json` |
//! | `GET /api/variants` | a [`VariantsReport`](crate::report::VariantsReport) | `bishops variants --json` |
//! | `GET /api/stats/{variant}` | a [`StatsReport`](crate::report::StatsReport) | `bishops stats V --json` |
//!
//! The server is built to hold under careless and hostile clients, and is
//! meant for loopback or a trusted network (it has no authentication and no
//! TLS):
//!
//! - [`gate`]: every connection passes a gate that bounds and times each
//!   request's head and body before hyper parses them, closes idle
//!   connections and limits how many are served at once;
//! - [`host`]: the gate answers only requests that name this server in
//!   their `Host` (against DNS rebinding), and the API only requests that
//!   no other site's page sent (by their `Origin` and `Sec-Fetch-Site`);
//! - `api`: the routes; every answer is JSON (errors too, with no path of
//!   this machine), and all parsing and table work runs off the threads
//!   that answer connections, each answer within a time limit;
//! - the [`Tablebase`] opens or solves each variant in its own slot, so a
//!   slow one never holds up another, and solves on demand only what
//!   [`OnDemand`] allows (by default, named variants of at most
//!   [`SERVE_QUICK_SOLVE_ENTRIES`] hash entries);
//! - on Ctrl-C or SIGTERM it stops accepting, lets answers in flight finish
//!   for at most [`ServeOptions::shutdown_grace`], and exits.
//!
//! Nothing but the routes above, `/` and `/app.js` is served: no path
//! reaches the file system.

mod api;
pub mod gate;
pub mod host;

use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

pub use api::MAX_VERIFY_MOVES;
pub use gate::Limits;
pub use host::AllowedHost;

use crate::error::{Error, Result};
use crate::storage::Held;
use crate::tablebase::{OnDemand, Tablebase};
use crate::variant::Variant;

/// The server solves on demand only variants of at most this many hash
/// entries (`7x6` and smaller, about a second); a larger unsolved variant
/// is refused at once with 409 rather than tie up the server for minutes.
pub const SERVE_QUICK_SOLVE_ENTRIES: u64 = 2_000_000;

/// How a server runs: what it allows clients, what it solves on demand, and
/// how long it waits.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// What the gate allows one client.
    pub limits: Limits,
    /// What is solved on demand: by default, named variants of at most
    /// [`SERVE_QUICK_SOLVE_ENTRIES`] hash entries, never waiting for
    /// another process that is solving one.
    pub on_demand: OnDemand,
    /// The longest time an answer may take; then 503.
    pub request_timeout: Duration,
    /// After a stop signal, how long answers in flight may take to finish
    /// before the server stops anyway.
    pub shutdown_grace: Duration,
    /// The Hosts admitted besides this server's loopback names and its
    /// address (`--allow-host`; see [`host`]).
    pub allowed_hosts: Vec<AllowedHost>,
    /// Bytes of checked blocks kept in memory for each open database
    /// (`--cache-mib`; see [`Tablebase::with_cache_bytes`]).
    pub cache_bytes: usize,
    /// Variants whose tables are read into that memory as the server
    /// starts (`--hold`; see [`Table::hold`](crate::tablebase::Table::hold)),
    /// in the background while it answers.
    pub hold: Vec<Variant>,
}

impl Default for ServeOptions {
    fn default() -> ServeOptions {
        ServeOptions {
            limits: Limits::default(),
            on_demand: OnDemand {
                max_entries: SERVE_QUICK_SOLVE_ENTRIES,
                standard: Some(0),
                wait: false,
            },
            request_timeout: Duration::from_secs(20),
            shutdown_grace: Duration::from_secs(3),
            allowed_hosts: Vec::new(),
            cache_bytes: crate::storage::BLOCK_CACHE_BYTES,
            hold: Vec::new(),
        }
    }
}

/// Serves the page and the API over the databases of `dir` on `listener`
/// until `shutdown` completes, then lets the answers in flight finish for
/// at most `options.shutdown_grace`.
///
/// # Errors
///
/// When serving fails for good.
pub async fn serve(
    listener: tokio::net::TcpListener,
    dir: &Path,
    options: ServeOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    // Queries are answered on the runtime's workers, one per core: a
    // connection to each database apiece lets every core answer at once.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let tablebase = Tablebase::new(dir)
        .with_connections(cores)
        .with_cache_bytes(options.cache_bytes)
        .with_on_demand(options.on_demand.clone())
        .with_notes(|note| crate::text::say!("bishops: {note}"));
    let tablebase = Arc::new(tablebase);
    if !options.hold.is_empty() {
        let (tablebase, variants) = (Arc::clone(&tablebase), options.hold.clone());
        std::thread::spawn(move || variants.into_iter().for_each(|v| hold(&tablebase, v)));
    }
    let app = api::router(tablebase, &options.limits, options.request_timeout);
    let hosts = host::HostPolicy::new(listener.local_addr()?, &options.allowed_hosts);
    let listener = gate::GateListener::new(listener, options.limits.clone(), hosts);
    // The signal is seen twice: by the server, to stop accepting, and by
    // the clock that ends the wait for answers in flight.
    let (stopped, mut stop) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = stopped.send(true);
    });
    let mut seen = stop.clone();
    let server = axum::serve(listener, app.into_make_service_with_connect_info::<gate::GateInfo>())
        .with_graceful_shutdown(async move {
            let _ = seen.wait_for(|&s| s).await;
        });
    tokio::select! {
        result = server => result,
        () = async {
            let _ = stop.wait_for(|&s| s).await;
            tokio::time::sleep(options.shutdown_grace).await;
        } => {
            crate::text::say!(
                "bishops: answers still in flight after {} s; stopping anyway",
                options.shutdown_grace.as_secs_f64()
            );
            Ok(())
        }
    }
}

/// `bishops serve`: listens on `addr` (port 0: any free port), says where on
/// stderr (the first line names the address), opens a browser when `open`,
/// and serves the databases of `dir` until Ctrl-C or SIGTERM.
///
/// # Errors
///
/// [`Error::Usage`] when `addr` cannot be listened on (a port in use, an
/// address not on this machine); [`Error::Io`] when serving fails.
pub fn run(dir: &Path, addr: SocketAddr, open: bool, options: ServeOptions) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Io("tokio runtime".into(), e))?;
    let served = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| bind_error(addr, e))?;
        let bound = listener
            .local_addr()
            .map_err(|e| Error::Io(addr.to_string().into(), e))?;
        let url = format!("http://{bound}/");
        crate::text::say!(
            "bishops: serving {url} over the databases in {}; Ctrl-C stops",
            crate::text::path(dir)
        );
        if open {
            open_browser(&url);
        }
        serve(listener, dir, options, stop_signal())
            .await
            .map_err(|e| Error::Io(bound.to_string().into(), e))
    });
    // A solve on demand may still run on the blocking pool: it is not
    // waited for, and its temporary file goes with it.
    runtime.shutdown_timeout(Duration::from_millis(200));
    crate::cleanup::remove_pending();
    served?;
    crate::text::say!("bishops: stopped");
    Ok(())
}

/// Reads the table of `variant` into the memory of checked blocks, saying
/// how far it has got every ten seconds and what it held at the end; says
/// why when it cannot.
fn hold(tablebase: &Tablebase, variant: Variant) {
    let name = variant.name().to_owned();
    let began = std::time::Instant::now();
    let said = std::sync::Mutex::new(began);
    let note = |held: Held, what: &str| {
        crate::text::say!(
            "bishops: {what} {name}: {} positions in {} blocks, {:.1} MiB ({:.2} bits a position), {:.1} s",
            held.positions,
            held.blocks,
            held.bytes as f64 / f64::from(1 << 20),
            held.bytes as f64 * 8.0 / held.positions.max(1) as f64,
            began.elapsed().as_secs_f64()
        );
    };
    let report = |held: Held| {
        let mut said = said.lock().unwrap_or_else(|e| e.into_inner());
        if said.elapsed() >= Duration::from_secs(10) {
            *said = std::time::Instant::now();
            note(held, "holding");
        }
    };
    match tablebase.variant_table(variant).and_then(|table| table.hold(&report)) {
        Ok(held) => {
            note(held, "held");
            if held.full {
                crate::text::say!("bishops: the memory for blocks is full; a larger --cache-mib holds more of {name}");
            }
        }
        Err(e) => crate::text::say!("bishops: cannot hold {name}: {}", e.to_string().trim_end()),
    }
}

/// The one line said when `addr` cannot be listened on.
fn bind_error(addr: SocketAddr, e: std::io::Error) -> Error {
    use std::io::ErrorKind;
    match e.kind() {
        ErrorKind::AddrInUse => Error::Usage(format!(
            "cannot listen on {addr}: the port is in use; choose another with --port (0 picks a free one)"
        )),
        ErrorKind::AddrNotAvailable => Error::Usage(format!(
            "cannot listen on {addr}: the address is not on this machine; choose another with --bind"
        )),
        ErrorKind::PermissionDenied => Error::Usage(format!(
            "cannot listen on {addr}: permission denied; choose a port above 1023 with --port"
        )),
        _ => Error::Io(addr.to_string().into(), e),
    }
}

/// Completes on Ctrl-C (or, on Unix, SIGTERM).
async fn stop_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                term.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
    crate::text::say!("bishops: stopping");
}

/// Asks the desktop to open `url`; says so on stderr when it cannot.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    if let Err(e) = std::process::Command::new(opener)
        .arg(url)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    {
        crate::text::say!("bishops: cannot open a browser ({opener}: {e}); open {url} yourself");
    }
}
