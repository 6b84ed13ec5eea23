//! The routes: the page, its script, and the JSON API over a [`Tablebase`].
//!
//! Every answer that is not the page is JSON, errors included:
//! `{"error": "…"}` with one line that names no path of this machine
//! ([`Error::public_message`]). Statuses: 400 bad input (or Host), 403 a
//! request from another site's page, 404 no such route, 405 wrong method,
//! 408/411/413/414/421/431 what the [gate](super::gate) refused, 409 a
//! variant not solved (and not solved on demand here), 415 a body that is
//! not JSON, 500 a fault of this server (in words and no more: the whole
//! of it goes to its stderr), 503 a variant another process is solving, or
//! an answer that took longer than
//! [`ServeOptions::request_timeout`](super::ServeOptions).
//!
//! Opening and solving databases, lines, verdicts and the parsing of
//! request bodies run on tokio's blocking pool, never on the threads that
//! answer connections. A question to a table already open (`/api/query`)
//! is answered on the thread that read it: a few lookups in memory, shorter
//! than the hand-off to the pool.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, PathRejection, QueryRejection};
use axum::extract::{ConnectInfo, DefaultBodyLimit, Path as UrlPath, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

use super::gate::{GateInfo, Limits};
use crate::error::{Error, Result};
use crate::position::Position;
use crate::report;
use crate::tablebase::{Probe, Tablebase, moves_in};
use crate::text::clip;
use crate::variant::Variant;

/// The most moves one `POST /api/verify` judges.
pub const MAX_VERIFY_MOVES: usize = 10_000;

/// The page: markup and style.
const PAGE: &str = include_str!("web/index.html");
/// The page's script.
const SCRIPT: &str = include_str!("web/app.js");

/// What the handlers share.
#[derive(Clone)]
pub(super) struct App {
    tablebase: Arc<Tablebase>,
}

/// The routes over `tablebase`, with the layers that answer the gate's
/// refusals and bound the time of an answer. The connections must come
/// through a [`GateListener`](super::gate::GateListener), whose
/// [`GateInfo`] the first layer reads.
pub(super) fn router(tablebase: Arc<Tablebase>, limits: &Limits, request_timeout: Duration) -> Router {
    let body_limit = usize::try_from(limits.body_bytes).unwrap_or(usize::MAX);
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
        .layer(DefaultBodyLimit::max(body_limit))
        .layer(middleware::from_fn(move |request: Request, next: Next| {
            within(request_timeout, request, next)
        }))
        .layer(middleware::from_fn(refused))
        .with_state(App { tablebase })
}

/// An error answer: a status and `{"error": message}`.
#[derive(Debug)]
pub(super) struct ApiError {
    status: StatusCode,
    message: String,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
}

impl ApiError {
    pub(super) fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
        }
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> ApiError {
        let status = match &e {
            e if e.is_bad_input() => StatusCode::BAD_REQUEST,
            Error::NotSolved { .. } | Error::TooLarge(_) => StatusCode::CONFLICT,
            Error::Busy(_) => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        if status != StatusCode::INTERNAL_SERVER_ERROR {
            return ApiError::new(status, e.public_message());
        }
        // The operator's log gets the whole message; the client, what went
        // wrong in words and nothing of this machine.
        crate::text::say!("bishops: error: {e}");
        ApiError::new(status, fault_message(&e))
    }
}

/// What a client is told of a fault of the server (a 500): the kind of
/// fault in words, and where the whole of it is. It quotes nothing of the
/// error's text, which may name files, directories or what SQLite said of
/// them; only a variant's name, which is no path.
fn fault_message(e: &Error) -> String {
    match e {
        Error::Corrupt { variant, .. } => {
            let variant = clip(variant, 40);
            format!(
                "the server's database of {variant} cannot be trusted: run `bishops solve {variant}` to rebuild it (the server's log says why)"
            )
        }
        Error::DbPath(_) => "the server cannot use its database directory or a file in it: see the server's log".into(),
        Error::Sqlite(..) | Error::Io(..) => "the server could not read or write a file: see the server's log".into(),
        _ => "internal error: see the server's log".into(),
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, Json(ErrorBody { error: &self.message })).into_response();
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        }
        response
    }
}

/// Answers the request the gate refused (it reached here as a stand-in)
/// with the refusal's status and message, and closes the connection.
async fn refused(request: Request, next: Next) -> Response {
    let refusal = request
        .extensions()
        .get::<ConnectInfo<GateInfo>>()
        .and_then(|ConnectInfo(info)| info.refusal());
    let Some((refusal, message)) = refusal else {
        return next.run(request).await;
    };
    let status = StatusCode::from_u16(refusal.status()).unwrap_or(StatusCode::BAD_REQUEST);
    let mut response = ApiError::new(status, message).into_response();
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// Answers 503 when the answer takes longer than `limit`. The work it was
/// waiting for may go on in the blocking pool; the client is not held.
async fn within(limit: Duration, request: Request, next: Next) -> Response {
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(response) => response,
        Err(_) => ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("the answer took longer than {} s: try again later", limit.as_secs()),
        )
        .into_response(),
    }
}

/// Runs `work` on the blocking pool and answers with its result as JSON.
async fn blocking<T: Serialize + Send + 'static>(
    work: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<Json<T>, ApiError> {
    match tokio::task::spawn_blocking(work).await {
        Ok(Ok(answer)) => Ok(Json(answer)),
        Ok(Err(e)) => Err(e.into()),
        Err(e) => {
            crate::text::say!("bishops: error: a request failed: {e}");
            Err(ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the request failed: see the server's log",
            ))
        }
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
    /// The position text and the variant asked for (an empty name is none).
    fn take(query: Result<Query<PositionQuery>, QueryRejection>, route: &str) -> Result<(String, Option<String>)> {
        let Query(query) =
            query.map_err(|e| Error::Usage(format!("bad query string: {}", clip(&e.body_text(), 120))))?;
        let position = query
            .position
            .filter(|p| !p.is_empty())
            .ok_or_else(|| Error::Usage(format!("missing `position`: ask like {route}?position=5_4_a1-a3_e1-e3")))?;
        Ok((position, query.variant.filter(|v| !v.is_empty())))
    }
}

async fn query(
    State(app): State<App>,
    params: Result<Query<PositionQuery>, QueryRejection>,
) -> Result<impl IntoResponse, ApiError> {
    let (text, variant) = PositionQuery::take(params, "/api/query")?;
    let position: Position = text.parse().map_err(Error::from)?;
    // A probe of an open table is a few lookups in its cache: answered here,
    // as handing it to the blocking pool would cost more than the answer.
    // Opening a database, or solving one, goes to the pool.
    if let Some(table) = app.tablebase.open_table(&position, variant.as_deref())? {
        return Ok(ProbeAnswer(table.probe(&position)?).into_response());
    }
    let Json(probe) = blocking(move || app.tablebase.probe(&position, variant.as_deref())).await?;
    Ok(ProbeAnswer(probe).into_response())
}

/// A probe's answer as JSON, written into one buffer sized for it from its
/// count of moves. An answer is some 8 KB on 11x8 and 11x10, where axum's
/// `Json` starts from 128 bytes and doubles the buffer, copying, six or
/// seven times.
struct ProbeAnswer(Probe);

impl IntoResponse for ProbeAnswer {
    fn into_response(self) -> Response {
        let mut body = Vec::with_capacity(2048 + 256 * self.0.moves.len());
        match serde_json::to_writer(&mut body, &self.0) {
            Ok(()) => (
                [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))],
                body,
            )
                .into_response(),
            Err(e) => {
                crate::text::say!("bishops: error: an answer could not be written: {e}");
                ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "the answer could not be written: see the server's log",
                )
                .into_response()
            }
        }
    }
}

async fn line(
    State(app): State<App>,
    params: Result<Query<PositionQuery>, QueryRejection>,
) -> Result<impl IntoResponse, ApiError> {
    let (position, variant) = PositionQuery::take(params, "/api/line")?;
    blocking(move || {
        let position: Position = position.parse()?;
        app.tablebase.table(&position, variant.as_deref())?.line(&position)
    })
    .await
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

/// Moves as a list (`["a3-b2", "e1d2"]`) or as one text, as `verify -`
/// reads it; at most [`MAX_VERIFY_MOVES`] either way, counted as they are
/// read, before any list is built past the limit.
#[derive(Default)]
struct Moves(Vec<String>);

impl<'de> Deserialize<'de> for Moves {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Moves, D::Error> {
        deserializer.deserialize_any(MovesVisitor)
    }
}

struct MovesVisitor;

fn too_many<E: de::Error>() -> E {
    E::custom(format!(
        "more than {MAX_VERIFY_MOVES} moves: at most {MAX_VERIFY_MOVES} per request"
    ))
}

impl<'de> Visitor<'de> for MovesVisitor {
    type Value = Moves;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a list of moves or one text of moves")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> std::result::Result<Moves, E> {
        if moves_in(text).nth(MAX_VERIFY_MOVES).is_some() {
            return Err(too_many());
        }
        Ok(Moves(moves_in(text).map(str::to_owned).collect()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Moves, A::Error> {
        let mut moves = Vec::new();
        while let Some(mv) = seq.next_element::<String>()? {
            if moves.len() == MAX_VERIFY_MOVES {
                return Err(too_many());
            }
            moves.push(mv);
        }
        Ok(Moves(moves))
    }
}

/// Whether the request says its body is JSON.
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"))
}

async fn verify(
    State(app): State<App>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<impl IntoResponse, ApiError> {
    let body = body.map_err(|e| match e {
        BytesRejection::FailedToBufferBody(f) if f.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "the request body is too large")
        }
        // The gate ends a body that does not arrive in time.
        _ => ApiError::new(StatusCode::REQUEST_TIMEOUT, "the request body did not arrive whole"),
    })?;
    if !is_json(&headers) {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "send the request body as JSON, with `Content-Type: application/json`",
        ));
    }
    blocking(move || {
        let request: VerifyRequest = serde_json::from_slice(&body).map_err(|e| {
            Error::Usage(format!(
                "bad request body: {}; send {{\"position\": \"5_4_a1-a3_e1-e3\", \"moves\": [\"a3-b2\"]}}",
                clip(&e.to_string(), 120)
            ))
        })?;
        let position: Position = request.position.parse()?;
        let variant = request.variant.filter(|v| !v.is_empty());
        app.tablebase
            .table(&position, variant.as_deref())?
            .verify_written(&position, &request.moves.0)
    })
    .await
}

async fn variants(State(app): State<App>) -> Result<impl IntoResponse, ApiError> {
    blocking(move || report::variants(app.tablebase.dir())).await
}

async fn stats(
    State(app): State<App>,
    name: Result<UrlPath<String>, PathRejection>,
) -> Result<impl IntoResponse, ApiError> {
    let UrlPath(name) = name.map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("bad variant name in the path: {}", clip(&e.body_text(), 120)),
        )
    })?;
    blocking(move || {
        // Opening the table solves a small variant first, as a query would.
        app.tablebase.variant_table(Variant::named(&name)?)?;
        report::stats(app.tablebase.dir(), &name)
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fault_of_the_server_is_told_in_words_without_its_paths() {
        let faults = [
            Error::DbPath(
                "database directory `/srv/secret/db` is a file, not a directory: give --db a directory".into(),
            ),
            Error::DbPath("`/srv/secret/db/5x4.sqlite` is a directory where the database of 5x4 belongs".into()),
            Error::Io("/srv/secret/db/5x4.sqlite".into(), std::io::Error::other("boom")),
            Error::Corrupt {
                path: "/srv/secret/db/5x4.sqlite".into(),
                problem: "cannot be read (unable to open /srv/secret/db/5x4.sqlite)".into(),
                variant: "5x4".into(),
            },
            Error::Mismatch("the table of /srv/secret/db disagrees".into()),
            Error::Exchange("worker 1 stopped".into()),
        ];
        for fault in faults {
            let answer = ApiError::from(fault);
            assert_eq!(answer.status, StatusCode::INTERNAL_SERVER_ERROR);
            let message = &answer.message;
            assert!(
                !message.contains('/') && !message.contains("secret") && !message.contains(".sqlite"),
                "{message}"
            );
            assert!(
                message.contains("the server's log") && !message.contains('\n'),
                "{message}"
            );
        }
    }
}
