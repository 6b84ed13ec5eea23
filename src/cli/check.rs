//! `check`: a solved database proven (or sampled) against the rules.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use super::args::CheckArgs;
use super::output::{progress_bar, time_left, write_json, write_text};
use crate::check::{self, CheckOptions};
use crate::error::{Error, Result};
use crate::variant::Variant;

/// When stderr is not a terminal, where the progress bar is not drawn, a
/// check still running writes a line of progress to stderr this often (a log
/// of a long run); a short check writes none.
const LOG_EVERY: Duration = Duration::from_secs(60);

/// A line of progress for the log: positions checked, in all, and an
/// estimate of the time left at the rate so far once a percent is done.
fn progress_line(name: &str, done: u64, total: u64, elapsed: Duration) -> String {
    let elapsed = elapsed.as_secs_f64();
    let left = time_left(elapsed, done, total);
    format!(
        "bishops: check {name}: {done} of {total} positions ({:.2}%), {elapsed:.0} s{left}",
        100.0 * done as f64 / total.max(1) as f64
    )
}

/// `bishops check`: every position (or a seeded sample) against the rules;
/// exits 1 naming the first bad position.
pub fn check(db: &Path, args: CheckArgs, out: &mut dyn Write) -> Result<()> {
    if args.sample == Some(0) {
        return Err(Error::Usage(
            "--sample 0 checks nothing: give at least 1, or leave --sample out to check every position".into(),
        ));
    }
    let variant = Variant::named(&args.variant)?;
    let seed = args.seed.unwrap_or_else(crate::index::clock_seed);
    let options = CheckOptions {
        sample: args.sample,
        seed,
    };
    let bar = progress_bar(Some(1));
    bar.set_message(format!("check {}", variant.name()));
    bar.enable_steady_tick(Duration::from_millis(200));
    let log = !std::io::stderr().is_terminal();
    let started = Instant::now();
    let mut logged = started;
    let report = check::check(db, &variant, options, &mut |done, total| {
        bar.set_length(total);
        bar.set_position(done);
        if log && logged.elapsed() >= LOG_EVERY && done < total {
            logged = Instant::now();
            crate::text::say!("{}", progress_line(variant.name(), done, total, started.elapsed()));
        }
    });
    bar.finish_and_clear();
    let report = report?;
    if args.json {
        return write_json(out, &report);
    }
    let mut text = format!(
        "{}: {} of {} class positions checked against the rules in {:.2} s{}: ",
        report.variant,
        report.checked,
        report.legal,
        report.seconds,
        report.seed.map_or(String::new(), |s| format!(" (sample, seed {s})")),
    );
    text += if report.proof {
        "every rule holds, so the table is the true remoteness of every position\n"
    } else {
        "every rule holds on the sample\n"
    };
    for c in &report.classes {
        text += &format!("  class {}: {} of {} positions", c.class_name, c.checked, c.legal);
        if !c.histogram.is_empty() {
            text += &format!(
                ", remoteness 0..{}, counts equal the stored histogram",
                c.histogram.len() - 1
            );
        }
        text += "\n";
    }
    write_text(out, &text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines_estimate_the_time_left_from_a_percent_on() {
        let line = progress_line("11x10", 50, 200, Duration::from_secs(120));
        assert_eq!(
            line,
            "bishops: check 11x10: 50 of 200 positions (25.00%), 120 s, about 6 min left"
        );
        let early = progress_line("11x10", 1, 1000, Duration::from_secs(60));
        assert_eq!(early, "bishops: check 11x10: 1 of 1000 positions (0.10%), 60 s");
    }
}
