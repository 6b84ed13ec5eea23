//! A test's scratch directory, which a passing test leaves nothing of.
//! Shared by the tests' two helper modules (`common`, and `support` for
//! the server's tests).

use std::ffi::OsStr;
use std::ops::Deref;
use std::path::{Path, PathBuf};

/// A directory path of one test's own: removed when it is made, if a run
/// before left it, and removed again when dropped, unless the test is
/// failing (panicking), so that what a failed test left can be looked at.
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl Scratch {
    /// `path`, emptied of what was there: it does not exist on return.
    pub fn fresh(path: PathBuf) -> Scratch {
        let _ = std::fs::remove_dir_all(&path);
        Scratch(path)
    }
}

impl Deref for Scratch {
    type Target = PathBuf;

    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<OsStr> for Scratch {
    fn as_ref(&self) -> &OsStr {
        self.0.as_os_str()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}
