//! Forge: deterministic controls around AI coding agents.
//!
//! The library holds every control and the shared machinery they stand on; `src/cli/` only maps
//! subcommands onto it. Shared machinery lives in exactly one module each — state files
//! ([`state`]), process execution ([`exec`]), git ([`git`]) and test reports ([`report`]) — so a
//! later control (budget, guard, run) reuses rather than re-implements it.

pub mod breaker;
pub mod budget;
pub mod config;
pub mod error;
pub mod exec;
pub mod git;
pub mod glob;
pub mod guard;
pub mod hooks;
pub mod init;
pub mod repo;
pub mod report;
pub mod run;
pub mod spec;
pub mod state;
pub mod text;
pub mod timeline;
pub mod timeline_html;
pub mod verify;

pub use error::{Error, Result};
