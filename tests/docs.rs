//! The README and `docs/` say what the program does, so they are tested
//! like code:
//!
//! - every transcript (a `$ bishops …` line in a ```` ```text ```` block,
//!   followed by its output) is run, in file order, in a fresh database
//!   directory per file, and its output compared with what the page shows:
//!   timings, sizes, thread counts and the database path may differ, and a
//!   line `...` or `…` stands for any number of lines. Transcripts of long
//!   work (boards beyond 7x6, `bench`, `serve`) and of tools that are not
//!   installed are not run;
//! - every `bishops` command line in the pages, run or not, parses;
//! - every position string in the pages parses, unless it is shown being
//!   refused.

use std::path::{Path, PathBuf};
use std::process::Command;

use bishops::Position;
use clap::Parser;

/// The pages tested: the README and every page of `docs/`.
fn pages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// One command shown in a page.
#[derive(Debug)]
struct Shown {
    /// Where: `README.md:12`.
    place: String,
    /// The command line as written, without `$ ` and a trailing comment.
    command: String,
    /// The output shown after it, in a transcript; `None` for a command
    /// given as an instruction.
    output: Option<Vec<String>>,
}

/// The commands of a page, in order.
fn commands(page: &Path) -> Vec<Shown> {
    let name = page.file_name().unwrap().to_string_lossy().into_owned();
    let text = std::fs::read_to_string(page).unwrap();
    let mut shown: Vec<Shown> = Vec::new();
    let mut fence: Option<String> = None;
    for (n, line) in text.lines().enumerate() {
        if let Some(rest) = line.strip_prefix("```") {
            fence = match fence {
                Some(_) => None,
                None => Some(rest.trim().to_owned()),
            };
            continue;
        }
        let Some(lang) = &fence else { continue };
        let place = format!("{name}:{}", n + 1);
        if let Some(command) = line.strip_prefix("$ ") {
            let transcript = lang == "text";
            shown.push(Shown {
                place,
                command: command.to_owned(),
                output: transcript.then(Vec::new),
            });
        } else if lang == "sh" && (line.starts_with("bishops ") || line.starts_with("cargo run --release -- ")) {
            let command = line.split(" # ").next().unwrap().trim_end();
            let command = command.replace("cargo run --release -- ", "bishops ");
            shown.push(Shown {
                place,
                command,
                output: None,
            });
        } else if let Some(last) = shown.last_mut()
            && let Some(output) = &mut last.output
        {
            output.push(line.to_owned());
        }
    }
    shown
}

/// The `bishops` invocations of a shell command line, as argument lists.
fn invocations(command: &str) -> Vec<Vec<String>> {
    command
        .split(['|', ';'])
        .map(|part| part.split(['<', '>']).next().unwrap().trim())
        .filter_map(|part| part.strip_prefix("bishops "))
        .map(|args| {
            let mut words = vec!["bishops".to_owned()];
            words.extend(shell_words(args));
            words
        })
        .collect()
}

/// Words as a shell splits them, for the quoting the pages use.
fn shell_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            (None, c) => word.push(c),
        }
    }
    if any || !word.is_empty() {
        words.push(word);
    }
    words
}

/// Whether a transcript is not run: long work, a server, or a tool that is
/// not installed here.
fn not_run(command: &str) -> bool {
    const LONG: [&str; 7] = ["9x6", "9x8", "11x8", "11x10", "12x10", " bench", " serve"];
    let tools_missing = ["jq", "curl", "sqlite3"]
        .iter()
        .any(|tool| command.contains(&format!("{tool} ")) && !on_path(tool));
    LONG.iter().any(|l| command.contains(l)) || command.starts_with("curl") || tools_missing
}

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(tool).is_file()))
}

/// A line with what may differ between runs made alike: the database
/// directory, decimal numbers (times), sizes, thread counts, runs of spaces.
fn normal(line: &str, db: &str) -> String {
    let line = line.replace(db, "db");
    let core = |w: &str| -> (usize, usize) {
        let start = w.len() - w.trim_start_matches('(').len();
        let end = w.trim_end_matches([',', ')', ':', ';']).len().max(start);
        (start, end)
    };
    let number =
        |w: &str| w.starts_with(|c: char| c.is_ascii_digit()) && w.chars().all(|c| c.is_ascii_digit() || c == '.');
    let words: Vec<&str> = line.split_whitespace().collect();
    let mut out = Vec::with_capacity(words.len());
    for (i, word) in words.iter().enumerate() {
        let (start, end) = core(word);
        let middle = &word[start..end];
        let next = words.get(i + 1).map_or("", |n| {
            let (s, e) = core(n);
            &n[s..e]
        });
        // A decimal number, such as a time: digits on both sides of a point.
        let timing = number(middle)
            && middle
                .split_once('.')
                .is_some_and(|(_, f)| f.starts_with(|c: char| c.is_ascii_digit()));
        let size = number(middle) && matches!(next, "KiB" | "MiB" | "GiB" | "threads");
        if timing || size {
            out.push(format!("{}#{}", &word[..start], &word[end..]));
        } else {
            out.push((*word).to_owned());
        }
    }
    out.join(" ")
}

/// Whether `actual` matches `expected`, where an expected `...`/`…` line
/// matches any run of lines.
fn matches(expected: &[String], actual: &[String]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first == "..." || first == "…" => {
            (0..=actual.len()).any(|skip| matches(rest, &actual[skip..]))
        }
        Some((first, rest)) => actual
            .split_first()
            .is_some_and(|(a, more)| a == first && matches(rest, more)),
    }
}

#[test]
fn every_transcript_in_the_pages_runs_as_shown() {
    let binary = Path::new(env!("CARGO_BIN_EXE_bishops"));
    let path = format!(
        "{}:{}",
        binary.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut failures = Vec::new();
    let mut ran = 0;
    for page in pages() {
        let stem = page.file_stem().unwrap().to_string_lossy().into_owned();
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("docs-{stem}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let db = dir.join("db");
        std::fs::create_dir_all(&db).unwrap();
        for shown in commands(&page) {
            let Some(expected) = &shown.output else { continue };
            if !shown.command.starts_with("bishops ") && !shown.command.starts_with("printf ")
                || not_run(&shown.command)
            {
                continue;
            }
            let output = Command::new("sh")
                .arg("-c")
                .arg(format!("( {} ) 2>&1", shown.command))
                .current_dir(&dir)
                .env("PATH", &path)
                .env("BISHOPS_DB", &db)
                .env_remove("BISHOPS_THREADS")
                .output()
                .unwrap();
            ran += 1;
            let db = db.display().to_string();
            let actual: Vec<String> = String::from_utf8_lossy(&output.stdout)
                .lines()
                .map(|l| normal(l, &db))
                .collect();
            let expected: Vec<String> = expected
                .iter()
                .map(|l| normal(l, &db))
                .filter(|l| !l.is_empty())
                .collect();
            let actual: Vec<String> = actual.into_iter().filter(|l| !l.is_empty()).collect();
            if !matches(&expected, &actual) {
                failures.push(format!(
                    "{}: `{}` printed\n{}\nwhere the page shows\n{}",
                    shown.place,
                    shown.command,
                    actual.join("\n"),
                    expected.join("\n")
                ));
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert!(ran >= 10, "only {ran} transcripts ran");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_command_in_the_pages_parses() {
    let mut failures = Vec::new();
    let mut seen = 0;
    for page in pages() {
        for shown in commands(&page) {
            for args in invocations(&shown.command) {
                seen += 1;
                if let Err(e) = bishops::cli::Cli::try_parse_from(&args) {
                    let first = e.to_string().lines().next().unwrap_or_default().to_owned();
                    failures.push(format!("{}: `{}`: {first}", shown.place, args.join(" ")));
                }
            }
        }
    }
    assert!(seen >= 20, "only {seen} commands found");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_position_in_the_pages_parses_unless_shown_refused() {
    let mut failures = Vec::new();
    let mut seen = 0;
    for page in pages() {
        let name = page.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&page).unwrap();
        for (n, line) in text.lines().enumerate() {
            let refused = line.contains("error") || line.contains("refused");
            for word in line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')) {
                let fields: Vec<&str> = word.split('_').collect();
                let looks = fields.len() == 4
                    && fields[0].parse::<u8>().is_ok()
                    && fields[1].parse::<u8>().is_ok()
                    && fields[2].starts_with(|c: char| c.is_ascii_lowercase());
                if !looks {
                    continue;
                }
                seen += 1;
                if let Err(e) = word.parse::<Position>()
                    && !refused
                {
                    failures.push(format!("{name}:{}: {e}", n + 1));
                }
            }
        }
    }
    assert!(seen >= 30, "only {seen} positions found");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_reader_of_pages_reads_as_meant() {
    assert_eq!(shell_words("a 'b c' \"d\" ''"), ["a", "b c", "d", ""]);
    assert_eq!(
        invocations("bishops line P --json | jq -r '.moves[]' > f; bishops verify P - < f"),
        [
            vec!["bishops", "line", "P", "--json"],
            vec!["bishops", "verify", "P", "-"]
        ]
    );
    assert_eq!(
        normal("solved in 0.010 s, 1 KiB of 16265 MiB (2 threads)", "/x"),
        "solved in # s, # KiB of # MiB (# threads)"
    );
    let lines = |s: &str| s.lines().map(str::to_owned).collect::<Vec<String>>();
    assert!(matches(&lines("a\n...\nd"), &lines("a\nb\nc\nd")));
    assert!(!matches(&lines("a\n...\nd"), &lines("a\nb\nc")));
}
