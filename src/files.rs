//! Opening files without trusting what their names say.
//!
//! Anything can sit at a path: a FIFO, whose opening blocks until someone
//! opens its other end; a device; a socket; a symbolic link to somewhere
//! else. Every file `bishops` opens in a database directory goes through
//! [`open_regular`], which looks at what is at the path before opening it,
//! opens it without blocking, and checks again what it opened: anything but
//! a regular file is refused, never read, never waited on. Replacing a file
//! that is there by a new one ([`rename_no_replace`]) is refused too, unless
//! a caller decided to replace it.

use std::fmt;
use std::fs::{self, File, Metadata, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// What a path holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A regular file: the only kind this program reads or replaces.
    Regular,
    /// A directory.
    Directory,
    /// A symbolic link (seen only when links are not followed).
    Symlink,
    /// A FIFO (named pipe): opening it blocks until its other end is open.
    Fifo,
    /// A Unix domain socket.
    Socket,
    /// A character device, like `/dev/null`.
    CharDevice,
    /// A block device, like a disk.
    BlockDevice,
}

impl Kind {
    /// The kind of the file `meta` describes.
    pub fn of(meta: &Metadata) -> Kind {
        let t = meta.file_type();
        if t.is_file() {
            Kind::Regular
        } else if t.is_dir() {
            Kind::Directory
        } else if t.is_symlink() {
            Kind::Symlink
        } else if t.is_fifo() {
            Kind::Fifo
        } else if t.is_socket() {
            Kind::Socket
        } else if t.is_char_device() {
            Kind::CharDevice
        } else {
            Kind::BlockDevice
        }
    }
}

/// "a FIFO (named pipe)", to follow "is" in a message.
impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Regular => "a regular file",
            Kind::Directory => "a directory",
            Kind::Symlink => "a symbolic link",
            Kind::Fifo => "a FIFO (named pipe)",
            Kind::Socket => "a socket",
            Kind::CharDevice => "a character device",
            Kind::BlockDevice => "a block device",
        })
    }
}

/// Whether [`open_regular`] follows a symbolic link at the path itself.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Links {
    /// Open what the link points to, if that is a regular file.
    Follow,
    /// Refuse a link ([`OpenError::NotRegular`] of [`Kind::Symlink`]).
    Refuse,
}

/// Why [`open_regular`] opened nothing.
#[derive(Debug)]
pub enum OpenError {
    /// Something other than a regular file is at the path: left unopened
    /// (or, when it appeared between the look and the opening, closed at
    /// once, unread and unwritten).
    NotRegular(Kind),
    /// The system refused: nothing is there (and the options do not create
    /// it), no permission, and so on.
    Io(io::Error),
}

/// Opens `path` with `options` only if it is a regular file, or if nothing
/// is there and `options` create a file. It looks first (`stat`, or `lstat`
/// with [`Links::Refuse`]) and leaves anything else unopened; it then opens
/// with `O_NONBLOCK` (and `O_NOFOLLOW` with [`Links::Refuse`]), so that a
/// FIFO put there meanwhile cannot make it wait, and checks what it opened
/// (`fstat`). `O_NONBLOCK` changes nothing for a regular file.
///
/// # Errors
///
/// [`OpenError::NotRegular`] with what is there, or [`OpenError::Io`].
pub fn open_regular(path: &Path, options: &OpenOptions, links: Links) -> Result<File, OpenError> {
    let seen = match links {
        Links::Follow => fs::metadata(path),
        Links::Refuse => fs::symlink_metadata(path),
    };
    match seen {
        Ok(meta) if Kind::of(&meta) != Kind::Regular => return Err(OpenError::NotRegular(Kind::of(&meta))),
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(OpenError::Io(e)),
    }
    let mut options = options.clone();
    let nofollow = match links {
        Links::Follow => 0,
        Links::Refuse => libc::O_NOFOLLOW,
    };
    options.custom_flags(libc::O_NONBLOCK | nofollow);
    let file = options.open(path).map_err(|e| match e.raw_os_error() {
        Some(libc::ELOOP) if links == Links::Refuse => OpenError::NotRegular(Kind::Symlink),
        _ => OpenError::Io(e),
    })?;
    match Kind::of(&file.metadata().map_err(OpenError::Io)?) {
        Kind::Regular => Ok(file),
        kind => Err(OpenError::NotRegular(kind)),
    }
}

/// Renames `from` to `to` only if nothing is at `to`, atomically:
/// `renameat2` with `RENAME_NOREPLACE`, or on a file system without it a
/// hard link and the removal of `from`, which never replace anything either.
///
/// # Errors
///
/// [`io::ErrorKind::AlreadyExists`] when something is at `to`; `from` is
/// left where it was.
pub fn rename_no_replace(from: &Path, to: &Path) -> io::Result<()> {
    let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(io::Error::other);
    let (c_from, c_to) = (c(from)?, c(to)?);
    // SAFETY: two NUL-terminated paths that outlive the call, relative to
    // the working directory.
    let done = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            c_from.as_ptr(),
            libc::AT_FDCWD,
            c_to.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if done == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EINVAL | libc::ENOSYS) => {
            fs::hard_link(from, to)?;
            fs::remove_file(from)
        }
        _ => Err(e),
    }
}

/// Gives the bytes `range` of `file` back to the file system, keeping
/// the file's length: a hole, which reads as zeros and takes no disk.
///
/// # Errors
///
/// What `fallocate` says, [`io::ErrorKind::Unsupported`] among others on a
/// file system that cannot punch holes.
pub fn punch_hole(file: &File, range: std::ops::Range<u64>) -> io::Result<()> {
    let (Ok(at), Ok(len)) = (
        i64::try_from(range.start),
        i64::try_from(range.end.saturating_sub(range.start)),
    ) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a hole past the largest file",
        ));
    };
    if len == 0 {
        return Ok(());
    }
    // SAFETY: a file descriptor that `file` keeps open for the call.
    let done = unsafe {
        libc::fallocate(
            file.as_raw_fd(),
            libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            at,
            len,
        )
    };
    if done == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Makes the entries of the directory `dir` durable, after a rename into
/// it; best effort. `O_DIRECTORY` keeps anything else at the path unopened.
pub fn sync_dir(dir: &Path) {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    if let Ok(d) = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NONBLOCK)
        .open(dir)
    {
        let _ = d.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn fresh(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("bishops-files-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn mkfifo(path: &Path) {
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    }

    #[test]
    fn only_regular_files_are_opened_and_a_fifo_never_blocks() {
        let dir = fresh("open");
        let (file, fifo, link, missing) = (
            dir.join("file"),
            dir.join("fifo"),
            dir.join("link"),
            dir.join("missing"),
        );
        fs::write(&file, b"x").unwrap();
        mkfifo(&fifo);
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let read = OpenOptions::new().read(true).clone();
        let started = Instant::now();
        for links in [Links::Follow, Links::Refuse] {
            assert!(open_regular(&file, &read, links).is_ok());
            assert!(matches!(
                open_regular(&fifo, &read, links),
                Err(OpenError::NotRegular(Kind::Fifo))
            ));
            assert!(matches!(
                open_regular(&dir, &read, links),
                Err(OpenError::NotRegular(Kind::Directory))
            ));
            assert!(
                matches!(open_regular(&missing, &read, links), Err(OpenError::Io(e)) if e.kind() == io::ErrorKind::NotFound)
            );
        }
        assert!(open_regular(&link, &read, Links::Follow).is_ok());
        assert!(matches!(
            open_regular(&link, &read, Links::Refuse),
            Err(OpenError::NotRegular(Kind::Symlink))
        ));
        let create = OpenOptions::new().write(true).create(true).truncate(false).clone();
        assert!(open_regular(&missing, &create, Links::Refuse).is_ok());
        assert!(missing.is_file());
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_rename_that_would_replace_is_refused() {
        let dir = fresh("rename");
        let (a, b, c) = (dir.join("a"), dir.join("b"), dir.join("c"));
        fs::write(&a, b"new").unwrap();
        fs::write(&b, b"old").unwrap();
        let e = rename_no_replace(&a, &b).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read(&b).unwrap(), b"old");
        rename_no_replace(&a, &c).unwrap();
        assert_eq!(fs::read(&c).unwrap(), b"new");
        assert!(!a.exists());
        fs::remove_dir_all(&dir).unwrap();
    }
}
