//! The page in a real browser: headless Chromium driven over WebDriver
//! (chromedriver's HTTP protocol, a few JSON calls over the same small
//! client the API tests use), against the server started in-process.
//!
//! The test needs `/usr/bin/chromium` and `/usr/bin/chromedriver` (Debian's
//! `chromium` and `chromium-driver`), so a plain `cargo test` reports it
//! ignored; `.ci/run` installs them when missing and runs it with
//! `cargo test --test browser -- --ignored`, where a missing browser fails.
//!
//! It saves screenshots to `target/tmp/serve.png` and `serve-phone.png`;
//! with `BISHOPS_UPDATE_SCREENSHOT=1` it also writes the README's
//! `docs/serve.png`.

#[path = "support/mod.rs"]
mod support;

use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use support::http::{self, Reply};
use support::{Scratch, Server, fresh_dir};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
/// The key under which WebDriver names an element.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A chromedriver process, killed on drop.
struct Driver {
    child: Child,
    addr: SocketAddr,
}

impl Driver {
    fn start() -> Driver {
        for program in [CHROMIUM, CHROMEDRIVER] {
            assert!(
                Path::new(program).exists(),
                "{program} is missing: install Debian's chromium and chromium-driver (`.ci/run` does)"
            );
        }
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let driver = Driver {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
        };
        wait_for("chromedriver to be ready", Duration::from_secs(30), || {
            http::request(driver.addr, "GET", "/status", None)
                .ok()
                .is_some_and(|r| r.json()["value"]["ready"] == true)
        });
        driver
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One browser session, deleted (the browser closed) on drop.
struct Session<'a> {
    driver: &'a Driver,
    id: String,
    /// Its profile directory, removed after the browser has closed.
    _profile: Scratch,
}

impl<'a> Session<'a> {
    fn new(driver: &'a Driver) -> Session<'a> {
        // Each session its own profile: the tests run side by side.
        static SESSIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = SESSIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let profile = fresh_dir(&format!("browser-profile-{n}"));
        std::fs::create_dir_all(&profile).unwrap();
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--window-size=1280,900",
            &format!("--user-data-dir={}", profile.display()),
        ];
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": CHROMIUM, "args": args},
        }}});
        let reply = ok(http::post(driver.addr, "/session", &capabilities));
        Session {
            driver,
            id: reply["sessionId"].as_str().expect("a session id").to_owned(),
            _profile: profile,
        }
    }

    fn post(&self, path: &str, body: &Value) -> Value {
        ok(http::post(
            self.driver.addr,
            &format!("/session/{}{path}", self.id),
            body,
        ))
    }

    fn get(&self, path: &str) -> Value {
        ok(http::get(self.driver.addr, &format!("/session/{}{path}", self.id)))
    }

    fn goto(&self, url: &str) {
        self.post("/url", &json!({ "url": url }));
    }

    /// The element `css` selects.
    fn find(&self, css: &str) -> String {
        let found = self.post("/element", &json!({"using": "css selector", "value": css}));
        found[ELEMENT]
            .as_str()
            .unwrap_or_else(|| panic!("no element {css}"))
            .to_owned()
    }

    /// Clicks `css` once the board has the moves of the position it shows.
    ///
    /// The page draws a position at once and again when its probe arrives, so
    /// an element found in between can be replaced before the click lands:
    /// WebDriver then answers "stale element reference" and nothing was
    /// clicked, so the click is tried again on the new element.
    fn click(&self, css: &str) {
        self.wait_attribute("#board", "aria-busy", "false");
        let mut last = None;
        let clicked = poll(Duration::from_secs(20), || {
            let element = self.find(css);
            let reply = http::post(
                self.driver.addr,
                &format!("/session/{}/element/{element}/click", self.id),
                &json!({}),
            );
            let stale = reply.status == 404 && reply.json()["value"]["error"] == "stale element reference";
            if !stale {
                ok(reply);
                return true;
            }
            last = Some(reply);
            false
        });
        assert!(clicked, "{css} stayed stale: {last:#?}");
    }

    /// Waits until attribute `name` of `css` is `expected`.
    fn wait_attribute(&self, css: &str, name: &str, expected: &str) {
        let mut last = Value::Null;
        let found = poll(Duration::from_secs(20), || {
            last = self.script(&format!(
                "const e = document.querySelector({css:?}); return e ? e.getAttribute({name:?}) : null;"
            ));
            last == expected
        });
        assert!(found, "{css} should have {name}={expected:?}, has {last}");
    }

    fn text(&self, css: &str) -> String {
        let element = self.find(css);
        self.get(&format!("/element/{element}/text"))
            .as_str()
            .unwrap()
            .to_owned()
    }

    fn script(&self, script: &str) -> Value {
        self.post("/execute/sync", &json!({"script": script, "args": []}))
    }

    /// Waits until the text of `css` is `expected`.
    fn wait_text(&self, css: &str, expected: &str) {
        let mut last = String::new();
        let found = poll(Duration::from_secs(20), || {
            last = self
                .script(&format!(
                    "const e = document.querySelector({css:?}); return e ? e.textContent : null;"
                ))
                .as_str()
                .unwrap_or("")
                .to_owned();
            last == expected
        });
        assert!(found, "{css} should read {expected:?}, reads {last:?}");
    }

    fn screenshot(&self, path: &Path) -> Vec<u8> {
        let png = base64(self.get("/screenshot").as_str().unwrap());
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "a PNG");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, &png).unwrap();
        png
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        let _ = http::delete(self.driver.addr, &format!("/session/{}", self.id));
    }
}

/// The `value` of a successful WebDriver reply.
fn ok(reply: Reply) -> Value {
    assert_eq!(reply.status, 200, "WebDriver: {reply:#?}");
    reply.json()["value"].clone()
}

/// Calls `done` until it says yes or `limit` passes; whether it said yes.
fn poll(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let began = Instant::now();
    while began.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

fn wait_for(what: &str, limit: Duration, done: impl FnMut() -> bool) {
    assert!(poll(limit, done), "timed out waiting for {what}");
}

/// Standard base64, as WebDriver sends screenshots.
fn base64(text: &str) -> Vec<u8> {
    let digit = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let digits: Vec<u8> = text
        .bytes()
        .filter(|&c| c != b'=' && !c.is_ascii_whitespace())
        .map(digit)
        .collect();
    digits
        .chunks(4)
        .flat_map(|chunk| {
            let n = chunk.iter().fold(0u32, |n, &d| (n << 6) | u32::from(d)) << (6 * (4 - chunk.len()));
            let bytes = n.to_be_bytes();
            bytes[1..chunk.len()].to_vec()
        })
        .collect()
}

/// The width and height a PNG's header gives.
fn png_size(png: &[u8]) -> (u32, u32) {
    let word = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
    (word(16), word(20))
}

#[test]
#[ignore = "needs /usr/bin/chromium and /usr/bin/chromedriver; .ci/run installs them and runs this with --ignored"]
fn play_a_move_undo_it_and_take_a_screenshot_in_chromium() {
    let dir = fresh_dir("browser-db");
    let server = Server::start(&dir);
    let driver = Driver::start();
    let session = Session::new(&driver);

    session.goto(&server.url("/?position=5_4_a1-a3_e1-e3"));
    session.wait_text("#remoteness", "18");
    assert_eq!(session.text("#status"), "to go");

    // Click a3: its destinations are marked with their value and remoteness.
    session.click("[data-square=\"a3\"]");
    session.wait_text("[data-square=\"b2\"] .dest", "17");
    let value = session.script("return document.querySelector('[data-square=\"b2\"]').dataset.value;");
    assert_eq!(value, "better");
    let title = session.script("return document.querySelector('[data-square=\"b2\"]').title;");
    assert_eq!(title, "a3-b2 → remoteness 17 (better)");

    // Then b2: the move is played.
    session.click("[data-square=\"b2\"]");
    session.wait_text("#remoteness", "17");
    assert_eq!(session.text("#played"), "1");
    assert!(session.text("#moves").contains("a3-b2"));
    assert_eq!(
        session.script("return document.querySelector('[data-square=\"b2\"]').dataset.piece;"),
        "white"
    );
    assert!(
        session
            .get("/url")
            .as_str()
            .unwrap()
            .ends_with("/?position=5_4_a1-a3_e1-e3&moves=a3-b2")
    );
    let points = session.script("return document.querySelectorAll('#chart-svg circle').length;");
    assert_eq!(points, 2, "the chart has the start and one move");

    // Undo returns to 18, redo to 17.
    session.click("#undo");
    session.wait_text("#remoteness", "18");
    assert_eq!(session.text("#played"), "0");
    session.click("#redo");
    session.wait_text("#remoteness", "17");

    // A few more moves and a selection, for a screenshot that shows the page at work.
    for (from, to, r) in [("e3", "d2", "16"), ("d2", "b4", "15")] {
        session.click(&format!("[data-square=\"{from}\"]"));
        session.click(&format!("[data-square=\"{to}\"]"));
        session.wait_text("#remoteness", r);
    }
    session.click("[data-square=\"b2\"]");
    session.wait_text("[data-square=\"c1\"] .dest", "14");
    session.wait_text("[data-square=\"d4\"] .dest", "15");
    let desktop = session.screenshot(&Path::new(env!("CARGO_TARGET_TMPDIR")).join("serve.png"));
    assert_eq!(png_size(&desktop).0, 1280);
    if std::env::var_os("BISHOPS_UPDATE_SCREENSHOT").is_some() {
        std::fs::write(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/serve.png"), &desktop).unwrap();
    }

    // A phone-sized screen: nothing wider than the screen, the board in view.
    session.post("/window/rect", &json!({"width": 390, "height": 844}));
    let fits = session.script(
        "const board = document.getElementById('board').getBoundingClientRect();
         return [document.documentElement.scrollWidth, window.innerWidth, board.right];",
    );
    let [scroll, inner, right] = [0, 1, 2].map(|i| fits[i].as_f64().unwrap());
    assert!(inner <= 400.0, "the window is phone-sized: {fits}");
    assert!(scroll <= inner && right <= inner, "the page fits a phone: {fits}");
    session.screenshot(&Path::new(env!("CARGO_TARGET_TMPDIR")).join("serve-phone.png"));

    // The optimal line, animated from here to the goal.
    session.click("#show-line");
    session.wait_text("#remoteness", "0");
    assert_eq!(session.text("#status"), "solved!");
    assert_eq!(session.text("#played"), "18", "3 moves played, then the 15 of the line");
}

#[test]
#[ignore = "needs /usr/bin/chromium and /usr/bin/chromedriver; .ci/run installs them and runs this with --ignored"]
fn a_board_with_a_hole_and_a_17_row_board_are_drawn_and_played_in_chromium() {
    let dir = fresh_dir("browser-holes");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("7x6-d4.json");
    std::fs::write(
        &file,
        r#"{"name": "7x6-d4", "description": "7x6 less d4", "start": "7_6_a1-a3-a5_g1-g3-g5", "holes": ["d4"]}"#,
    )
    .unwrap();
    bishops::Variant::add_user(vec![bishops::Variant::from_file(&file).unwrap()]).unwrap();
    // The page solves only small variants on demand: 17x4-a1 is solved first.
    let tall = bishops::Variant::named("17x4-a1").unwrap();
    bishops::Tablebase::new(&dir).variant_table(tall).unwrap();
    let server = Server::start(&dir);
    let driver = Driver::start();
    let session = Session::new(&driver);

    // The hole is drawn as one, and nothing can be done with it.
    session.goto(&server.url("/?position=7_6_a1-a3-a5_g1-g3-g5&variant=7x6-d4"));
    session.wait_text("#remoteness", "19");
    let hole = session.script(
        "const e = document.querySelector('[data-square=\"d4\"]');
         return [e.classList.contains('hole'), e.disabled, e.getAttribute('aria-label')];",
    );
    assert_eq!(hole, json!([true, true, "d4, a hole"]));
    // c3's diagonal towards e5 ends at the hole.
    session.click("[data-square=\"a1\"]");
    session.wait_text("[data-square=\"c3\"] .dest", "18");
    let beyond = session.script("return document.querySelector('[data-square=\"e5\"] .dest');");
    assert_eq!(beyond, Value::Null, "no move crosses the hole");
    session.click("[data-square=\"b2\"]");
    assert_eq!(session.text("#played"), "1");

    // Seventeen rows, on a desktop and at 390 px wide: the board fits and
    // a move is played on each.
    for (width, height) in [(1280, 900), (390, 844)] {
        session.post("/window/rect", &json!({"width": width, "height": height}));
        session.goto(&server.url("/?position=17_4_a1-a3_q1-q3"));
        session.wait_attribute("#board", "aria-busy", "false");
        let shown = session.script(
            "const board = document.getElementById('board').getBoundingClientRect();
             return [document.querySelectorAll('#board .sq').length, document.documentElement.scrollWidth,
                     window.innerWidth, board.right];",
        );
        assert_eq!(shown[0], 68, "17 rows of 4: {shown}");
        let [scroll, inner, right] = [1, 2, 3].map(|i| shown[i].as_f64().unwrap());
        assert!(scroll <= inner && right <= inner, "the page fits {width} px: {shown}");
        let before = session.text("#remoteness");
        session.click("[data-square=\"a1\"]");
        session.click("[data-square=\"b2\"]");
        assert_eq!(session.text("#played"), "1");
        assert_ne!(
            session.text("#remoteness"),
            "",
            "the new position has its remoteness ({before} before)"
        );
    }
    session.screenshot(&Path::new(env!("CARGO_TARGET_TMPDIR")).join("serve-17-rows-phone.png"));
}
