//! The README and `docs/` say what the program does, so they are tested
//! like code:
//!
//! - every transcript (a `$ bishops …` line in a ```` ```text ```` block,
//!   followed by its output) is run, in file order, in a fresh database
//!   directory per file, and its output compared with what the page shows:
//!   timings, sizes, thread counts and the database path may differ, and a
//!   line `...` or `…` stands for any number of lines. Transcripts of long
//!   work (boards beyond 9x6, `bench`, `serve`) and of tools that are not
//!   installed are not run;
//! - every `bishops` command line in the pages, run or not, parses;
//! - every position string in the pages parses, unless it is shown being
//!   refused;
//! - every `bishops COMMAND` and every `--flag` the pages name exists in the
//!   grammar the program parses (clap's, through `CommandFactory`);
//! - every error `docs/robustness.md` quotes is made by the command beside
//!   it, verbatim, one line, with the exit status the page gives;
//! - `docs/architecture.md` names every file of `src/` and `tests/`.

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
    const LONG: [&str; 6] = ["9x8", "11x8", "11x10", "12x10", " bench", " serve"];
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

/// Every file under `dir` (a directory of the crate), as paths relative to
/// the crate's root, sorted.
fn files_under(dir: &str) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    let mut stack = vec![root.join(dir)];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path.strip_prefix(root).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

/// Whether `page` names the file `path` (relative to the crate's root) as
/// `docs/architecture.md` does: a test file by its whole path (`tests/cli.rs`);
/// a file of `src/` by its path below `src/` (`solver/kernel.rs`), or by its
/// name in the table row of its directory (`kernel.rs` in the row of
/// `solver/`), or by its name alone when it sits in `src/` itself.
fn names_file(page: &str, path: &str) -> bool {
    let quoted = |s: &str| page.contains(&format!("`{s}`"));
    if path.starts_with("tests/") {
        return quoted(path);
    }
    let below = path.strip_prefix("src/").unwrap();
    if quoted(below) {
        return true;
    }
    match below.split_once('/') {
        None => false,
        Some((dir, rest)) => page
            .lines()
            .any(|line| line.starts_with(&format!("| `{dir}/` |")) && line.contains(&format!("`{rest}`"))),
    }
}

#[test]
fn the_architecture_page_names_every_file_of_src_and_tests() {
    let page = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md")).unwrap();
    let files: Vec<String> = files_under("src").into_iter().chain(files_under("tests")).collect();
    assert!(files.len() > 80, "only {} files found", files.len());
    let missing: Vec<&String> = files.iter().filter(|f| !names_file(&page, f)).collect();
    assert!(missing.is_empty(), "docs/architecture.md does not name {missing:?}");
    // The rule itself tells a named file from one that is not.
    assert!(names_file(
        "| `solver/` | `kernel.rs`, the moves |",
        "src/solver/kernel.rs"
    ));
    assert!(!names_file("| `storage/` | `kernel.rs` |", "src/solver/kernel.rs"));
    assert!(!names_file("`cli.rs`", "tests/cli.rs"));
}

/// The spans of inline code of a page's prose (outside fences), and the
/// lines of its fences, each with its line number.
fn code_of(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for (n, line) in text.lines().enumerate() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            out.push((n + 1, line.to_owned()));
            continue;
        }
        // Spans of one or two backticks, as Markdown reads them.
        let mut rest = line;
        while let Some(start) = rest.find('`') {
            let ticks = if rest[start..].starts_with("``") { "``" } else { "`" };
            let after = &rest[start + ticks.len()..];
            let Some(end) = after.find(ticks) else { break };
            out.push((n + 1, after[..end].trim().to_owned()));
            rest = &after[end + ticks.len()..];
        }
    }
    out
}

/// The flags of other programs that the pages name alone in a span of
/// code, beside `bishops`'s own: Open MPI's `mpirun` (`--mca pml ob1`,
/// `--bind-to none`) and the `partition` example's `--compare`. Flags in a
/// command line of another program (`cargo build --release`) are not read.
const OTHER_PROGRAMS_FLAGS: [&str; 3] = ["--mca", "--bind-to", "--compare"];

/// Every subcommand of `bishops` and every long option of it or of any of
/// its subcommands, from the grammar the program parses.
fn grammar() -> (Vec<String>, Vec<String>) {
    use clap::CommandFactory;
    let command = bishops::cli::Cli::command();
    let mut flags = vec!["--help".to_owned(), "--version".to_owned()];
    let mut add = |c: &clap::Command| {
        flags.extend(c.get_arguments().filter_map(|a| a.get_long()).map(|l| format!("--{l}")));
    };
    add(&command);
    let mut commands = Vec::new();
    for sub in command.get_subcommands() {
        commands.push(sub.get_name().to_owned());
        add(sub);
    }
    (commands, flags)
}

#[test]
fn every_command_and_flag_the_pages_name_exists() {
    let (commands, flags) = grammar();
    assert!(commands.iter().any(|c| c == "solve") && flags.iter().any(|f| f == "--max-memory"));
    for other in OTHER_PROGRAMS_FLAGS {
        assert!(
            !flags.iter().any(|f| f == other),
            "{other} is bishops's own now: take it off the list"
        );
    }
    let mut failures = Vec::new();
    let (mut commands_seen, mut flags_seen) = (0, 0);
    for page in pages() {
        let name = page.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&page).unwrap();
        for (n, code) in code_of(&text) {
            let mut checked: Vec<String> = Vec::new();
            for invocation in bishops_invocations(&code) {
                let mut words = invocation.iter().map(String::as_str);
                let command = loop {
                    match words.next() {
                        Some("--db" | "--threads") => {
                            words.next();
                        }
                        Some(w) if w.starts_with('-') => {}
                        other => break other,
                    }
                };
                if let Some(command) = command.filter(|c| !c.is_empty() && c.chars().all(|c| c.is_ascii_lowercase())) {
                    commands_seen += 1;
                    if !commands.iter().any(|c| c == command) {
                        failures.push(format!("{name}:{n}: no command `bishops {command}` (in `{code}`)"));
                    }
                }
                checked.extend(invocation);
            }
            // Flags of a `bishops` command line, or a span of flags alone.
            if checked.is_empty() && code.starts_with("--") {
                checked = shell_words(&code);
            }
            for word in checked {
                let Some(flag) = word.split('=').next().unwrap().strip_prefix("--") else {
                    continue;
                };
                if !flag.starts_with(|c: char| c.is_ascii_lowercase()) {
                    continue;
                }
                let flag = format!("--{}", flag.trim_end_matches(|c: char| !c.is_ascii_alphanumeric()));
                if OTHER_PROGRAMS_FLAGS.contains(&flag.as_str()) {
                    continue;
                }
                flags_seen += 1;
                if !flags.contains(&flag) {
                    failures.push(format!("{name}:{n}: no flag `{flag}` (in `{code}`)"));
                }
            }
        }
    }
    assert!(
        commands_seen >= 50 && flags_seen >= 50,
        "{commands_seen} commands, {flags_seen} flags"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The arguments of each `bishops` command line in a piece of code: after
/// `bishops` at the start of a command (after `$ `, a path, a launcher
/// such as `mpirun -np N` or `nohup`, or a variable's setting), up to a
/// pipe, a `;`, a `&&` or a redirection. `bishops` inside prose (`black
/// bishops on`) is not a command.
fn bishops_invocations(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for part in code.split(['|', ';', '&', '(', ')', '<', '>']) {
        let words = shell_words(part);
        let Some(at) = words.iter().position(|w| w == "bishops" || w.ends_with("/bishops")) else {
            continue;
        };
        let launcher = |w: &String| {
            w == "$"
                || w.starts_with('-')
                || w.contains('=')
                || w.contains('/')
                || w.chars().all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
                || ["nohup", "time", "mpirun", "srun", "exec"].contains(&w.as_str())
        };
        if words[..at].iter().all(launcher) {
            out.push(words[at + 1..].to_vec());
        }
    }
    out
}

/// The rows of the error table of `docs/robustness.md`: the message as
/// quoted, its exit status, and the shell command that makes it.
fn error_rows() -> Vec<(String, i32, String)> {
    let page = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/robustness.md")).unwrap();
    let mut rows = Vec::new();
    let mut inside = false;
    for line in page.lines() {
        if line.starts_with("| the line says | exit | what to run | made by |") {
            inside = true;
            continue;
        }
        if !inside || line.starts_with("|---") {
            continue;
        }
        if !line.starts_with("| ") {
            break;
        }
        // Cells are split at `|` not escaped as `\|`.
        let cells: Vec<String> = line
            .replace("\\|", "\u{0}")
            .split('|')
            .map(|c| c.trim().replace('\u{0}', "|"))
            .collect();
        let unquote = |c: &str| -> String {
            let c = c.trim();
            let ticks = if c.starts_with("``") { "``" } else { "`" };
            c.strip_prefix(ticks)
                .and_then(|c| c.strip_suffix(ticks))
                .unwrap_or(c)
                .trim()
                .to_owned()
        };
        rows.push((unquote(&cells[1]), cells[2].parse().unwrap(), unquote(&cells[4])));
    }
    rows
}

/// Whether `line` is `pattern`, where a `<…>` part of the pattern stands
/// for any text.
fn matches_quote(pattern: &str, line: &str) -> bool {
    match pattern.find('<') {
        None => pattern == line,
        Some(start) => {
            let Some(end) = pattern[start..].find('>') else {
                return pattern == line;
            };
            let (head, tail) = (&pattern[..start], &pattern[start + end + 1..]);
            line.starts_with(head)
                && (head.len()..=line.len())
                    .filter(|&i| line.is_char_boundary(i))
                    .any(|i| i > head.len() && matches_quote(tail, &line[i..]))
        }
    }
}

#[test]
fn every_error_the_robustness_page_quotes_is_the_programs_verbatim() {
    assert!(matches_quote("at most <N> (4 per core)", "at most 8 (4 per core)"));
    assert!(!matches_quote("at most <N> (4 per core)", "at most 8 (2 per core)"));
    assert!(!matches_quote("a <x> b", "a  b"));
    let binary = Path::new(env!("CARGO_BIN_EXE_bishops"));
    let path = format!(
        "{}:{}",
        binary.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let root = unsafe { libc::geteuid() } == 0;
    let rows = error_rows();
    assert!(rows.len() >= 15, "only {} rows", rows.len());
    let mut failures = Vec::new();
    for (k, (quote, code, command)) in rows.iter().enumerate() {
        // Root writes anywhere: a row about a directory that cannot be
        // written runs as `nobody` then, in a directory it owns.
        let as_nobody = root && command.contains("chmod");
        if as_nobody && !on_path("setpriv") {
            eprintln!("skipped as root without setpriv: {command}");
            continue;
        }
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("docs-errors-{k}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("db")).unwrap();
        let mut shell = Command::new(if as_nobody { "setpriv" } else { "sh" });
        if as_nobody {
            for d in [&dir, &dir.join("db")] {
                std::os::unix::fs::chown(d, Some(65534), Some(65534)).unwrap();
            }
            shell.args(["--reuid=65534", "--regid=65534", "--clear-groups", "sh"]);
        }
        let output = shell
            .arg("-c")
            .arg(command)
            .current_dir(&dir)
            .env("PATH", &path)
            .env("BISHOPS_DB", "db")
            .env_remove("BISHOPS_THREADS")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        let lines: Vec<&str> = stderr.lines().collect();
        let ok = lines.len() == 1
            && lines[0]
                .strip_prefix("bishops: error: ")
                .is_some_and(|line| matches_quote(quote, line))
            && output.status.code() == Some(*code)
            && output.stdout.is_empty();
        if !ok {
            failures.push(format!(
                "`{command}` exited {:?} with stderr\n{stderr}where the page quotes (exit {code})\n{quote}",
                output.status.code()
            ));
        }
        let _ = Command::new("chmod").args(["-R", "u+w"]).arg(&dir).status();
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
