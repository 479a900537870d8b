//! Forge: deterministic controls around AI coding agents.
//!
//! The library holds every control and the shared machinery they stand on; `src/cli/` only maps
//! subcommands onto it. Shared machinery lives in exactly one module each — state files
//! ([`state`]), process execution ([`exec`]), git ([`git`]) and test reports ([`report`]) — so a
//! later control (budget, guard, run) reuses rather than re-implements it.

pub mod breaker;
pub mod budget;
pub mod caller;
pub mod config;
pub mod counted;
pub mod doctor;
pub mod error;
pub mod evidence;
pub mod exec;
pub mod git;
pub mod glob;
pub mod guard;
pub mod hooks;
pub mod init;
pub mod repo;
pub mod report;
pub mod run;
pub mod sandbox;
pub mod secrets;
pub mod spec;
pub mod state;
#[cfg(test)]
mod testing;
pub mod text;
pub mod timeline;
pub mod timeline_html;
pub mod timeline_when;
pub mod trace;
pub mod undo;
pub mod verify;
pub mod yaml_edit;

pub use error::{Error, Result};
