//! The web server's API over a real loopback socket: every test starts
//! `bishops::server::serve` on `127.0.0.1:0` with a fresh database directory
//! and talks HTTP to it, and compares the answers with what the `bishops`
//! binary prints for the same question.

#[path = "support/mod.rs"]
mod support;

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use support::http::{Reply, get, post, raw, request, request_with};
use support::{Server, fresh_dir, spawn_serve, spawn_serve_until};

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

/// `--cache-mib`: a server whose cache of blocks is one MiB answers as
/// the default one does, and a cache larger than the machine's memory is
/// refused in one line, exit status 2, before anything listens.
#[cfg(unix)]
#[test]
fn the_cache_of_blocks_is_sized_within_the_machines_memory() {
    let dir = fresh_dir("serve-cache");
    let (code, message) = cli_error(&dir, &["serve", "--port", "0", "--cache-mib", "16777216"]);
    assert_eq!(code, 2, "{message}");
    assert!(
        message.starts_with("--cache-mib 16777216 is more than the ") && message.ends_with(" MiB of memory available"),
        "{message}"
    );
    let (code, _, stderr) = cli(&dir, &["serve", "--port", "0", "--cache-mib", "0"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.starts_with("error: invalid value '0' for '--cache-mib <MIB>'"),
        "{stderr}"
    );
    let (child, addr, log) = spawn_serve(&dir, &["--cache-mib", "1"]);
    assert_eq!(
        get(addr, &format!("/api/query?position={START}")).json()["remoteness"],
        18
    );
    stop_serve(child, log);
}

/// `--hold`: the binary reads a table into its memory of blocks as it
/// starts, says what it held, and answers every question as the command
/// line does; a variant that does not exist is refused in one line, exit
/// status 2, before anything listens, and one not solved is said so while
/// the server goes on answering.
#[cfg(unix)]
#[test]
fn a_held_table_answers_as_the_command_line_does() {
    let dir = fresh_dir("serve-hold");
    let (code, message) = cli_error(&dir, &["serve", "--port", "0", "--hold", "7x7x"]);
    assert_eq!(code, 2, "{message}");
    assert!(message.starts_with("unknown variant `7x7x`"), "{message}");
    cli_json(&dir, &["solve", "7x6"]);
    let (child, addr, said, log) = spawn_serve_until(
        &dir,
        &["--hold", "7x6", "--hold", "9x8", "--on-demand-entries", "0"],
        "bishops: cannot hold 9x8",
    );
    let held = said
        .lines()
        .find(|l| l.starts_with("bishops: held 7x6: "))
        .unwrap_or_else(|| panic!("{said}"));
    assert!(
        held.contains(" positions in ") && held.contains(" bits a position"),
        "{held}"
    );
    assert!(said.contains("9x8"), "{said}");
    let start = "7_6_a1-a3-a5_g1-g3-g5";
    let probe = get(addr, &format!("/api/query?position={start}")).json();
    assert_eq!(probe, cli_json(&dir, &["query", start]));
    for m in probe["moves"].as_array().unwrap() {
        let after = m["position"].as_str().unwrap();
        assert_eq!(
            get(addr, &format!("/api/query?position={after}")).json(),
            cli_json(&dir, &["query", after])
        );
    }
    let rest = stop_serve(child, log);
    assert!(!rest.contains("held"), "{rest}");
}

/// The binary: `--port 0` names the address it took on its first stderr
/// line, serves, and stops cleanly on SIGINT; a port in use is one line
/// and exit status 2.
#[cfg(unix)]
#[test]
#[cfg(unix)]
fn the_binary_serves_and_stops_on_ctrl_c() {
    let dir = fresh_dir("serve-binary");
    let (child, addr, log) = spawn_serve(&dir, &[]);
    assert!(addr.ip().is_loopback() && addr.port() != 0, "{addr}");
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

    let rest = stop_serve(child, log);
    assert!(rest.ends_with("bishops: stopping\nbishops: stopped\n"), "{rest:?}");
    assert!(request(addr, "GET", "/", None).is_err(), "still listening after Ctrl-C");
}

/// `GET path` with exactly `headers`; panics when the connection fails.
fn ask(addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> Reply {
    request_with(addr, "GET", path, headers, None).unwrap_or_else(|e| panic!("GET {path} {headers:?}: {e}"))
}

/// `POST /api/verify` of one move from the start, with `headers` besides
/// its content type; panics when the connection fails.
fn ask_verify(addr: SocketAddr, headers: &[(&str, &str)]) -> Reply {
    let mut headers = headers.to_vec();
    headers.push(("Content-Type", "application/json"));
    let body = json!({"position": START, "moves": ["a3-b2"]}).to_string();
    request_with(addr, "POST", "/api/verify", &headers, Some(&body))
        .unwrap_or_else(|e| panic!("POST /api/verify {headers:?}: {e}"))
}

/// The names of what `dir` holds (nothing when it does not exist).
fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// A port that is not `port`.
fn other_port(port: u16) -> u16 {
    if port == u16::MAX { port - 1 } else { port + 1 }
}

/// DNS rebinding: a page of another site, through a name of its own that
/// it makes resolve to 127.0.0.1, reaches the server with that name in
/// `Host`. Every path refuses it, the page included, with a short JSON
/// error, and nothing is solved.
#[test]
fn a_foreign_host_is_refused_on_every_path() {
    let dir = fresh_dir("serve-foreign-host");
    let server = Server::start(&dir);
    let port = server.addr.port();
    let query = format!("/api/query?position={START}");
    let line = format!("/api/line?position={START}");
    let hosts = [
        "evil.example".to_owned(),
        format!("evil.example:{port}"),
        "127.0.0.1.evil.example".to_owned(),
        format!("127.0.0.1.evil.example:{port}"),
        format!("localhost.evil.example:{port}"),
        format!("EVIL.example:{port}"),
        format!("10.0.0.1:{port}"),
    ];
    for host in &hosts {
        for path in [
            "/",
            "/app.js",
            &query,
            &line,
            "/api/variants",
            "/api/stats/5x4",
            "/nope",
        ] {
            let reply = ask(server.addr, path, &[("Host", host)]);
            let message = error_of(&reply, 421);
            assert!(message.contains("--allow-host"), "{host} {path}: {message}");
            assert!(reply.body.len() < 400, "{host} {path}: {}", reply.body);
        }
        error_of(&ask_verify(server.addr, &[("Host", host)]), 421);
    }
    // A Host too long to be a name is quoted clipped.
    let huge = format!("{}.example:{port}", "a".repeat(5000));
    let reply = ask(server.addr, &query, &[("Host", &huge)]);
    error_of(&reply, 400);
    assert!(reply.body.len() < 400, "{}", reply.body);
    assert_eq!(files_in(&dir), Vec::<String>::new(), "something was written");
}

/// The loopback names and addresses are admitted with the server's port
/// or none; another port names another server. HTTP/1.1 needs one Host
/// that is a host; HTTP/1.0 may go without.
#[test]
fn loopback_hosts_are_admitted_on_the_servers_port_only() {
    let dir = fresh_dir("serve-loopback-host");
    let server = Server::start(&dir);
    let (addr, port) = (server.addr, server.addr.port());
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("LocalHost:{port}"),
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        format!("127.3.2.1:{port}"),
        format!("[::1]:{port}"),
        format!("[0:0:0:0:0:0:0:1]:{port}"),
        format!("app.localhost:{port}"),
        format!("localhost.:{port}"),
    ] {
        let reply = ask(addr, "/api/variants", &[("Host", &host)]);
        assert_eq!(reply.status, 200, "{host}: {reply:#?}");
        assert_eq!(ask(addr, "/", &[("Host", &host)]).status, 200, "{host}");
    }
    let other = other_port(port);
    for host in [
        format!("127.0.0.1:{other}"),
        format!("localhost:{other}"),
        format!("[::1]:{other}"),
        "localhost:0".to_owned(),
    ] {
        let message = error_of(&ask(addr, "/api/variants", &[("Host", &host)]), 421);
        assert!(message.contains(&format!("port {port}")), "{host}: {message}");
    }
    // What is not a host and port at all.
    for host in [
        "",
        "local host",
        "[::1",
        "::1",
        "localhost:",
        "localhost:80:80",
        "localhost:99999",
        "localhost:+80",
        "user@localhost",
        "localhost/x",
    ] {
        let message = error_of(&ask(addr, "/api/variants", &[("Host", host)]), 400);
        assert!(message.contains("Host"), "{host:?}: {message}");
    }
    let message = error_of(&ask(addr, "/api/variants", &[]), 400);
    assert!(message.contains("no Host"), "{message}");
    let host = addr.to_string();
    let message = error_of(&ask(addr, "/api/variants", &[("Host", &host), ("Host", &host)]), 400);
    assert!(message.contains("Host"), "{message}");
    let (reply, _) = raw(addr, b"GET / HTTP/1.1\r\nHost: \xff\r\n\r\n", Duration::from_secs(20));
    error_of(&reply.expect("a reply"), 400);
    // No browser speaks HTTP/1.0, which has no Host.
    let (reply, _) = raw(addr, b"GET /api/variants HTTP/1.0\r\n\r\n", Duration::from_secs(20));
    assert_eq!(reply.expect("a reply").status, 200);
}

/// A page of another site (its `Origin`, or the browser's
/// `Sec-Fetch-Site`) may not use the API, so cannot have a variant solved
/// and written; the server's own page may, and a link from anywhere opens
/// the page.
#[test]
fn a_request_from_another_sites_page_solves_nothing() {
    let dir = fresh_dir("serve-origin");
    let server = Server::start(&dir);
    let (addr, port) = (server.addr, server.addr.port());
    let host = addr.to_string();
    let query = format!("/api/query?position={START}");
    let line = format!("/api/line?position={START}");
    let foreign = [
        ("Origin", "http://evil.example".to_owned()),
        ("Origin", format!("http://evil.example:{port}")),
        ("Origin", "null".to_owned()),
        ("Origin", format!("http://127.0.0.1:{port}.evil.example")),
        ("Origin", format!("http://localhost:{}", other_port(port))),
        ("Origin", format!("ftp://127.0.0.1:{port}")),
        ("Origin", format!("http://127.0.0.1:{port}/x")),
        ("Origin", format!("http://{}", "a".repeat(5000))),
        ("Sec-Fetch-Site", "cross-site".to_owned()),
        ("Sec-Fetch-Site", "same-site".to_owned()),
    ];
    for (name, value) in &foreign {
        let headers = [("Host", host.as_str()), (*name, value.as_str())];
        for path in [&query, &line, "/api/stats/5x4", "/api/variants"] {
            let reply = ask(addr, path, &headers);
            let message = error_of(&reply, 403);
            assert!(message.contains("another site"), "{name}: {value}: {message}");
            assert!(reply.body.len() < 400, "{}", reply.body);
        }
        error_of(&ask_verify(addr, &headers), 403);
        // The page itself: a link from another site opens it.
        assert_eq!(ask(addr, "/", &headers).status, 200, "{name}: {value}");
    }
    assert_eq!(files_in(&dir), Vec::<String>::new(), "something was written");

    // This server's own page, under any of its names.
    let same = [
        ("Origin", format!("http://{host}")),
        ("Origin", format!("http://localhost:{port}")),
        ("Origin", format!("HTTP://LocalHost:{port}")),
        ("Sec-Fetch-Site", "same-origin".to_owned()),
        ("Sec-Fetch-Site", "none".to_owned()),
    ];
    for (name, value) in &same {
        let headers = [("Host", host.as_str()), (*name, value.as_str())];
        let reply = ask(addr, &query, &headers);
        assert_eq!(reply.status, 200, "{name}: {value}: {reply:#?}");
        assert_eq!(reply.json()["remoteness"], 18);
        let reply = ask_verify(addr, &headers);
        assert_eq!(reply.status, 200, "{name}: {value}: {reply:#?}");
    }
    assert!(dir.join("5x4.sqlite").is_file(), "{:?}", files_in(&dir));
}

/// A fault of the server (a `--db` that is a file; a directory where a
/// database belongs) answers 500 in words that name no file or directory
/// of the machine.
#[test]
fn a_500_names_nothing_of_the_machine() {
    let file = fresh_dir("serve-db-is-a-file");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "not a directory").unwrap();
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    let server = Server::start(&file);
    for path in [
        "/api/variants",
        "/api/stats/5x4",
        &format!("/api/query?position={START}"),
    ] {
        names_nothing_of_the_machine(&get(server.addr, path), &name);
    }
    drop(server);
    std::fs::remove_file(&file).unwrap();

    let dir = fresh_dir("serve-db-holds-a-directory");
    std::fs::create_dir_all(dir.join("5x4.sqlite")).unwrap();
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let server = Server::start(&dir);
    names_nothing_of_the_machine(&get(server.addr, &format!("/api/query?position={START}")), &name);
}

/// Asserts that `reply` is a 500 that sends its reader to the server's log
/// and names nothing of the machine: not `name` (a directory's), no path,
/// no database file.
fn names_nothing_of_the_machine(reply: &Reply, name: &str) {
    let message = error_of(reply, 500);
    assert!(
        !reply.body.contains(name) && !reply.body.contains('/') && !reply.body.contains(".sqlite"),
        "{}",
        reply.body
    );
    assert!(message.contains("the server's log"), "{message}");
}

/// Stops a server of [`spawn_serve`] with SIGINT; the rest of its stderr.
#[cfg(unix)]
fn stop_serve(mut child: std::process::Child, log: std::thread::JoinHandle<String>) -> String {
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    let log = log.join().unwrap();
    assert!(status.success(), "{status:?}: {log}");
    log
}

/// `--allow-host` admits each name given (any case, with the server's port,
/// the port given, or none) and nothing more; `*` admits any Host, but
/// still no other site's page.
#[cfg(unix)]
#[test]
fn allow_host_admits_exactly_the_names_given() {
    let dir = fresh_dir("serve-allow-host");
    let (child, addr, log) = spawn_serve(
        &dir,
        &["--allow-host", "example.test", "--allow-host", "Tunnel.Test:9000"],
    );
    let port = addr.port();
    for host in [
        format!("example.test:{port}"),
        "EXAMPLE.test".to_owned(),
        format!("example.test.:{port}"),
        "tunnel.test:9000".to_owned(),
        "tunnel.test".to_owned(),
        format!("localhost:{port}"),
    ] {
        let reply = ask(addr, "/api/variants", &[("Host", &host)]);
        assert_eq!(reply.status, 200, "{host}: {reply:#?}");
    }
    for host in [
        "evil.example".to_owned(),
        format!("sub.example.test:{port}"),
        format!("example.test:{}", other_port(port)),
        format!("tunnel.test:{port}"),
        "example.testx".to_owned(),
    ] {
        error_of(&ask(addr, "/api/variants", &[("Host", &host)]), 421);
    }
    // The page served under an allowed name is this server's own.
    let host = format!("example.test:{port}");
    let origin = format!("http://{host}");
    let reply = ask(
        addr,
        &format!("/api/query?position={START}"),
        &[("Host", &host), ("Origin", &origin)],
    );
    assert_eq!(reply.status, 200, "{reply:#?}");
    error_of(
        &ask_verify(addr, &[("Host", &host), ("Origin", "http://evil.example")]),
        403,
    );
    stop_serve(child, log);

    let (child, addr, log) = spawn_serve(&dir, &["--allow-host", "*"]);
    let host = format!("evil.example:{}", addr.port());
    assert_eq!(ask(addr, "/api/variants", &[("Host", &host)]).status, 200);
    error_of(
        &ask_verify(addr, &[("Host", &host), ("Origin", "http://other.example")]),
        403,
    );
    stop_serve(child, log);

    // A name that is no name is refused on the command line.
    let (code, _, stderr) = cli(&dir, &["serve", "--port", "0", "--allow-host", "exa mple"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--allow-host"), "{stderr}");
}

/// The binary answers a fault of its own with 500 in words, and prints the
/// whole of it, paths included, on its stderr for its operator.
#[cfg(unix)]
#[test]
fn a_500_leaves_its_detail_in_the_servers_log() {
    let parent = fresh_dir("serve-fault-log");
    std::fs::create_dir_all(&parent).unwrap();
    let db = parent.join("private-db");
    let (child, addr, log) = spawn_serve(&db, &[]);
    // The directory is checked when the server starts: it becomes a file
    // afterwards.
    std::fs::write(&db, "not a directory").unwrap();
    let reply = get(addr, "/api/variants");
    let message = error_of(&reply, 500);
    assert!(
        !reply.body.contains("private-db") && !reply.body.contains('/'),
        "{}",
        reply.body
    );
    assert!(message.contains("the server's log"), "{message}");
    let log = stop_serve(child, log);
    assert!(
        log.contains(&format!("bishops: error: database directory `{}`", db.display())),
        "{log}"
    );
}
