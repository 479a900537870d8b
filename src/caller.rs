//! Who runs this command: a person at a terminal, or an agent's session.
//!
//! Agents mark the commands they run with environment variables. What Forge relies on, and
//! where each comes from:
//! - `CLAUDECODE=1`, `AI_AGENT=claude-code_…`, `CLAUDE_CODE_SESSION_ID`: set by Claude Code for
//!   its Bash tool (seen in a real run of 2.1.197 through the agent rig);
//! - `CODEX_THREAD_ID`, `CODEX_SANDBOX`, `CODEX_SANDBOX_NETWORK_DISABLED`: Codex CLI;
//! - `GEMINI_CLI=1`: Gemini CLI; `CURSOR_AGENT`, `OPENCODE`: Cursor's and opencode's agents;
//! - `AI_AGENT`: the cross-vendor marker more agents are adopting;
//! - `FORGE_ROLE`: set by `forge run` for every agent it calls.
//!
//! The limit, stated plainly: these are hints a cooperating agent leaves. A process the agent
//! starts can unset them (`env -u CLAUDECODE …`), so they back up the real walls rather than
//! being one: the guard's `human-only` rule, which denies an agent's `forge budget raise` (and
//! friends) through the PreToolUse hook however it is wrapped, and the guard's `forge-state`
//! rule (and the sandbox, where it runs) against agent writes to `.forge/config.yaml`.

/// `(variable, agent)` pairs, in the order they are checked.
pub const AGENT_MARKERS: &[(&str, &str)] = &[
    ("FORGE_ROLE", "forge-run"),
    ("CLAUDECODE", "claude"),
    ("CLAUDE_CODE_SESSION_ID", "claude"),
    ("CODEX_THREAD_ID", "codex"),
    ("CODEX_SANDBOX", "codex"),
    ("CODEX_SANDBOX_NETWORK_DISABLED", "codex"),
    ("GEMINI_CLI", "gemini"),
    ("CURSOR_AGENT", "cursor"),
    ("OPENCODE", "opencode"),
    ("AI_AGENT", "agent"),
];

/// An agent marker found in the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentMarker {
    pub variable: &'static str,
    pub agent: &'static str,
    pub value: String,
}

/// The first agent marker set (non-empty) in this process's environment.
pub fn agent_marker() -> Option<AgentMarker> {
    marker_in(|k| std::env::var(k).ok())
}

/// [`agent_marker`] over any environment.
pub fn marker_in(get: impl Fn(&str) -> Option<String>) -> Option<AgentMarker> {
    AGENT_MARKERS.iter().find_map(|(variable, agent)| {
        get(variable)
            .filter(|v| !v.trim().is_empty())
            .map(|value| AgentMarker {
                variable,
                agent,
                value,
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_claude_code_environment_is_an_agent() {
        // The variables a real Claude Code 2.1.197 Bash tool call had (agent rig run).
        let env = [
            ("AI_AGENT", "claude-code_2-1-197_agent"),
            ("CLAUDECODE", "1"),
            ("CLAUDE_CODE_ENTRYPOINT", "sdk-cli"),
            (
                "CLAUDE_CODE_SESSION_ID",
                "79f677c7-23ba-4a9c-8027-5e930263db0a",
            ),
        ];
        let get = |k: &str| {
            env.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        };
        let m = marker_in(get).unwrap();
        assert_eq!((m.variable, m.agent), ("CLAUDECODE", "claude"));
        assert_eq!(marker_in(|_| None), None);
        assert_eq!(
            marker_in(|k| (k == "CODEX_THREAD_ID").then(|| "t1".into()))
                .unwrap()
                .agent,
            "codex"
        );
        assert_eq!(
            marker_in(|_| Some("  ".into())),
            None,
            "empty values are no marker"
        );
    }
}
