//! What Forge observed itself, through channels no agent could write, at the moment of a
//! decision — the only facts a gate may decide on.
//!
//! An agent, and everything it or the code it wrote starts, may change anything it can write:
//! the working tree, the index and its stat cache and flags, `.git/*`, git's global config, HOME,
//! logs. So nothing here asks git what changed or reads a log back by path:
//!
//! - [`snapshot`]: every path's content, hashed by Forge from the bytes on disk (git's object
//!   ids, so a snapshot compares directly with a commit's tree), with a cache held only in
//!   Forge's memory and keyed on the kernel-kept ctime.
//! - [`odb`]: blobs and trees Forge writes to, and reads back from, git's object store, each
//!   read verified against its id (a planted object under an honest name is caught).
//! - [`refs`]: branches, tags, the stash and git's control files before and after an agent call.
//! - [`checkout`]: the candidate tree written out for the checks, kept identical to it by
//!   content between checks.
//! - [`walk`]: a folder tree listed on a few threads, for the two above that read whole trees.
//! - Command output is captured from the pipe by [`crate::exec`] and parsed from those bytes.

pub mod checkout;
pub mod odb;
pub mod refs;
pub mod snapshot;
pub mod walk;

pub use snapshot::{Change, Entry, Hasher, Snapshot};
