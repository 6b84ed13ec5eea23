//! Variants: a board and a start position, named in `variants/` or standard.

use std::io::Read;
use std::path::Path;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::bitboard::Word;
use crate::board::{Board, Class, Geometry};
use crate::error::{Error, Result};
use crate::index::{DenseIndex, combine};
use crate::position::{Position, PositionError, Refusals};
use crate::rules::Part;
use crate::square::Square;
use crate::tight::TightIndex;

/// Runs `$body` with `$w` the [`Width`] of `$variant`'s classes: compiled
/// once for `u64` and once for `u128`, the one run chosen by
/// [`Variant::is_wide`], once a call.
macro_rules! by_width {
    ($variant:expr, $w:ident => $body:expr) => {
        if $variant.is_wide() {
            type $w = u128;
            $body
        } else {
            type $w = u64;
            $body
        }
    };
}
pub(crate) use by_width;

/// The named variants, one JSON file each in `variants/`, built into the
/// binary so that it runs from anywhere.
const VARIANT_FILES: &[(&str, &str)] = &[
    ("5x4.json", include_str!("../variants/5x4.json")),
    ("7x4.json", include_str!("../variants/7x4.json")),
    ("7x6.json", include_str!("../variants/7x6.json")),
    ("5x4-full.json", include_str!("../variants/5x4-full.json")),
    ("9x6.json", include_str!("../variants/9x6.json")),
    ("9x8.json", include_str!("../variants/9x8.json")),
    ("11x8.json", include_str!("../variants/11x8.json")),
    ("11x10.json", include_str!("../variants/11x10.json")),
    ("12x10.json", include_str!("../variants/12x10.json")),
    ("17x8.json", include_str!("../variants/17x8.json")),
];

/// A file of `variants/`, or one of the user's own.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VariantFile {
    name: String,
    description: String,
    start: String,
    /// Squares cut out of the board, by name.
    #[serde(default)]
    holes: Vec<String>,
    #[serde(default)]
    known: Option<Known>,
}

/// The most bytes a variant file may have: the largest start names a few
/// hundred squares.
const MAX_FILE_BYTES: u64 = 64 * 1024;

/// The longest variant name: it names a database file.
const MAX_NAME_LEN: usize = 64;

/// The variants of the user's files, added once per process by
/// [`Variant::add_user`].
static USER: OnceLock<Vec<Variant>> = OnceLock::new();

/// Answers known for a variant before solving it, which a solve is checked
/// against: from the puzzle's published solvers, or from an earlier solve
/// cross-checked by an independent method (the file says which).
#[derive(Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Known {
    /// Where the values come from.
    pub source: String,
    /// Legal positions of each class, in class order.
    pub legal: Vec<u64>,
    /// Remoteness of the start.
    pub start_remoteness: u16,
    /// Largest remoteness of any position of the whole variant.
    pub max_remoteness: u16,
}

/// One colour class that a variant uses: its geometry, start, goal and
/// hash, with its cells in words `W` (`u64` up to 64 squares, `u128` up
/// to 128: see [`Width`]).
#[derive(Clone, Debug)]
pub struct ClassSpec<W: Word = u64> {
    /// Which class.
    pub class: Class,
    /// The class's cells and rays.
    pub geometry: Geometry<W>,
    /// The start's bishops in this class.
    pub start: Part<W>,
    /// The goal's bishops in this class: the start with colours swapped.
    pub goal: Part<W>,
    /// The public hash of this class's placements.
    pub index: DenseIndex<W>,
}

/// The word a variant's classes keep their cells in, chosen once per
/// variant: `u64` when every class has at most 64 squares, else `u128`.
/// Code that works on a variant's classes is generic over it, compiled
/// for both, and picks one by [`Variant::is_wide`].
pub trait Width: Word {
    /// The classes of `variant`, when they are kept in this word.
    fn specs(variant: &Variant) -> Option<&[ClassSpec<Self>]>;
}

impl Width for u64 {
    fn specs(variant: &Variant) -> Option<&[ClassSpec<u64>]> {
        match &variant.classes {
            Specs::Narrow(specs) => Some(specs),
            Specs::Wide(_) => None,
        }
    }
}

impl Width for u128 {
    fn specs(variant: &Variant) -> Option<&[ClassSpec<u128>]> {
        match &variant.classes {
            Specs::Wide(specs) => Some(specs),
            Specs::Narrow(_) => None,
        }
    }
}

/// A variant's classes, in the word its widest class needs.
#[derive(Clone, Debug)]
enum Specs {
    Narrow(Vec<ClassSpec<u64>>),
    Wide(Vec<ClassSpec<u128>>),
}

impl<W: Word> ClassSpec<W> {
    /// The class's spec from the part of `start` on it.
    fn new(start: &Position, class: Class) -> ClassSpec<W> {
        let geometry = Geometry::in_words(start.board(), class);
        let part = start.part(&geometry);
        let (cells, white, black) = (geometry.len() as u32, part.white.count(), part.black.count());
        ClassSpec {
            class,
            geometry,
            start: part,
            goal: part.swapped(),
            index: DenseIndex::in_words(cells, white, black),
        }
    }

    /// How many (white, black) bishops the class holds.
    pub fn counts(&self) -> (u32, u32) {
        (self.start.white.count(), self.start.black.count())
    }

    /// The tight index of the class's legal placements
    /// ([`TightIndex::new`] of its geometry and counts).
    ///
    /// ```
    /// let variant = bishops::Variant::named("5x4").unwrap();
    /// let spec = &variant.classes()[0];
    /// assert_eq!(spec.tight_index().len(), bishops::TightIndex::new(&spec.geometry, 2, 2).len());
    /// ```
    pub fn tight_index(&self) -> TightIndex<W> {
        let (white, black) = self.counts();
        TightIndex::new(&self.geometry, white, black)
    }
}

/// A board plus a start position; the goal is the start with the colours
/// swapped. Only the colour classes holding bishops take part.
///
/// # Examples
///
/// ```
/// use bishops::Variant;
///
/// let v = Variant::named("5x4-full").unwrap();
/// assert_eq!(v.classes().len(), 2);
/// assert_eq!(v.goal().to_string(), "5_4_e1-e2-e3-e4_a1-a2-a3-a4");
///
/// let pos = "5_4_a1-b2_e1-e3".parse().unwrap();
/// assert_eq!(Variant::for_position(&pos, None).unwrap().name(), "5x4");
/// ```
#[derive(Clone, Debug)]
pub struct Variant {
    name: String,
    description: String,
    start: Position,
    classes: Specs,
    known: Option<Known>,
    /// Whether it comes from a file of `variants/`.
    named: bool,
}

impl Variant {
    fn from_start(name: String, description: String, start: Position) -> Result<Variant> {
        if let Some((attacker, victim)) = start.attack().or_else(|| start.swapped().attack()) {
            return Err(Error::Variant(format!(
                "variant {name}: the start or goal is illegal ({attacker} attacks {victim})"
            )));
        }
        let used: Vec<Class> = Class::ALL
            .into_iter()
            .filter(|&class| start.counts(class) != (0, 0))
            .collect();
        if used.is_empty() {
            return Err(Error::Variant(format!("variant {name}: the start has no bishops")));
        }
        for &class in &used {
            let (cells, (white, black)) = (start.board().class_squares(class), start.counts(class));
            // A start of the user's may put down more bishops than a
            // 128-bit hash can number the placements of.
            if DenseIndex::size(cells as u32, white as u32, black as u32).is_none() {
                return Err(Error::Variant(format!(
                    "variant {name}: {white} + {black} bishops on the {cells} squares of the {} class have more placements than a 128-bit hash numbers",
                    class.name()
                )));
            }
            // Bishops never change colour or class, so the goal (colours
            // swapped) is a position of the same puzzle only with as many
            // of each.
            if white != black {
                return Err(Error::Variant(format!(
                    "variant {name}: the start has {white} white and {black} black bishops on the {} squares; a swap needs as many of each",
                    class.name()
                )));
            }
        }
        // Both classes' hashes combine into one, in 128 bits too.
        let mut sizes = used.iter().map(|&c| {
            let (white, black) = start.counts(c);
            DenseIndex::size(start.board().class_squares(c) as u32, white as u32, black as u32)
        });
        if sizes
            .try_fold(1u128, |product, size| product.checked_mul(size?))
            .is_none()
        {
            return Err(Error::Variant(format!(
                "variant {name}: its classes together have more placements than a 128-bit hash numbers"
            )));
        }
        let wide = used.iter().any(|&c| start.board().class_squares(c) > 64);
        let classes = if wide {
            Specs::Wide(used.iter().map(|&c| ClassSpec::new(&start, c)).collect())
        } else {
            Specs::Narrow(used.iter().map(|&c| ClassSpec::new(&start, c)).collect())
        };
        Ok(Variant {
            name,
            description,
            start,
            classes,
            known: None,
            named: false,
        })
    }

    /// The named variants of `variants/`, in file order: read from the
    /// files compiled in the first time they are asked for, then kept.
    ///
    /// # Errors
    ///
    /// When a built-in file is malformed (a test makes sure none is).
    pub fn builtin() -> Result<&'static [Variant]> {
        static BUILTIN: OnceLock<std::result::Result<Vec<Variant>, String>> = OnceLock::new();
        BUILTIN
            .get_or_init(|| Variant::read_builtin().map_err(|e| e.to_string()))
            .as_deref()
            .map_err(|e| Error::Variant(e.clone()))
    }

    fn read_builtin() -> Result<Vec<Variant>> {
        VARIANT_FILES
            .iter()
            .map(|(file, text)| Variant::from_text(&format!("variants/{file}"), text))
            .collect()
    }

    /// The variant a file's JSON text describes; `file` names it in errors,
    /// each one line that names the field at fault.
    fn from_text(file: &str, text: &str) -> Result<Variant> {
        let bad = |e: String| Error::Variant(format!("{file}: {e}"));
        let spec: VariantFile = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
        check_name(&spec.name).map_err(|e| bad(format!("`name`: {e}")))?;
        let holes = (spec.holes.iter())
            .map(|name| name.parse::<Square>().map_err(|e| bad(format!("`holes`: {e}"))))
            .collect::<Result<Vec<Square>>>()?;
        let start = spec
            .start
            .parse::<Position>()
            .map_err(|e| bad(format!("`start`: {e}")))?;
        let board = start
            .board()
            .with_holes(&holes)
            .map_err(|e| bad(format!("`holes`: {e}")))?;
        let start = start.on(board).map_err(|e| bad(format!("`start`: {e}")))?;
        let mut variant =
            Variant::from_start(spec.name, spec.description, start).map_err(|e| bad(format!("`start`: {e}")))?;
        if let Some(known) = &spec.known
            && known.legal.len() != variant.class_count()
        {
            return Err(bad(format!("`known.legal` needs {} entries", variant.class_count())));
        }
        variant.known = spec.known;
        variant.named = true;
        Ok(variant)
    }

    /// The variant of the user's file at `path`: the JSON of `variants/`,
    /// with `holes` to cut squares out of the board if wanted.
    ///
    /// # Errors
    ///
    /// [`Error::Variant`], one line naming the file and the field at fault,
    /// when it cannot be read, is over 64 KiB or does not describe a variant.
    ///
    /// # Examples
    ///
    /// ```
    /// let dir = std::env::temp_dir().join(format!("bishops-doc-variant-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let file = dir.join("holed.json");
    /// std::fs::write(&file, r#"{"name": "holed", "description": "5x4 less c3",
    ///     "start": "5_4_a1-a3_e1-e3", "holes": ["c3"]}"#).unwrap();
    /// let variant = bishops::Variant::from_file(&file).unwrap();
    /// assert_eq!(variant.board().to_string(), "5x4 (holes c3)");
    /// std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn from_file(path: &Path) -> Result<Variant> {
        let shown = crate::text::path(path);
        let bad = |e: String| Error::Variant(format!("variant file {shown}: {e}"));
        let file = crate::files::open_regular(
            path,
            std::fs::OpenOptions::new().read(true),
            crate::files::Links::Follow,
        )
        .map_err(|e| {
            bad(match e {
                crate::files::OpenError::NotRegular(kind) => format!("it is {kind}, not a file"),
                crate::files::OpenError::Io(e) => e.to_string(),
            })
        })?;
        let mut text = String::new();
        std::io::Read::take(file, MAX_FILE_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|e| bad(e.to_string()))?;
        if text.len() as u64 > MAX_FILE_BYTES {
            return Err(bad(format!("it is over {MAX_FILE_BYTES} bytes")));
        }
        Variant::from_text(&format!("variant file {shown}"), &text)
    }

    /// The variants of every `*.json` file in `dir`, in name order.
    ///
    /// # Errors
    ///
    /// As [`Variant::from_file`], and when `dir` cannot be listed.
    pub fn from_dir(dir: &Path) -> Result<Vec<Variant>> {
        let shown = crate::text::path(dir);
        let entries = std::fs::read_dir(dir).map_err(|e| Error::Variant(format!("variant directory {shown}: {e}")))?;
        let mut files = Vec::new();
        for entry in entries {
            let path = entry
                .map_err(|e| Error::Variant(format!("variant directory {shown}: {e}")))?
                .path();
            if path.extension().is_some_and(|e| e == "json") {
                files.push(path);
            }
        }
        files.sort();
        files.iter().map(|f| Variant::from_file(f)).collect()
    }

    /// Adds the user's variants to the named ones for the rest of the
    /// process: [`Variant::named`] and [`Variant::for_position`] find them
    /// after the files of `variants/`. The command line calls it once, with
    /// the files of `--variant-file` and `--variants`.
    ///
    /// # Errors
    ///
    /// [`Error::Variant`] when a name is taken (by a built-in variant, a
    /// standard one such as `9x6-a1`, or another of `variants`), or when
    /// other user variants were added already (the same ones again are
    /// accepted).
    pub fn add_user(variants: Vec<Variant>) -> Result<()> {
        let builtin = Variant::builtin()?;
        for (k, v) in variants.iter().enumerate() {
            let taken = if builtin.iter().any(|b| b.name == v.name) {
                Some("a built-in variant")
            } else if standard_size(&v.name).is_some() {
                Some("the standard variants (`RxC-a1`, `RxC-a2`, `RxC-full`)")
            } else if variants[..k].iter().any(|u| u.name == v.name) {
                Some("another variant file")
            } else {
                None
            };
            if let Some(taken) = taken {
                return Err(Error::Variant(format!(
                    "the name {} of a variant file is taken by {taken}: give the file's variant another name",
                    v.name
                )));
            }
        }
        let same = |a: &[Variant]| {
            a.len() == variants.len()
                && a.iter()
                    .zip(&variants)
                    .all(|(a, b)| a.name == b.name && a.start == b.start)
        };
        match USER.get() {
            Some(added) if same(added) => Ok(()),
            Some(_) => Err(Error::Variant("other variants of the user's were added already".into())),
            None => USER
                .set(variants)
                .map_err(|_| Error::Variant("the user's variants were added already".into())),
        }
    }

    /// The named variants: the built-in ones, then the user's.
    fn every_named() -> Result<impl Iterator<Item = &'static Variant>> {
        Ok(Variant::builtin()?.iter().chain(USER.get().into_iter().flatten()))
    }

    /// The user's variants ([`Variant::add_user`]), in the order given.
    pub fn user() -> &'static [Variant] {
        USER.get().map_or(&[], Vec::as_slice)
    }

    /// The standard start on `board` for `classes`: white on those classes'
    /// squares of row `a`, black on those of the last row.
    ///
    /// # Errors
    ///
    /// When the board has no fewer columns than rows, so that the home rows
    /// would see each other.
    pub fn standard(board: Board, classes: &[Class]) -> Result<Variant> {
        let name = standard_name(board, classes);
        if board.cols() >= board.rows() {
            return Err(Error::Variant(format!(
                "no standard start on a {board} board: the standard family needs fewer columns than rows"
            )));
        }
        let row = |r: u8| {
            classes
                .iter()
                .flat_map(|&c| board.row_squares(r, c))
                .collect::<Vec<_>>()
        };
        let start = Position::new(board, row(0), row(board.rows() - 1)).map_err(|e| Error::Variant(e.to_string()))?;
        let description = format!(
            "standard start on the {} squares of a {board} board",
            class_words(classes)
        );
        Variant::from_start(name, description, start)
    }

    /// The variant called `name`: a file of `variants/`, or a standard one
    /// written `RxC-a1` (class of a1), `RxC-a2` (class of a2) or `RxC-full`.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownVariant`] when no variant has that name.
    pub fn named(name: &str) -> Result<Variant> {
        if let Some(v) = Variant::every_named()?.find(|v| v.name == name) {
            return Ok(v.clone());
        }
        let unknown = || Error::UnknownVariant(name.to_owned());
        let ((rows, cols), classes) = standard_size(name).ok_or_else(unknown)?;
        let board = Board::new(rows, cols).map_err(Error::Variant)?;
        Variant::standard(board, classes)
    }

    /// The variant of `position`: `name` when given; otherwise the one file
    /// whose board and per-class bishop counts match, or else the standard
    /// start for the position's board and classes. The position is checked
    /// against the variant: legal, the right counts on the right classes.
    ///
    /// # Errors
    ///
    /// A [`PositionError`] with every reason the position does not fit, or
    /// [`Error::UnknownVariant`].
    pub fn for_position(position: &Position, name: Option<&str>) -> Result<Variant> {
        let variant = match name {
            Some(name) => Variant::named(name)?,
            None => {
                let counts = |p: &Position| Class::ALL.map(|c| p.counts(c));
                let candidates: Vec<Variant> = Variant::every_named()?
                    .filter(|v| v.board().whole() == position.board().whole() && counts(&v.start) == counts(position))
                    .cloned()
                    .collect();
                match candidates.len() {
                    1 => candidates.into_iter().next().expect("one candidate"),
                    0 => {
                        let used: Vec<Class> = Class::ALL
                            .into_iter()
                            .filter(|&c| position.counts(c) != (0, 0))
                            .collect();
                        let mut err = PositionError::new(&position.to_string());
                        if used.is_empty() {
                            err.push(Refusals::COUNTS, "there are no bishops");
                            return Err(err.into());
                        }
                        Variant::standard(position.board(), &used).map_err(|e| {
                            err.push(Refusals::VARIANT, format!("{e}; name a variant with --variant"));
                            Error::from(err.clone())
                        })?
                    }
                    _ => {
                        let names: Vec<&str> = candidates.iter().map(|v| v.name()).collect();
                        return Err(Error::AmbiguousVariant(position.to_string(), names.join(", ")));
                    }
                }
            }
        };
        variant.check(position)?;
        Ok(variant)
    }

    /// Checks that `position` is a position of this variant: same board,
    /// bishops only on the variant's classes and in its numbers, none on a
    /// hole, and no bishop attacked.
    ///
    /// # Errors
    ///
    /// A [`PositionError`] naming every problem found.
    pub fn check(&self, position: &Position) -> std::result::Result<(), PositionError> {
        self.adopt(position).map(drop)
    }

    /// `position`, checked as [`Variant::check`] does, on this variant's
    /// board: a position string names only the board's size, and the
    /// variant says which squares are cut out of it.
    ///
    /// # Errors
    ///
    /// As [`Variant::check`].
    pub fn adopt(&self, position: &Position) -> std::result::Result<Position, PositionError> {
        let mut err = PositionError::new(&position.to_string());
        if position.board().whole() != self.board().whole() {
            err.push(
                Refusals::COUNTS,
                format!(
                    "the board is {}, variant {} is on {}",
                    position.board(),
                    self.name,
                    self.board()
                ),
            );
            return Err(err);
        }
        let position = position.on(self.board())?;
        for class in Class::ALL {
            let have = position.counts(class);
            let want = self.start.counts(class);
            if have == want {
                continue;
            }
            if want == (0, 0) {
                err.push(
                    Refusals::CLASS,
                    format!(
                        "bishops stand on the {} squares, which variant {} does not use",
                        class.name(),
                        self.name
                    ),
                );
            } else {
                err.push(
                    Refusals::COUNTS,
                    format!(
                        "{} white and {} black bishops on the {} squares, variant {} has {} and {}",
                        have.0,
                        have.1,
                        class.name(),
                        self.name,
                        want.0,
                        want.1
                    ),
                );
            }
        }
        if let Some((attacker, victim)) = position.attack() {
            let colour = |sq| {
                if position.white().contains(&sq) {
                    "white"
                } else {
                    "black"
                }
            };
            err.push(
                Refusals::ATTACKED,
                format!(
                    "{} bishop {victim} is attacked by {} bishop {attacker}",
                    colour(victim),
                    colour(attacker)
                ),
            );
        }
        err.or_ok(position)
    }

    /// `position` on this variant's board, without checking it again when
    /// it stands there already: for the query API, whose positions come
    /// either from [`Variant::adopt`] or from a string naming only a size.
    ///
    /// # Errors
    ///
    /// As [`Variant::check`], when `position` was not on the board yet.
    pub fn placed<'a>(
        &self,
        position: &'a Position,
    ) -> std::result::Result<std::borrow::Cow<'a, Position>, PositionError> {
        if position.board() == self.board() {
            Ok(std::borrow::Cow::Borrowed(position))
        } else {
            self.adopt(position).map(std::borrow::Cow::Owned)
        }
    }

    /// Whether the variant comes from a file (of `variants/`, or one of the
    /// user's) rather than being a standard start made up for its board.
    pub fn is_named(&self) -> bool {
        self.named
    }

    /// Answers known before solving, if the variant file gives them.
    pub fn known(&self) -> Option<&Known> {
        self.known.as_ref()
    }

    /// The variant's name, which also names its database.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the variant is, in a sentence.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The board.
    pub fn board(&self) -> Board {
        self.start.board()
    }

    /// The start position.
    pub fn start(&self) -> &Position {
        &self.start
    }

    /// The goal: the start with the colours swapped.
    pub fn goal(&self) -> Position {
        self.start.swapped()
    }

    /// The classes that take part, `Even` first, of a variant of at most
    /// 64 squares a class: code for any variant asks for
    /// [`specs`](Self::specs) in the word [`is_wide`](Self::is_wide) says.
    ///
    /// # Panics
    ///
    /// When a class has more than 64 squares ([`is_wide`](Self::is_wide)).
    #[track_caller]
    pub fn classes(&self) -> &[ClassSpec] {
        self.specs::<u64>()
    }

    /// The classes that take part, `Even` first, their cells in words `W`.
    ///
    /// # Panics
    ///
    /// When `W` is not the variant's width ([`is_wide`](Self::is_wide)
    /// says which).
    #[track_caller]
    pub fn specs<W: Width>(&self) -> &[ClassSpec<W>] {
        W::specs(self).unwrap_or_else(|| {
            panic!(
                "variant {} keeps its classes in {}-bit words, not {}",
                self.name,
                if self.is_wide() { 128 } else { 64 },
                W::BITS
            )
        })
    }

    /// The same variant with its classes kept in 128-bit words, even where
    /// 64 bits would do: to measure what the wider words cost on a board
    /// both can hold, and to check the wide code against the narrow.
    ///
    /// ```
    /// use bishops::Variant;
    ///
    /// let variant = Variant::named("9x6").unwrap();
    /// let wide = variant.widened();
    /// assert!(!variant.is_wide() && wide.is_wide());
    /// assert_eq!(wide.specs::<u128>()[0].index.len(), variant.specs::<u64>()[0].index.len());
    /// ```
    pub fn widened(&self) -> Variant {
        let start = &self.start;
        let classes = Specs::Wide(
            self.class_list()
                .into_iter()
                .map(|c| ClassSpec::new(start, c))
                .collect(),
        );
        Variant {
            classes,
            ..self.clone()
        }
    }

    /// Whether a class has more than 64 squares, so that its cells are kept
    /// in 128-bit words.
    pub fn is_wide(&self) -> bool {
        matches!(self.classes, Specs::Wide(_))
    }

    /// How many classes take part.
    pub fn class_count(&self) -> usize {
        match &self.classes {
            Specs::Narrow(s) => s.len(),
            Specs::Wide(s) => s.len(),
        }
    }

    /// The classes that take part, `Even` first.
    pub fn class_list(&self) -> Vec<Class> {
        by_width!(self, W => self.specs::<W>().iter().map(|s| s.class).collect())
    }

    /// The hash of each class part of `position`, in class order, as a
    /// table numbers it. The position must be one of this variant's.
    ///
    /// # Panics
    ///
    /// When the variant has no tables ([`tables_fit`](Self::tables_fit)
    /// says why); [`class_hashes128`](Self::class_hashes128) has every
    /// variant's.
    #[track_caller]
    pub fn class_hashes(&self, position: &Position) -> Vec<u64> {
        assert!(
            self.tables_fit().is_ok(),
            "variant {}: no table numbers its classes",
            self.name
        );
        by_width!(self, W => self
            .specs::<W>()
            .iter()
            .map(|spec| spec.index.rank(position.part(&spec.geometry)))
            .collect())
    }

    /// The hash of each class part of `position` in 128 bits, in class
    /// order: [`class_hashes`](Self::class_hashes) where that is there, and
    /// the same numbers past it. The position must be one of this variant's.
    pub fn class_hashes128(&self, position: &Position) -> Vec<u128> {
        by_width!(self, W => self
            .specs::<W>()
            .iter()
            .map(|spec| spec.index.rank128(position.part(&spec.geometry)))
            .collect())
    }

    /// The public hash of `position`: the class hashes in mixed radix.
    ///
    /// ```
    /// let variant = bishops::Variant::named("5x4-full").unwrap();
    /// let start = variant.start();
    /// let hash = variant.hash(start);
    /// assert!(hash < variant.hash_sizes().iter().product());
    /// assert_eq!(variant.position_of_hash(hash).as_ref(), Some(start));
    /// ```
    pub fn hash(&self, position: &Position) -> u128 {
        combine(&self.class_hashes128(position), &self.hash_sizes())
    }

    /// The position whose public hash is `hash` ([`hash`](Self::hash)'s
    /// inverse), legal or not; `None` when `hash` is past the last.
    pub fn position_of_hash(&self, hash: u128) -> Option<Position> {
        let sizes = self.hash_sizes();
        if hash >= sizes.iter().product() {
            return None;
        }
        let hashes = crate::index::split(hash, &sizes);
        Some(by_width!(self, W => {
            let parts: Vec<Part<W>> =
                self.specs::<W>().iter().zip(hashes).map(|(spec, h)| spec.index.unrank128(h)).collect();
            self.position(&parts)
        }))
    }

    /// R(n, w, b) of each class. Their product fits 128 bits: a variant
    /// whose does not is refused when it is made.
    pub fn hash_sizes(&self) -> Vec<u128> {
        by_width!(self, W => self.specs::<W>().iter().map(|spec| spec.index.len128()).collect())
    }

    /// Whether tables and databases can number this variant's positions:
    /// every class's R(n, w, b) below 2^63, as a class hash is a `u64` in
    /// a table and an SQLite integer in a database. Every named variant's
    /// is; a variant of the user's with more bishops on a larger board
    /// (7 + 7 a class on 15x14) can be named and hashed but not solved,
    /// and the error says so.
    ///
    /// # Errors
    ///
    /// [`Error::TooLarge`] naming the first class past that.
    pub fn tables_fit(&self) -> Result<()> {
        by_width!(self, W => {
            for spec in self.specs::<W>() {
                let size = spec.index.len128();
                if size >= 1 << 63 {
                    let (white, black) = spec.counts();
                    return Err(Error::TooLarge(format!(
                        "variant {}: the {} class has R({}, {white}, {black}) = {size} placements, and tables and databases number a class's positions in 63 bits: its positions can be named, not solved",
                        self.name,
                        spec.class.name(),
                        spec.geometry.len()
                    )));
                }
            }
            Ok(())
        })
    }

    /// The position whose class parts are `parts`, in class order.
    pub fn position<W: Width>(&self, parts: &[Part<W>]) -> Position {
        let pairs: Vec<(&Geometry<W>, Part<W>)> = self
            .specs::<W>()
            .iter()
            .map(|s| &s.geometry)
            .zip(parts.iter().copied())
            .collect();
        Position::from_parts(self.board(), &pairs)
    }
}

/// The size and classes a standard name `RxC-a1`, `RxC-a2` or `RxC-full`
/// gives, if `name` is one (the size unchecked).
fn standard_size(name: &str) -> Option<((u32, u32), &'static [Class])> {
    let (size, classes): (&str, &[Class]) = if let Some(size) = name.strip_suffix("-full") {
        (size, &Class::ALL)
    } else if let Some(size) = name.strip_suffix("-a2") {
        (size, &[Class::Odd])
    } else if let Some(size) = name.strip_suffix("-a1") {
        (size, &[Class::Even])
    } else {
        return None;
    };
    let (rows, cols) = size.split_once('x')?;
    Some(((rows.parse().ok()?, cols.parse().ok()?), classes))
}

/// Refuses a variant name that could not name its database file: at most
/// 64 ASCII letters, digits, `-`, `_` and `.`, not starting with `.` or `-`.
fn check_name(name: &str) -> std::result::Result<(), String> {
    let fine = !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && !name.starts_with(['.', '-'])
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    if fine {
        Ok(())
    } else {
        Err(format!(
            "`{}` is not a variant name: 1 to {MAX_NAME_LEN} ASCII letters, digits, `-`, `_` and `.`, not starting with `.` or `-`",
            crate::text::clip(name, 80)
        ))
    }
}

fn standard_name(board: Board, classes: &[Class]) -> String {
    match classes {
        [Class::Even] => format!("{board}-a1"),
        [Class::Odd] => format!("{board}-a2"),
        _ => format!("{board}-full"),
    }
}

fn class_words(classes: &[Class]) -> &'static str {
    match classes {
        [Class::Even] => "a1",
        [Class::Odd] => "a2",
        _ => "a1 and a2",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_of_variants_is_built_in() {
        let mut files: Vec<String> = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/variants"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        files.sort();
        let mut built_in: Vec<String> = VARIANT_FILES.iter().map(|(f, _)| f.to_string()).collect();
        built_in.sort();
        assert_eq!(files, built_in);
        let variants = Variant::builtin().unwrap();
        for (v, (file, _)) in variants.iter().zip(VARIANT_FILES) {
            assert_eq!(format!("{}.json", v.name()), *file);
        }
    }

    #[test]
    fn named_and_standard_variants() {
        let v = Variant::named("7x6").unwrap();
        assert_eq!(v.start().to_string(), "7_6_a1-a3-a5_g1-g3-g5");
        assert_eq!(v.hash_sizes(), [1_085_280]);
        assert!(matches!(Variant::named("9x7"), Err(Error::UnknownVariant(_))));
        let std = Variant::named("9x6-full").unwrap();
        assert_eq!(std.start().to_string(), "9_6_a1-a2-a3-a4-a5-a6_i1-i2-i3-i4-i5-i6");
        assert_eq!(Variant::named("5x4-a2").unwrap().start().to_string(), "5_4_a2-a4_e2-e4");
        assert!(matches!(Variant::named("nope"), Err(Error::UnknownVariant(_))));
        assert!(Variant::named("4x5-a1").is_err());
        // Row a and row f of a 6x5 board hold 3 and 2 squares of the a1 class.
        assert!(Variant::named("6x5-a1").is_err());
    }

    #[test]
    fn positions_find_their_variant() {
        let name = |s: &str| Variant::for_position(&s.parse().unwrap(), None).map(|v| v.name().to_owned());
        assert_eq!(name("5_4_a1-a3_e1-e3").unwrap(), "5x4");
        assert_eq!(name("5_4_e1-e2-e3-e4_a1-a2-a3-a4").unwrap(), "5x4-full");
        assert_eq!(name("5_4_a2-a4_e2-e4").unwrap(), "5x4-a2");
        assert_eq!(name("9_6_a1-a3-a5_i1-i3-i5").unwrap(), "9x6-a1");
        assert_eq!(name("9_6_a1-a2-a3-a4-a5-a6_i1-i2-i3-i4-i5-i6").unwrap(), "9x6");
        let reasons = |s: &str, v: Option<&str>| match Variant::for_position(&s.parse().unwrap(), v) {
            Err(Error::Position(e)) => e.reasons,
            other => panic!("{s}: {other:?}"),
        };
        assert_eq!(reasons("5_4_a1_e1-e3", None), Refusals::COUNTS);
        assert_eq!(
            reasons("5_4_a2-a4_e2-e4", Some("5x4")),
            Refusals::CLASS | Refusals::COUNTS
        );
        assert_eq!(reasons("5_4_a1-c3_e1-e3", None), Refusals::ATTACKED);
        assert_eq!(reasons("4_5_a1-a3_d1-d3", None), Refusals::VARIANT);
    }

    #[test]
    fn hashes_combine_in_mixed_radix() {
        let v = Variant::named("5x4-full").unwrap();
        let start = v.start().clone();
        let hashes = v.class_hashes(&start);
        assert_eq!(v.hash(&start), u128::from(hashes[0]) * 1260 + u128::from(hashes[1]));
        let parts: Vec<Part> = v.classes().iter().map(|s| s.start).collect();
        assert_eq!(v.position(&parts), start);
    }
}
