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
//! Errors are `{"error": "…"}` with the command line's one-line message:
//! 400 for bad input (a position, a variant name, a move, a request body),
//! 409 for a variant that is not solved and too large to solve on demand
//! (more than [`SERVE_QUICK_SOLVE_ENTRIES`] hash entries), 404 for any
//! other path, 405 for a wrong method, 500 for a database that cannot be
//! trusted. Nothing but the routes above, `/` and `/app.js` is served: no
//! path reaches the file system.
//!
//! Table work (SQLite reads, a solve on demand) runs on tokio's blocking
//! pool, never on the threads that answer connections.

use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{StatusCode, Uri, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::position::Position;
use crate::report;
use crate::tablebase::Tablebase;
use crate::text::clip;
use crate::variant::Variant;

/// The server solves on demand only variants of at most this many hash
/// entries (`7x6` and smaller, about a second); a larger unsolved variant
/// is refused at once with 409 rather than tie up the server for minutes.
pub const SERVE_QUICK_SOLVE_ENTRIES: u64 = 2_000_000;

/// The most moves one `POST /api/verify` judges.
pub const MAX_VERIFY_MOVES: usize = 10_000;

/// The page: markup and style.
const PAGE: &str = include_str!("web/index.html");
/// The page's script.
const SCRIPT: &str = include_str!("web/app.js");

/// The server's routes over `tablebase`.
pub fn router(tablebase: Arc<Tablebase>) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/app.js", get(script))
        .route("/api/query", get(query))
        .route("/api/line", get(line))
        .route("/api/verify", post(verify))
        .route("/api/variants", get(variants))
        .route("/api/stats/{variant}", get(stats))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(tablebase)
}

/// Serves the page and the API on `listener` until `shutdown` completes,
/// then lets the requests in flight finish.
///
/// # Errors
///
/// When accepting connections fails for good.
pub async fn serve(
    listener: tokio::net::TcpListener,
    tablebase: Arc<Tablebase>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(tablebase))
        .with_graceful_shutdown(shutdown)
        .await
}

/// `bishops serve`: listens on `addr` (port 0: any free port), says where on
/// stderr (the first line names the address), opens a browser when `open`,
/// and serves the databases of `dir` until Ctrl-C.
///
/// # Errors
///
/// [`Error::Usage`] when `addr` cannot be listened on (a port in use, an
/// address not on this machine); [`Error::Io`] when serving fails.
pub fn run(dir: &Path, addr: SocketAddr, open: bool) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Io("tokio runtime".into(), e))?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| bind_error(addr, e))?;
        let bound = listener
            .local_addr()
            .map_err(|e| Error::Io(addr.to_string().into(), e))?;
        let url = format!("http://{bound}/");
        eprintln!(
            "bishops: serving {url} over the databases in {}; Ctrl-C stops",
            dir.display()
        );
        if open {
            open_browser(&url);
        }
        let tablebase = Tablebase::new(dir)
            .with_quick_solve(SERVE_QUICK_SOLVE_ENTRIES)
            .with_notes(|note| eprintln!("bishops: {note}"));
        serve(listener, Arc::new(tablebase), stop_signal())
            .await
            .map_err(|e| Error::Io(bound.to_string().into(), e))?;
        eprintln!("bishops: stopped");
        Ok(())
    })
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
    eprintln!("bishops: stopping");
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
        eprintln!("bishops: cannot open a browser ({opener}: {e}); open {url} yourself");
    }
}

/// An error answer: a status and `{"error": message}`.
#[derive(Debug)]
struct ApiError {
    status: StatusCode,
    message: String,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
}

impl ApiError {
    fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
        }
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> ApiError {
        let status = match &e {
            _ if e.exit_code() == 2 => StatusCode::BAD_REQUEST,
            Error::NotSolved { .. } | Error::TooLarge(_) => StatusCode::CONFLICT,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        let message = match &e {
            Error::NotSolved { .. } => format!(
                "{e} (this server solves on demand only variants of at most {SERVE_QUICK_SOLVE_ENTRIES} hash entries)"
            ),
            _ => e.to_string(),
        };
        ApiError::new(status, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(ErrorBody { error: &self.message })).into_response()
    }
}

/// Runs `work` on the blocking pool and answers with its result as JSON.
async fn blocking<T: Serialize + Send + 'static>(
    work: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<Json<T>, ApiError> {
    match tokio::task::spawn_blocking(work).await {
        Ok(Ok(answer)) => Ok(Json(answer)),
        Ok(Err(e)) => Err(e.into()),
        Err(e) => Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the request failed: {e}"),
        )),
    }
}

async fn page() -> impl IntoResponse {
    ([(header::CACHE_CONTROL, "no-cache")], Html(PAGE))
}

async fn script() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        SCRIPT,
    )
}

async fn not_found(uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        format!(
            "no such page: {}; the page is / and the API is under /api/",
            clip(uri.path(), 80)
        ),
    )
}

async fn method_not_allowed(uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        format!(
            "{} does not take this method: /api/verify is POST, every other route GET",
            clip(uri.path(), 80)
        ),
    )
}

/// The query string of `/api/query` and `/api/line`.
#[derive(Deserialize)]
struct PositionQuery {
    position: Option<String>,
    variant: Option<String>,
}

impl PositionQuery {
    /// The position and the variant asked for (an empty name is none).
    fn parse(query: Result<Query<PositionQuery>, QueryRejection>, route: &str) -> Result<(Position, Option<String>)> {
        let Query(query) = query.map_err(|e| Error::Usage(format!("bad query string: {}", e.body_text())))?;
        let position = query
            .position
            .filter(|p| !p.is_empty())
            .ok_or_else(|| Error::Usage(format!("missing `position`: ask like {route}?position=5_4_a1-a3_e1-e3")))?;
        Ok((position.parse()?, query.variant.filter(|v| !v.is_empty())))
    }
}

async fn query(
    State(tablebase): State<Arc<Tablebase>>,
    params: Result<Query<PositionQuery>, QueryRejection>,
) -> Result<impl IntoResponse, ApiError> {
    let (position, variant) = PositionQuery::parse(params, "/api/query")?;
    blocking(move || tablebase.probe(&position, variant.as_deref())).await
}

async fn line(
    State(tablebase): State<Arc<Tablebase>>,
    params: Result<Query<PositionQuery>, QueryRejection>,
) -> Result<impl IntoResponse, ApiError> {
    let (position, variant) = PositionQuery::parse(params, "/api/line")?;
    blocking(move || tablebase.table(&position, variant.as_deref())?.line(&position)).await
}

/// The body of `POST /api/verify`.
#[derive(Deserialize)]
struct VerifyRequest {
    position: String,
    #[serde(default)]
    moves: Moves,
    #[serde(default)]
    variant: Option<String>,
}

/// Moves as a list (`["a3-b2", "e1d2"]`) or as one text, as `verify -` reads it.
#[derive(Deserialize)]
#[serde(untagged)]
enum Moves {
    List(Vec<String>),
    Text(String),
}

impl Default for Moves {
    fn default() -> Moves {
        Moves::List(Vec::new())
    }
}

async fn verify(
    State(tablebase): State<Arc<Tablebase>>,
    body: Result<Json<VerifyRequest>, JsonRejection>,
) -> Result<impl IntoResponse, ApiError> {
    let Json(request) = body.map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!(
                "bad request body: {}; send {{\"position\": \"5_4_a1-a3_e1-e3\", \"moves\": [\"a3-b2\"]}}",
                e.body_text()
            ),
        )
    })?;
    let position: Position = request.position.parse().map_err(Error::from)?;
    let moves: Vec<String> = match request.moves {
        Moves::List(moves) => moves,
        Moves::Text(text) => crate::tablebase::split_moves(&text)
            .into_iter()
            .map(str::to_owned)
            .collect(),
    };
    if moves.len() > MAX_VERIFY_MOVES {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!(
                "{} moves is too many: at most {MAX_VERIFY_MOVES} per request",
                moves.len()
            ),
        ));
    }
    let variant = request.variant.filter(|v| !v.is_empty());
    blocking(move || {
        tablebase
            .table(&position, variant.as_deref())?
            .verify_written(&position, &moves)
    })
    .await
}

async fn variants(State(tablebase): State<Arc<Tablebase>>) -> Result<impl IntoResponse, ApiError> {
    blocking(move || report::variants(tablebase.dir())).await
}

async fn stats(
    State(tablebase): State<Arc<Tablebase>>,
    UrlPath(name): UrlPath<String>,
) -> Result<impl IntoResponse, ApiError> {
    blocking(move || {
        // Opening the table solves a small variant first, as a query would.
        tablebase.variant_table(Variant::named(&name)?)?;
        report::stats(tablebase.dir(), &name)
    })
    .await
}
