//! The journal's content-addressed store: each object a file named by git's blob id of its
//! bytes (`objects/ab/cdef…`), written once, shared by every call and session, read back only
//! after its bytes hash to its name.
//!
//! Not git's object store: that one is the session's to write (`git gc --prune=now` would
//! remove what Forge put there). This one lies under `.tmp/.forge/`, which no session command
//! can write (docs/sandbox.md) and the guard keeps from the file tools. Objects are not fsynced:
//! a crash loses at most the last call's journal, never a person's file.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::evidence::snapshot::ObjectFormat;

pub struct Store {
    dir: PathBuf,
    pub format: ObjectFormat,
}

impl Store {
    pub fn new(dir: PathBuf, format: ObjectFormat) -> Store {
        Store { dir, format }
    }

    fn path(&self, oid: &str) -> PathBuf {
        let (a, b) = oid.split_at(2.min(oid.len()));
        self.dir.join(a).join(b)
    }

    /// Whether `oid` is kept (by name: [`Store::get`] checks the bytes).
    pub fn has(&self, oid: &str) -> bool {
        valid_oid(oid) && self.path(oid).is_file()
    }

    /// Keeps `bytes`; their id. An object already kept is not written again.
    pub fn put(&self, bytes: &[u8]) -> Result<String> {
        let oid = self.format.oid("blob", bytes);
        self.put_as(&oid, bytes)?;
        Ok(oid)
    }

    /// Keeps `bytes` under `oid`, which the caller computed from them.
    fn put_as(&self, oid: &str, bytes: &[u8]) -> Result<()> {
        let to = self.path(oid);
        if to.is_file() {
            return Ok(());
        }
        crate::state::replace_unsynced(&to, bytes)
    }

    /// The bytes of `oid`; `None` when not kept. Bytes that do not hash to their name are an
    /// error: the journal is not what Forge wrote.
    pub fn get(&self, oid: &str) -> Result<Option<Vec<u8>>> {
        if !valid_oid(oid) {
            return Ok(None);
        }
        let p = self.path(oid);
        let bytes = match std::fs::read(&p) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(format!("cannot read {}", p.display()), e)),
        };
        if self.format.oid("blob", &bytes) != oid {
            return Err(Error::State {
                path: p,
                message: "this journal object does not hold what its name says".into(),
                recovery: "Remove .tmp/.forge/undo/ to start a new journal (what it held is lost)."
                    .into(),
            });
        }
        Ok(Some(bytes))
    }

    /// Keeps the regular file at `path` (whose `lstat` is `meta`) if it is at most `cap` bytes;
    /// its id as read (the file may have changed since it was hashed: what is kept is what was
    /// there just before the call). `None` when over the cap, or no longer a file.
    pub fn put_file(
        &self,
        path: &Path,
        meta: &std::fs::Metadata,
        cap: u64,
    ) -> Result<Option<String>> {
        if meta.len() > cap {
            return Ok(None);
        }
        let Some(bytes) = crate::evidence::snapshot::read_regular(path, meta)? else {
            return Ok(None);
        };
        if bytes.len() as u64 > cap {
            return Ok(None);
        }
        self.put(&bytes).map(Some)
    }
}

/// Lower-case hex of a SHA-1 or SHA-256 id: nothing else names a file here.
fn valid_oid(oid: &str) -> bool {
    matches!(oid.len(), 40 | 64) && oid.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_are_kept_once_by_content_and_checked_when_read() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::new(dir.path().join("objects"), ObjectFormat::Sha1);
        let a = s.put(b"hello\n").unwrap();
        // git's own id for these bytes.
        assert_eq!(a, "ce013625030ba8dba906f756967f9e9ca394464a");
        assert!(s.has(&a));
        let file = dir
            .path()
            .join("objects/ce/013625030ba8dba906f756967f9e9ca394464a");
        let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(s.put(b"hello\n").unwrap(), a);
        assert_eq!(std::fs::metadata(&file).unwrap().modified().unwrap(), mtime);
        assert_eq!(s.get(&a).unwrap().unwrap(), b"hello\n");
        assert_eq!(s.get(&"0".repeat(40)).unwrap(), None);
        assert!(!s.has("../../etc/passwd"));
        assert_eq!(s.get("../x").unwrap(), None);
        // Bytes changed under their name are refused.
        std::fs::write(&file, b"evil\n").unwrap();
        let e = s.get(&a).unwrap_err().to_string();
        assert!(e.contains("does not hold what its name says"), "{e}");
    }

    #[test]
    fn a_file_over_the_cap_is_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::new(dir.path().join("objects"), ObjectFormat::Sha1);
        let f = dir.path().join("f");
        std::fs::write(&f, vec![b'x'; 100]).unwrap();
        let m = std::fs::symlink_metadata(&f).unwrap();
        assert_eq!(s.put_file(&f, &m, 99).unwrap(), None);
        let oid = s.put_file(&f, &m, 100).unwrap().unwrap();
        assert_eq!(s.get(&oid).unwrap().unwrap().len(), 100);
    }
}
