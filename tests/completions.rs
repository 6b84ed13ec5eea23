//! The conveniences of a command line used every day: shell completion
//! scripts (`bishops completions SHELL`) that each shell accepts, and
//! manual pages (`bishops man [COMMAND]`) that roff renders without a
//! warning and that document every command and option.
//!
//! Bash is everywhere and its test always runs; the zsh, fish and groff
//! checks need those programs, so plain `cargo test` reports them ignored
//! and `.ci/run` installs the programs and runs them.

use std::io::Write;
use std::process::{Command, Stdio};

use clap::CommandFactory;

fn bishops(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_bishops")).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "bishops {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs `program args…` with `input` on stdin; (success, stdout, stderr).
fn run(program: &str, args: &[&str], input: &str) -> (bool, String, String) {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The names of the subcommands.
fn commands() -> Vec<String> {
    bishops::cli::Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .collect()
}

#[test]
fn the_bash_script_parses_and_registers_a_completion() {
    let script = bishops(&["completions", "bash"]);
    let (ok, _, err) = run("bash", &["-n"], &script);
    assert!(ok, "bash -n: {err}");
    let (ok, out, err) = run("bash", &["-c", "source /dev/stdin; complete -p bishops"], &script);
    assert!(ok, "{err}");
    assert!(out.contains("_bishops") && out.trim_end().ends_with("bishops"), "{out}");
    for command in commands() {
        assert!(script.contains(&command), "{command} is not completed");
    }
}

#[test]
#[ignore = "needs zsh (.ci/run installs it)"]
fn the_zsh_script_parses() {
    let script = bishops(&["completions", "zsh"]);
    let (ok, _, err) = run("zsh", &["-n"], &script);
    assert!(ok, "zsh -n: {err}");
    assert!(script.starts_with("#compdef bishops"), "{}", &script[..40]);
}

#[test]
#[ignore = "needs fish (.ci/run installs it)"]
fn the_fish_script_parses() {
    let script = bishops(&["completions", "fish"]);
    let (ok, _, err) = run("fish", &["--no-execute"], &script);
    assert!(ok, "fish --no-execute: {err}");
    assert!(script.contains("complete -c bishops"));
}

#[test]
#[ignore = "needs groff (.ci/run installs it)"]
fn every_manual_page_renders_without_a_warning_and_names_its_options() {
    let cli = bishops::cli::Cli::command();
    let mut pages = vec![(None, cli.clone())];
    pages.extend(
        cli.get_subcommands()
            .map(|c| (Some(c.get_name().to_owned()), c.clone())),
    );
    for (name, command) in pages {
        let mut args = vec!["man"];
        args.extend(name.as_deref());
        let page = bishops(&args);
        let (ok, text, err) = run("groff", &["-k", "-man", "-Tutf8", "-ww"], &page);
        assert!(ok && err.is_empty(), "{name:?}: groff says {err}");
        // Bold and underline are drawn by overstriking: `x\bx`, `_\bx`.
        let text = strip_overstrikes(&text);
        let title = name.as_ref().map_or("bishops".to_owned(), |n| format!("bishops-{n}"));
        assert!(page.contains(&format!(".TH {title} 1")), "{name:?}");
        for arg in command.get_arguments().filter(|a| !a.is_hide_set()) {
            if let Some(long) = arg.get_long() {
                // roff escapes the dashes: \-\-name.
                assert!(text.contains(&format!("--{long}")), "{name:?}: --{long} missing");
            }
        }
    }
    for command in commands() {
        assert!(bishops(&["man"]).contains(&command), "the main page lacks {command}");
    }
}

/// Terminal text without overstrikes: of `c\bd`, only `d` stays.
fn strip_overstrikes(text: &str) -> String {
    let mut out: Vec<char> = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if chars.peek() == Some(&'\u{8}') {
            chars.next();
            continue;
        }
        out.push(c);
    }
    out.into_iter().collect()
}

#[test]
fn an_unknown_command_has_no_page() {
    let out = Command::new(env!("CARGO_BIN_EXE_bishops"))
        .args(["man", "nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("bishops: error: no command `nope`: the commands are solve, "),
        "{err}"
    );
}
