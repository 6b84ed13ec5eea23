//! The `bishops` command line: one small module per command over the
//! library's [`Tablebase`] and [pipeline](crate::pipeline).
//!
//! | module | commands |
//! |---|---|
//! | `args` | the grammar: options, subcommands and their arguments |
//! | `output` | stdout, JSON documents, `-` for missing numbers, progress bars |
//! | `query` | `query`, `line` |
//! | `verify` | `verify` |
//! | `play` | `play` |
//! | `solve` | `solve`, `bench` |
//! | `export` | `export` |
//! | `reports` | `variants`, `stats` |
//! | `check` | `check` |
//!
//! Every command writes its answer to the writer it is given (stdout in the
//! binary), as text or as one JSON document, and its progress and notes to
//! stderr, so that `--json` output is never polluted.

use std::io::{BufRead, Write};

use clap::CommandFactory;
use std::path::PathBuf;

mod args;
mod check;
#[cfg(feature = "mpi")]
mod cluster;
mod compact;
mod export;
mod output;
mod parquet;
mod play;
mod query;
mod reports;
mod solve;
mod verify;

pub use args::*;
pub use output::{Stdout, note_stdout, stdout};
pub use solve::BENCH_VARIANTS;

use crate::error::{Error, Result};
use crate::tablebase::Tablebase;
use crate::variant::Variant;

/// Runs a parsed command line, reading commands or moves from `input` (for
/// `play` and `verify -`) and writing answers to `out`.
///
/// # Errors
///
/// Whatever the command ran into; [`Error::exit_code`] gives the exit status.
pub fn run(cli: Cli, input: &mut dyn BufRead, out: &mut dyn Write) -> Result<()> {
    // These two describe the command line itself: no database is involved.
    match &cli.command {
        Command::Completions(args) => {
            clap_complete::generate(args.shell, &mut Cli::command(), "bishops", out);
            return Ok(());
        }
        Command::Man(args) => return man_page(args.command.as_deref(), out),
        _ => {}
    }
    let db = cli.db.as_path();
    check_threads(cli.threads)?;
    add_user_variants(&cli.variant_files, &cli.variant_dirs)?;
    // What a fresh process needs to find the same variants (`bench`).
    let variant_args: Vec<std::ffi::OsString> = (cli.variant_files.iter().map(|f| ("--variant-file", f)))
        .chain(cli.variant_dirs.iter().map(|d| ("--variants", d)))
        .flat_map(|(flag, path)| [flag.into(), path.into()])
        .collect();
    crate::storage::check_dir(db)?;
    let tablebase = || Tablebase::new(db).with_notes(|note| crate::text::say!("bishops: {note}"));
    match cli.command {
        Command::Solve(args) => {
            thread_pool(cli.threads)?;
            #[cfg(feature = "mpi")]
            if cluster::launched() {
                return cluster::solve(db, args, out);
            }
            solve::solve(db, args, out)
        }
        Command::Bench(args) => solve::bench(args, cli.threads, &variant_args, out),
        Command::Query(args) => query::query(&tablebase(), args, out),
        Command::Line(args) => query::line(&tablebase(), args, out),
        Command::Verify(args) => verify::verify(&tablebase(), args, input, out),
        Command::Play(args) => play::play(&tablebase(), args, input, out),
        Command::Export(args) => export::export(db, args, out),
        Command::Variants(args) => reports::variants(db, args.json, out),
        Command::Stats(args) => reports::stats(db, args, out),
        Command::Check(args) => {
            thread_pool(cli.threads)?;
            check::check(db, args, out)
        }
        Command::Compact(args) => {
            thread_pool(cli.threads)?;
            compact::compact(db, args, out)
        }
        Command::Serve(args) => {
            let mut options = crate::server::ServeOptions::default();
            options.on_demand.max_entries = args.on_demand_entries;
            options.on_demand.standard = Some(args.on_demand_standard);
            options.allowed_hosts = args.allow_host;
            options.cache_bytes = cache_bytes(args.cache_mib)?;
            options.hold = args
                .hold
                .iter()
                .map(|name| Variant::named(name))
                .collect::<Result<_>>()?;
            crate::server::run(db, (args.bind, args.port).into(), args.open, options)
        }
        // Answered above, before the database directory was looked at.
        Command::Completions(_) | Command::Man(_) => Ok(()),
    }
}

/// The bytes of `serve --cache-mib MIB`, refused when they are more than
/// the memory available: a cache that grew past it would take the
/// machine's memory from everything else.
fn cache_bytes(mib: u64) -> Result<usize> {
    let bytes = mib << 20;
    if let Some(available) = crate::system::available_memory()
        && bytes > available
    {
        return Err(Error::Usage(format!(
            "--cache-mib {mib} is more than the {} MiB of memory available",
            available >> 20
        )));
    }
    usize::try_from(bytes).map_err(|_| Error::Usage(format!("--cache-mib {mib} does not fit this machine's addresses")))
}

/// Reads the variant files of `--variant-file` and `--variants` and adds
/// them to the named variants, before any command looks a name up.
fn add_user_variants(files: &[PathBuf], dirs: &[PathBuf]) -> Result<()> {
    if files.is_empty() && dirs.is_empty() {
        return Ok(());
    }
    let mut variants = Vec::new();
    for dir in dirs {
        variants.extend(crate::variant::Variant::from_dir(dir)?);
    }
    for file in files {
        variants.push(crate::variant::Variant::from_file(file)?);
    }
    crate::variant::Variant::add_user(variants)
}

/// Writes the manual page of `bishops`, or of one of its commands.
fn man_page(command: Option<&str>, out: &mut dyn Write) -> Result<()> {
    let mut cli = Cli::command();
    cli.build();
    let (page, title) = match command {
        None => (cli, "bishops".to_owned()),
        Some(name) => {
            let known: Vec<String> = cli.get_subcommands().map(|c| c.get_name().to_owned()).collect();
            let sub = cli
                .find_subcommand(name)
                .ok_or_else(|| {
                    Error::Usage(format!(
                        "no command `{}`: the commands are {}",
                        crate::text::clip(name, 20),
                        known.join(", ")
                    ))
                })?
                .clone();
            // The page of `bishops solve` is titled `bishops-solve`.
            let title = format!("bishops-{}", sub.get_name());
            (sub, title)
        }
    };
    clap_mangen::Man::new(page)
        .title(title)
        .render(out)
        .map_err(|e| Error::Io(PathBuf::from("stdout"), e))
}

/// The most threads `--threads` accepts: four per core, at most 1024. More
/// would only pile up threads that wait for a core.
pub fn max_threads() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.saturating_mul(4).min(1024)
}

/// Refuses a thread count of 0 or above [`max_threads`].
fn check_threads(threads: Option<usize>) -> Result<()> {
    match threads {
        Some(0) => Err(Error::Usage("--threads must be at least 1".into())),
        Some(n) if n > max_threads() => Err(Error::Usage(format!(
            "--threads {n} is more than this machine can use: at most {} (4 per core)",
            max_threads()
        ))),
        _ => Ok(()),
    }
}

/// The environment variables the command line reads, with the option each
/// stands in for and what it should hold.
const ENVIRONMENT: [(&str, &str, &str); 2] = [
    ("BISHOPS_DB", "db", "a directory"),
    ("BISHOPS_THREADS", "threads", "a number of threads"),
];

/// Parses the process's command line as clap's [`Parser::parse`](clap::Parser::parse) does, but
/// with an option given on the command line always overriding its
/// environment variable, even one that is not what it should be, and with
/// a bad variable that is used refused in one line naming it (clap would
/// blame the option instead).
///
/// Help, version and mistakes on the command line are clap's to print: it
/// does, and exits, as [`Parser::parse`](clap::Parser::parse) does. When clap finds a mistake and a
/// variable is bad too, the variable is what is reported.
///
/// # Errors
///
/// [`Error::Usage`] naming the variable.
pub fn parse() -> Result<Cli> {
    parse_from(std::env::args_os().collect(), |name| std::env::var_os(name))
}

/// [`parse`] of `args`, with `read` for the environment.
fn parse_from(args: Vec<std::ffi::OsString>, read: impl Fn(&str) -> Option<std::ffi::OsString>) -> Result<Cli> {
    use clap::{CommandFactory, FromArgMatches};
    // Without the variables: clap reads one even where the option is given
    // after the subcommand, and fails on a bad one. They are read below.
    let mut command = Cli::command();
    for (_, id, _) in ENVIRONMENT {
        command = command.mut_arg(id, |arg| arg.env(None::<&'static str>));
    }
    let matches = match command.try_get_matches_from(&args) {
        Ok(matches) => matches,
        Err(e) if e.use_stderr() => {
            environment(None, &read)?;
            e.exit()
        }
        // Help and version, from the grammar that names the variables.
        Err(_) => match Cli::command().try_get_matches_from(&args) {
            Ok(matches) => matches,
            Err(shown) => show(&shown)?,
        },
    };
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let values = environment(Some(&matches), &read)?;
    cli.db = values.db.unwrap_or(cli.db);
    cli.threads = values.threads.or(cli.threads);
    Ok(cli)
}

/// Writes the help or version text `shown` as any answer is written, and
/// ends the process as clap would: a closed or full stdout is an error, a
/// reader that stopped reading (`| head`) is not.
///
/// # Errors
///
/// What the write ran into.
fn show(shown: &clap::Error) -> Result<clap::ArgMatches> {
    use std::io::IsTerminal;
    let styled = shown.render();
    let text = if std::io::stdout().is_terminal() {
        styled.ansi().to_string()
    } else {
        styled.to_string()
    };
    let mut out = output::stdout();
    let written = output::write_text(&mut out, &text).and_then(|()| out.flush().map_err(output::stdout_error));
    match written {
        Err(Error::Io(_, e)) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::Io("stdout".into(), e)),
        _ => std::process::exit(shown.exit_code()),
    }
}

/// The values of the environment variables that apply.
#[derive(Debug, Default, PartialEq)]
struct Environment {
    db: Option<PathBuf>,
    threads: Option<usize>,
}

/// Reads the environment variables (through `read`) whose options
/// `matches` did not take from the command line (every one without
/// `matches`), refusing one that is not what it should be. A variable set
/// but empty (or only spaces) counts as unset, for every variable alike, as
/// a shell's `VAR=` usually means "no value".
fn environment(
    matches: Option<&clap::ArgMatches>,
    read: &impl Fn(&str) -> Option<std::ffi::OsString>,
) -> Result<Environment> {
    let mut values = Environment::default();
    for (name, id, what) in ENVIRONMENT {
        if matches.is_some_and(|m| m.value_source(id) == Some(clap::parser::ValueSource::CommandLine)) {
            continue;
        }
        let Some(value) = read(name) else { continue };
        let text = value.to_string_lossy();
        if text.trim().is_empty() {
            continue;
        }
        if id == "threads" {
            values.threads = Some(text.trim().parse().map_err(|_| {
                Error::Usage(format!(
                    "environment variable {name} is `{}`, not {what}",
                    crate::text::clip(&text, 20)
                ))
            })?);
        } else {
            values.db = Some(PathBuf::from(value));
        }
    }
    Ok(values)
}

/// Sizes the global thread pool for a command that searches.
fn thread_pool(threads: Option<usize>) -> Result<()> {
    if let Some(threads) = threads {
        // Fails only when the pool was already built, as in tests running
        // commands in one process; the first setting then stands.
        let _ = rayon::ThreadPoolBuilder::new().num_threads(threads).build_global();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    /// [`parse_from`] of `args` with `env` as the environment.
    fn parse_with(args: &[&str], env: &[(&str, &str)]) -> Result<Cli> {
        let read = |name: &str| env.iter().find(|(n, _)| *n == name).map(|(_, v)| OsString::from(v));
        parse_from(args.iter().map(OsString::from).collect(), read)
    }

    #[test]
    fn an_option_on_the_command_line_overrides_its_variable_wherever_it_is() {
        let bad = [("BISHOPS_THREADS", "abc"), ("BISHOPS_DB", "")];
        for args in [
            &["bishops", "--threads", "1", "--db", "d", "solve", "5x4"][..],
            &["bishops", "solve", "5x4", "--threads", "1", "--db", "d"],
        ] {
            let cli = parse_with(args, &bad).unwrap();
            assert_eq!((cli.threads, cli.db), (Some(1), PathBuf::from("d")), "{args:?}");
        }
        let cli = parse_with(
            &["bishops", "variants"],
            &[("BISHOPS_THREADS", " 3 "), ("BISHOPS_DB", "e")],
        )
        .unwrap();
        assert_eq!((cli.threads, cli.db), (Some(3), PathBuf::from("e")));
        let cli = parse_with(&["bishops", "variants"], &[]).unwrap();
        assert_eq!((cli.threads, cli.db), (None, PathBuf::from("db")));
    }

    #[test]
    fn an_empty_variable_counts_as_unset_for_every_variable() {
        for value in ["", " "] {
            let cli = parse_with(
                &["bishops", "query", "P"],
                &[("BISHOPS_THREADS", value), ("BISHOPS_DB", value)],
            )
            .unwrap();
            assert_eq!((cli.threads, cli.db), (None, PathBuf::from("db")), "{value:?}");
        }
    }

    #[test]
    fn a_bad_variable_that_is_used_is_refused_naming_it() {
        for (env, args) in [
            (("BISHOPS_THREADS", "abc"), &["bishops", "--db", "d", "variants"][..]),
            (("BISHOPS_THREADS", "-1"), &["bishops", "variants"]),
        ] {
            let e = parse_with(args, &[env]).unwrap_err().to_string();
            assert!(e.starts_with(&format!("environment variable {}", env.0)), "{e}");
            assert!(!e.contains("--"), "{e}");
        }
    }
}
