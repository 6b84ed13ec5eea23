//! The web server's API over a real loopback socket: every test starts
//! `bishops::server::serve` on `127.0.0.1:0` with a fresh database directory
//! and talks HTTP to it, and compares the answers with what the `bishops`
//! binary prints for the same question.

#[path = "support/mod.rs"]
mod support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use support::http::{get, post, request};
use support::{Server, fresh_dir};

const START: &str = "5_4_a1-a3_e1-e3";

/// Runs `bishops --db DIR ARGS…` and returns (exit status, stdout, stderr).
fn cli(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_bishops"))
        .env_remove("BISHOPS_DB")
        .arg("--db")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// The document `bishops ARGS… --json` prints.
fn cli_json(dir: &Path, args: &[&str]) -> Value {
    let mut args = args.to_vec();
    args.push("--json");
    let (code, stdout, stderr) = cli(dir, &args);
    assert_eq!(code, 0, "bishops {args:?} failed: {stderr}");
    serde_json::from_str(&stdout).unwrap()
}

/// The one-line message `bishops ARGS…` fails with, and its exit status.
fn cli_error(dir: &Path, args: &[&str]) -> (i32, String) {
    let (code, _, stderr) = cli(dir, args);
    let message = stderr
        .lines()
        .find_map(|l| l.strip_prefix("bishops: error: "))
        .unwrap_or_else(|| panic!("no error line in {stderr:?}"));
    (code, message.to_owned())
}

/// Asserts a JSON error reply of `status` and returns its message.
fn error_of(reply: &support::http::Reply, status: u16) -> String {
    assert_eq!(reply.status, status, "{reply:#?}");
    assert_eq!(reply.header("content-type"), Some("application/json"), "{reply:#?}");
    let message = reply.json()["error"].as_str().expect("an `error` string").to_owned();
    assert!(!message.is_empty() && !message.contains('\n'), "one line: {message:?}");
    message
}

#[test]
fn start_of_5x4_is_18_and_a_move_plays_to_17() {
    let dir = fresh_dir("serve-start");
    let server = Server::start(&dir);

    let reply = get(server.addr, &format!("/api/query?position={START}"));
    assert_eq!(reply.status, 200, "{reply:#?}");
    assert_eq!(reply.header("content-type"), Some("application/json"));
    let probe = reply.json();
    assert_eq!(probe["remoteness"], 18);
    assert_eq!(probe["status"], "solvable");
    assert_eq!(probe["variant"], "5x4");
    assert_eq!(probe["moves"].as_array().unwrap().len(), 4);
    let a3b2 = probe["moves"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["move"] == "a3-b2")
        .unwrap();
    assert_eq!((&a3b2["remoteness"], &a3b2["value"]), (&json!(17), &json!("better")));
    // The same document as the command line's.
    assert_eq!(probe, cli_json(&dir, &["query", START]));

    // Play the move: the position after it, and the verdict of the sequence.
    let after = a3b2["position"].as_str().unwrap();
    let probe = get(server.addr, &format!("/api/query?position={after}")).json();
    assert_eq!(probe["remoteness"], 17);
    let verdict = post(
        server.addr,
        "/api/verify",
        &json!({"position": START, "moves": ["a3-b2"]}),
    );
    assert_eq!(verdict.status, 200, "{verdict:#?}");
    let verdict = verdict.json();
    assert_eq!(verdict["moves"][0]["remoteness"], 17);
    assert_eq!(verdict["moves"][0]["value"], "better");
    assert_eq!(verdict["first_mistake"], Value::Null);
    assert_eq!(verdict, cli_json(&dir, &["verify", START, "a3-b2"]));
    // Moves as one text, as `verify -` reads them.
    let text = post(
        server.addr,
        "/api/verify",
        &json!({"position": START, "moves": "a3-b2 # best\n e1d2", "variant": "5x4"}),
    )
    .json();
    assert_eq!(text["moves"][1]["value"], "same");
    assert_eq!(text["first_mistake"], 2);

    let line = get(server.addr, &format!("/api/line?position={START}&variant=5x4")).json();
    assert_eq!(line["moves"].as_array().unwrap().len(), 18);
    assert_eq!(line, cli_json(&dir, &["line", START]));
}

#[test]
fn bad_input_is_400_with_the_command_line_message() {
    let dir = fresh_dir("serve-bad");
    let server = Server::start(&dir);

    let bad = "5_4_a1-a3_e1-e9";
    let message = error_of(&get(server.addr, &format!("/api/query?position={bad}")), 400);
    assert_eq!((2, message.clone()), cli_error(&dir, &["query", bad]));
    assert!(message.contains("e9 is off the 5x4 board"), "{message}");
    let message = error_of(&get(server.addr, &format!("/api/line?position={bad}")), 400);
    assert_eq!(message, cli_error(&dir, &["line", bad]).1);

    // An illegal move in a sequence, and an unknown variant.
    let reply = post(
        server.addr,
        "/api/verify",
        &json!({"position": START, "moves": ["a3-b2", "a1-a2"]}),
    );
    assert_eq!(
        error_of(&reply, 400),
        cli_error(&dir, &["verify", START, "a3-b2", "a1-a2"]).1
    );
    let reply = get(server.addr, &format!("/api/query?position={START}&variant=nope"));
    assert_eq!(
        error_of(&reply, 400),
        cli_error(&dir, &["query", START, "--variant", "nope"]).1
    );
    assert_eq!(
        error_of(&get(server.addr, "/api/stats/nope"), 400),
        cli_error(&dir, &["stats", "nope"]).1
    );

    // What only the server can be sent: no position, a body that is not the request.
    assert!(error_of(&get(server.addr, "/api/query"), 400).contains("missing `position`"));
    assert!(error_of(&get(server.addr, "/api/line?position="), 400).contains("missing `position`"));
    let reply = request(server.addr, "POST", "/api/verify", Some("{\"moves\": 3}")).unwrap();
    assert!(error_of(&reply, 400).starts_with("bad request body"));
    let reply = request(server.addr, "POST", "/api/verify", Some("not json")).unwrap();
    assert!(error_of(&reply, 400).starts_with("bad request body"));
    let many = vec!["a3-b2"; bishops::server::MAX_VERIFY_MOVES + 1];
    let reply = post(server.addr, "/api/verify", &json!({"position": START, "moves": many}));
    assert!(error_of(&reply, 400).contains("more than 10000 moves"));
    // A wrong method.
    error_of(&get(server.addr, "/api/verify"), 405);
    error_of(&request(server.addr, "POST", "/api/query", Some("{}")).unwrap(), 405);
}

#[test]
fn only_the_page_and_the_api_are_served() {
    let dir = fresh_dir("serve-paths");
    let server = Server::start(&dir);

    let page = get(server.addr, "/");
    assert_eq!(page.status, 200);
    assert_eq!(page.header("content-type"), Some("text/html; charset=utf-8"));
    assert!(page.body.contains("<script src=\"/app.js\"></script>"), "{}", page.body);
    let script = get(server.addr, "/app.js");
    assert_eq!(script.status, 200);
    assert_eq!(script.header("content-type"), Some("text/javascript; charset=utf-8"));
    assert!(script.body.contains("/api/query"));

    for path in [
        "/nope",
        "/api",
        "/api/",
        "/api/nope",
        "/../Cargo.toml",
        "/../../../../etc/passwd",
        "/%2e%2e/Cargo.toml",
        "/..%2fCargo.toml",
        "/api/../Cargo.toml",
        "/src/server.rs",
        "/Cargo.toml",
        "/app.js/../Cargo.toml",
        "/api/stats/5x4/../../Cargo.toml",
    ] {
        let reply = get(server.addr, path);
        let message = error_of(&reply, 404);
        assert!(message.starts_with("no such page"), "{path}: {message}");
        assert!(
            !reply.body.contains("[package]") && !reply.body.contains("root:"),
            "{path}: {reply:#?}"
        );
    }
    // A variant name that looks like a path is only a name nobody has.
    let message = error_of(&get(server.addr, "/api/stats/..%2F..%2FCargo.toml"), 400);
    assert!(message.starts_with("unknown variant `../../Cargo.toml`"), "{message}");
}

#[test]
fn variants_and_stats_equal_the_command_line() {
    let dir = fresh_dir("serve-reports");
    let server = Server::start(&dir);

    let variants = get(server.addr, "/api/variants");
    assert_eq!(variants.status, 200, "{variants:#?}");
    assert_eq!(variants.json(), cli_json(&dir, &["variants"]));
    assert_eq!(variants.json()["variants"][0]["solved"], false);

    // Stats of a small variant solve it first, as a query would.
    let stats = get(server.addr, "/api/stats/5x4");
    assert_eq!(stats.status, 200, "{stats:#?}");
    let stats = stats.json();
    assert_eq!(stats["start_remoteness"], 18);
    assert_eq!(stats["classes"][0]["legal"], 100);
    assert_eq!(stats, cli_json(&dir, &["stats", "5x4"]));
    let variants = get(server.addr, "/api/variants").json();
    assert_eq!(variants["variants"][0]["solved"], true);
    assert_eq!(variants["variants"][0]["start_remoteness"], 18);
    assert_eq!(variants, cli_json(&dir, &["variants"]));
}

#[test]
fn a_variant_too_large_to_solve_on_demand_is_refused_at_once() {
    let dir = fresh_dir("serve-large");
    let server = Server::start(&dir);

    let began = Instant::now();
    let reply = get(server.addr, "/api/query?position=9_6_a1-a3-a5_i1-i3-i5");
    let message = error_of(&reply, 409);
    assert!(
        message.starts_with("variant 9x6-a1 is not solved") && message.contains("bishops solve 9x6-a1"),
        "{message}"
    );
    let message = error_of(&get(server.addr, "/api/stats/9x8"), 409);
    assert!(message.starts_with("variant 9x8 is not solved"), "{message}");
    assert!(
        began.elapsed() < Duration::from_secs(5),
        "refusing took {:?}",
        began.elapsed()
    );
    assert!(!dir.join("9x6-a1.sqlite").exists() && !dir.join("9x8.sqlite").exists());
    // The server still answers.
    assert_eq!(
        get(server.addr, &format!("/api/query?position={START}")).json()["remoteness"],
        18
    );
}

#[test]
fn concurrent_requests_get_the_same_answers() {
    let dir = fresh_dir("serve-concurrent");
    let server = Server::start(&dir);

    let paths: Vec<String> = [
        START,
        "5_4_a1-b2_e1-e3",
        "5_4_e1-e3_a1-a3",
        "7_4_a1-a3_g1-g3",
        "5_4_a1-a2-a3-a4_e1-e2-e3-e4",
    ]
    .iter()
    .flat_map(|p| [format!("/api/query?position={p}"), format!("/api/line?position={p}")])
    // Not /api/variants: its answer changes as variants get solved.
    .chain(["/api/stats/7x4".to_owned()])
    .collect();
    // Eight threads at once, from a cold start: the first requests solve
    // the variants on demand while the others wait for them.
    let answers: Vec<Vec<(u16, String)>> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let (server, paths) = (&server, &paths);
                scope.spawn(move || {
                    (0..3)
                        .flat_map(|round| {
                            let mut order: Vec<&String> = paths.iter().collect();
                            order.rotate_left((t + round) % paths.len());
                            order
                        })
                        .map(|path| {
                            let reply = get(server.addr, path);
                            (path.clone(), reply)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| {
                let mut replies = t.join().unwrap();
                replies.sort_by(|a, b| a.0.cmp(&b.0));
                replies.into_iter().map(|(_, r)| (r.status, r.body)).collect()
            })
            .collect()
    });
    let mut expected: Vec<(String, support::http::Reply)> =
        paths.iter().map(|p| (p.clone(), get(server.addr, p))).collect();
    expected.sort_by(|a, b| a.0.cmp(&b.0));
    for (path, reply) in &expected {
        assert_eq!(reply.status, 200, "{path}: {reply:#?}");
    }
    let expected: Vec<(u16, String)> = expected
        .into_iter()
        .flat_map(|(_, r)| std::iter::repeat_n((r.status, r.body), 3))
        .collect();
    for (t, replies) in answers.iter().enumerate() {
        assert_eq!(replies, &expected, "thread {t}");
    }
    let full = get(server.addr, "/api/query?position=5_4_a1-a2-a3-a4_e1-e2-e3-e4").json();
    assert_eq!(full["remoteness"], 36);
}

/// The binary: `--port 0` names the address it took on its first stderr
/// line, serves, and stops cleanly on SIGINT; a port in use is one line
/// and exit status 2.
#[cfg(unix)]
#[test]
fn the_binary_serves_and_stops_on_ctrl_c() {
    use std::io::{BufRead, BufReader};

    let dir = fresh_dir("serve-binary");
    let mut child = Command::new(env!("CARGO_BIN_EXE_bishops"))
        .env_remove("BISHOPS_DB")
        .args(["serve", "--port", "0", "--db"])
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    stderr.read_line(&mut first).unwrap();
    let url = first
        .strip_prefix("bishops: serving http://")
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_else(|| panic!("first line {first:?}"));
    let addr: std::net::SocketAddr = url.parse().unwrap();
    assert!(addr.ip().is_loopback() && addr.port() != 0, "{first}");
    assert_eq!(
        get(addr, &format!("/api/query?position={START}")).json()["remoteness"],
        18
    );

    // The same port again: one clear line.
    let (code, stdout, again) = cli(&dir, &["serve", "--port", &addr.port().to_string()]);
    assert_eq!((code, stdout.as_str()), (2, ""), "{again}");
    assert_eq!(
        again,
        format!(
            "bishops: error: cannot listen on {addr}: the port is in use; choose another with --port (0 picks a free one)\n"
        )
    );

    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    assert!(status.success(), "{status:?}: {rest}");
    assert!(rest.ends_with("bishops: stopping\nbishops: stopped\n"), "{rest:?}");
    assert!(request(addr, "GET", "/", None).is_err(), "still listening after Ctrl-C");
}
