//! Quoting what a user typed in a one-line message.
//!
//! Error messages quote the input they refuse, and input can be anything: a
//! position of two megabytes, a newline in a move, a thousand repeats of one
//! mistake. These helpers keep every quote short and on one line, and say
//! how long the quoted item really was when it had to be cut.

/// At most `max` characters of `text`, control characters (a newline)
/// escaped so the line stays one line, and when it was cut, how many
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
            if c.is_control() {
                shown.extend(c.escape_default());
            } else {
                shown.push(c);
            }
        }
    }
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
