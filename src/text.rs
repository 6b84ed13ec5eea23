//! Quoting what a user typed in a one-line message.
//!
//! Error messages quote the input they refuse, and input can be anything: a
//! position of two megabytes, a newline in a move, a thousand repeats of one
//! mistake, a directory named with an escape sequence. These helpers keep
//! every quote short and on one line, with nothing in it that a terminal
//! acts on, and say how long the quoted item really was when it had to be
//! cut.

use std::fmt::Write as _;
use std::path::Path;

/// Writes `line` and a newline to standard error in one write.
///
/// `eprintln!` writes a formatted line in pieces, one for each argument,
/// and the ranks of an MPI job share one stream: a rank's line written in
/// pieces can be cut by another's, and read as neither. A line of up to a
/// pipe's atomic size (4 KiB) written at once reaches the stream whole. A
/// failed write is ignored, as `eprintln!` would panic on it.
pub fn say_line(line: &str) {
    use std::io::Write as _;
    let mut bytes = Vec::with_capacity(line.len() + 1);
    bytes.extend_from_slice(line.as_bytes());
    bytes.push(b'\n');
    let _ = std::io::stderr().lock().write_all(&bytes);
}

/// `eprintln!` in one write ([`say_line`]), for this crate's messages.
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::text::say_line(&format!($($arg)*))
    };
}
pub(crate) use say;

/// At most `max` characters of `text`, control characters (a newline)
/// and those that disguise text (a bidirectional override) escaped so the
/// line stays one line and reads as it is, and when it was cut, how many
/// characters the whole item had.
///
/// ```
/// use bishops::text::clip;
///
/// assert_eq!(clip("a1-b2", 10), "a1-b2");
/// assert_eq!(clip("a1\nb2", 10), "a1\\nb2");
/// assert_eq!(clip("abcdefgh", 3), "abc… (8 characters)");
/// ```
pub fn clip(text: &str, max: usize) -> String {
    let mut shown = String::new();
    let mut count = 0usize;
    for c in text.chars() {
        count += 1;
        if count <= max {
            push_char(c, &mut shown);
        }
    }
    cut(shown, count, max)
}

/// The most characters of a path [`path`] shows: more than any path the
/// system opens (`PATH_MAX`), so only a path that cannot be a file's is cut.
pub const PATH_SHOWN: usize = 4096;

/// `path` as a message shows it: as it is when it is plain text, without
/// quotes of its own; a control character (a newline, an escape) escaped
/// as [`clip`] escapes it and a byte that is not UTF-8 as `\xNN`, so that
/// no path can end the message's line, forge another, or speak to the
/// terminal; cut past [`PATH_SHOWN`] characters.
///
/// ```
/// use std::ffi::OsStr;
/// use std::os::unix::ffi::OsStrExt;
/// use std::path::Path;
/// use bishops::text::path;
///
/// assert_eq!(path(Path::new("db/5x4.sqlite")), "db/5x4.sqlite");
/// assert_eq!(path(Path::new("my db/é")), "my db/é");
/// assert_eq!(
///     path(Path::new("x\nbishops: forged\x1b[31m")),
///     "x\\nbishops: forged\\u{1b}[31m"
/// );
/// assert_eq!(path(Path::new(OsStr::from_bytes(b"caf\xe9/db"))), "caf\\xe9/db");
/// ```
pub fn path(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut shown = String::new();
    let mut count = 0usize;
    for chunk in path.as_os_str().as_bytes().utf8_chunks() {
        for c in chunk.valid().chars() {
            count += 1;
            if count <= PATH_SHOWN {
                push_char(c, &mut shown);
            }
        }
        for b in chunk.invalid() {
            count += 1;
            if count <= PATH_SHOWN {
                let _ = write!(shown, "\\x{b:02x}");
            }
        }
    }
    cut(shown, count, PATH_SHOWN)
}

/// `text` with every control character escaped as [`clip`] escapes it, and
/// nothing cut: what makes a message one line, whatever went into it.
///
/// ```
/// assert_eq!(bishops::text::one_line("a\nb\x1b[0m"), "a\\nb\\u{1b}[0m");
/// ```
pub fn one_line(text: &str) -> String {
    clip(text, usize::MAX)
}

/// Whether `c` is escaped in a message: a control character (a newline, a
/// carriage return, an escape), or one that makes text seem other than it
/// is (a line or paragraph separator, a bidirectional override).
fn is_escaped(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Appends `c`, escaped (`\n`, `\u{1b}`) when [`is_escaped`].
fn push_char(c: char, out: &mut String) {
    if is_escaped(c) {
        out.extend(c.escape_default());
    } else {
        out.push(c);
    }
}

/// `shown`, the first `max` of `count` characters, with the count after
/// it when that is more than `max`.
fn cut(shown: String, count: usize, max: usize) -> String {
    match count {
        n if n <= max => shown,
        1 => format!("{shown}… (1 character)"),
        n => format!("{shown}… ({n} characters)"),
    }
}

/// A list of problems found in one input, at most `max` kept: a problem
/// already listed is not listed again, and those beyond `max` are only
/// counted, so that a huge input cannot make a huge error.
///
/// ```
/// use bishops::text::Problems;
///
/// let mut problems = Problems::new(2);
/// for p in ["a1 is used twice", "a1 is used twice", "e9 is off the board", "b2 is used twice"] {
///     problems.push(p.to_owned());
/// }
/// assert_eq!(problems.to_string(), "a1 is used twice; e9 is off the board; and 1 more");
/// ```
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Problems {
    kept: Vec<String>,
    max: usize,
    /// Distinct problems found beyond `max`.
    more: usize,
}

impl Problems {
    /// An empty list that keeps at most `max` problems.
    pub fn new(max: usize) -> Problems {
        Problems {
            kept: Vec::new(),
            max,
            more: 0,
        }
    }

    /// Adds a problem, unless it is listed already; past the limit it is
    /// only counted (a repeat of a dropped one counts again: the count says
    /// how many more there were, not how many kinds).
    pub fn push(&mut self, problem: String) {
        if self.kept.contains(&problem) {
            return;
        }
        if self.kept.len() < self.max {
            self.kept.push(problem);
        } else {
            self.more += 1;
        }
    }

    /// The problems kept, in the order found.
    pub fn kept(&self) -> &[String] {
        &self.kept
    }

    /// How many problems were found beyond those kept.
    pub fn more(&self) -> usize {
        self.more
    }

    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }
}

impl std::fmt::Display for Problems {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.kept.join("; "))?;
        if self.more > 0 {
            write!(f, "; and {} more", self.more)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_counts_characters_not_bytes() {
        assert_eq!(clip("ééé", 3), "ééé");
        assert_eq!(clip("éééé", 3), "ééé… (4 characters)");
        assert_eq!(clip("", 0), "");
        assert_eq!(clip("x", 0), "… (1 character)");
    }

    #[test]
    fn a_path_is_one_line_of_text_and_bounded() {
        use std::os::unix::ffi::OsStrExt;
        let odd = std::ffi::OsStr::from_bytes(b"a\r\x1b]0;title\x07\xff\xfe\xe2\x80\xae/b\xc2\x9b");
        let shown = path(Path::new(odd));
        assert_eq!(shown, "a\\r\\u{1b}]0;title\\u{7}\\xff\\xfe\\u{202e}/b\\u{9b}");
        assert!(!shown.chars().any(is_escaped), "{shown:?}");
        let long = "d/".repeat(PATH_SHOWN);
        let shown = path(Path::new(&long));
        assert!(
            shown.ends_with(&format!("… ({} characters)", 2 * PATH_SHOWN)),
            "{shown}"
        );
        assert!(shown.chars().count() < PATH_SHOWN + 30);
    }

    #[test]
    fn problems_are_bounded_and_not_repeated() {
        let mut problems = Problems::new(3);
        for i in 0..10_000 {
            problems.push(format!("problem {}", i % 5));
        }
        assert_eq!(problems.kept().len(), 3);
        assert!(problems.more() > 0);
        assert!(problems.to_string().len() < 100, "{problems}");
        let mut one = Problems::new(3);
        one.push("x".into());
        one.push("x".into());
        assert_eq!(one.to_string(), "x");
    }
}
