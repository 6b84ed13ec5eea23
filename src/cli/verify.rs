//! `verify`: judges a move sequence someone found.

use std::io::{BufRead, Read, Write};
use std::path::PathBuf;

use super::args::VerifyArgs;
use super::output::{show, shown, write_json, write_text};
use crate::error::{Error, Result};
use crate::position::Position;
use crate::tablebase::{Tablebase, Verification, split_moves};

/// `bishops verify`: each move's value, then the verdict. Moves come from
/// the arguments, or from `input` when the only one is `-`.
pub fn verify(tablebase: &Tablebase, args: VerifyArgs, input: &mut dyn BufRead, out: &mut dyn Write) -> Result<()> {
    let position: Position = args.position.parse()?;
    let text;
    let moves: Vec<&str> = match args.moves.as_slice() {
        [dash] if dash == "-" => {
            text = read_moves(input)?;
            split_moves(&text)
        }
        moves if moves.iter().any(|m| m == "-") => {
            return Err(Error::Usage(
                "`-` reads the moves from standard input and must be the only move given".into(),
            ));
        }
        moves => moves.iter().map(String::as_str).collect(),
    };
    let verdict = tablebase
        .table(&position, args.variant.as_deref())?
        .verify_written(&position, &moves)?;
    if args.json {
        return write_json(out, &verdict);
    }
    write_text(out, &verdict_text(&verdict))
}

/// The most bytes `verify -` reads: far more than any line of moves of any
/// board this program can solve.
const MAX_INPUT: u64 = 1 << 20;

/// The text of the moves on `input`, at most [`MAX_INPUT`] bytes of UTF-8.
///
/// # Errors
///
/// [`Error::Usage`] when there is more, or it is not UTF-8.
fn read_moves(input: &mut dyn BufRead) -> Result<String> {
    let mut bytes = Vec::new();
    (&mut *input)
        .take(MAX_INPUT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::Io(PathBuf::from("stdin"), e))?;
    if bytes.len() as u64 > MAX_INPUT {
        return Err(Error::Usage(format!(
            "standard input holds more than {} MiB of moves: give at most that",
            MAX_INPUT >> 20
        )));
    }
    String::from_utf8(bytes).map_err(|_| {
        Error::Usage("standard input is not UTF-8 text: give moves like a3-b2, separated by spaces or newlines".into())
    })
}

fn verdict_text(v: &Verification) -> String {
    let mut text = format!(
        "position    {}\nvariant     {}\nremoteness  {}\n\n",
        v.position,
        v.variant,
        show(v.remoteness)
    );
    let positions: Vec<String> = v.moves.iter().map(|m| m.position.to_string()).collect();
    let width = positions.iter().map(String::len).max().unwrap_or(8).max(8);
    text += &format!(
        "{:>4}  {:<7} {:<width$}  {:>10}  {:>5}  value\n",
        "#", "move", "position", "remoteness", "delta"
    );
    for (i, (m, position)) in v.moves.iter().zip(&positions).enumerate() {
        text += &format!(
            "{:>4}  {:<7} {:<width$}  {:>10}  {:>5}  {}\n",
            i + 1,
            m.mv.to_string(),
            position,
            show(m.remoteness),
            m.delta.map_or_else(
                || "-".to_owned(),
                |d| if d > 0 { format!("+{d}") } else { d.to_string() }
            ),
            m.value.name()
        );
    }
    if v.moves.is_empty() {
        text += "(no moves)\n";
    }
    let yes = |b: bool| if b { "yes" } else { "no" };
    text += &format!(
        "\nreached goal   {}\noptimal        {}\nfirst mistake  {}\nwasted         {}\n",
        yes(v.reached_goal),
        yes(v.optimal),
        v.first_mistake
            .map_or_else(|| "-".to_owned(), |n| format!("{n} ({})", v.moves[n - 1].mv)),
        shown(v.wasted)
    );
    text
}
