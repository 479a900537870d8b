//! One error type for the library, so the CLI can map every failure to an exit code and a
//! message that names the file, key or command concerned and says what to do next.

use std::path::PathBuf;

/// Exit code of a successful command, and of a bare `forge verify` even on FAIL.
pub const EXIT_OK: i32 = 0;
/// Exit code of a gate that refuses: the breaker at its threshold or while open.
pub const EXIT_GATE: i32 = 1;
/// Exit code of a usage, configuration or state error: nothing ran, or nothing was recorded.
pub const EXIT_USAGE: i32 = 2;
/// Exit code of a command that found nothing to do where the person asked for a change:
/// `forge undo` with no journaled call, or nothing changed since the one named.
pub const EXIT_NOTHING: i32 = 3;
/// Exit code after Ctrl-C: 128 + SIGINT, what a shell reports for a program the signal ended.
pub const EXIT_INTERRUPTED: i32 = 130;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The configuration is missing or wrong; `message` names the key and says how to fix it.
    #[error("{}: {message}", path.display())]
    Config { path: PathBuf, message: String },

    /// A state file exists but cannot be trusted. Never silently reset: an agent that corrupts
    /// the breaker file must not get a fresh streak.
    #[error(
        "{}: {message}\n  Forge will not reset this state silently. {recovery}",
        path.display()
    )]
    State {
        path: PathBuf,
        message: String,
        recovery: String,
    },

    /// The command line asks for something that cannot be done as asked.
    #[error("{0}")]
    Usage(String),

    /// A person pressed Ctrl-C: `ran` of the `of` selected commands ran to their end, and
    /// nothing was recorded.
    #[error(
        "interrupted — {ran} of {of} command(s) ran to the end; nothing was counted (no breaker attempt, nothing on the timeline)"
    )]
    Interrupted { ran: usize, of: usize },

    /// An I/O failure, with the path or operation it concerns.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }

    pub fn usage(message: impl Into<String>) -> Self {
        Error::Usage(message.into())
    }

    /// Every library error but Ctrl-C is a refusal to proceed on bad input or state: exit 2,
    /// distinct from the breaker's 1 so scripts can tell "fix your setup" from "a human must
    /// step in".
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Interrupted { .. } => EXIT_INTERRUPTED,
            _ => EXIT_USAGE,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
