//! When a client would not run Forge's hooks at all, though they are wired: Gemini CLI in a
//! folder it does not trust (and with `--skip-trust`, which its own headless error suggests),
//! Claude Code with `disableAllHooks`. A hook that does not run is a guard that is not there, so
//! `forge doctor` says so, and `forge hooks install gemini --trust` records the person's trust
//! the way Gemini does. What each client reads is as observed with the agent rig (Gemini CLI
//! 0.61.0, Claude Code 2.1.197–2.1.337); this file only reads and writes those files.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::json_text;
use crate::error::{Error, Result};
use crate::state::write_atomic;

/// Gemini CLI's environment switch that trusts the folder it starts in.
pub const GEMINI_TRUST_ENV: &str = "GEMINI_CLI_TRUST_WORKSPACE";

/// The value Gemini writes for a folder the person trusts (with everything under it).
const TRUST_FOLDER: &str = "TRUST_FOLDER";

/// Gemini CLI's list of trusted folders: `{"<absolute folder>": "TRUST_FOLDER" | "TRUST_PARENT"
/// | "DO_NOT_TRUST"}`.
pub fn gemini_trusted_folders(home: &Path) -> PathBuf {
    home.join(".gemini/trustedFolders.json")
}

/// Whether Gemini CLI started in `project` runs its project hooks: `Ok(())`, or why not.
pub fn gemini_trusts(
    home: &Path,
    project: &Path,
    env_trust: Option<&str>,
) -> std::result::Result<(), String> {
    if env_trust.is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
        return Ok(());
    }
    // Folder trust switched off in the user's settings: every folder is trusted.
    let settings = std::fs::read_to_string(home.join(".gemini/settings.json")).unwrap_or_default();
    if serde_json::from_str::<Value>(&settings)
        .ok()
        .and_then(|v| v.pointer("/security/folderTrust/enabled").cloned())
        == Some(Value::Bool(false))
    {
        return Ok(());
    }
    let file = gemini_trusted_folders(home);
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    let folders: serde_json::Map<String, Value> = match serde_json::from_str(&text) {
        Ok(Value::Object(m)) => m,
        _ if text.trim().is_empty() => serde_json::Map::new(),
        _ => {
            return Err(format!(
                "{} is not a JSON object, so Gemini trusts no folder from it",
                file.display()
            ));
        }
    };
    // The most specific entry that covers the project decides.
    let mut best: Option<(usize, bool)> = None;
    for (folder, how) in &folders {
        let folder = Path::new(folder);
        let (covers, trusted) = match how.as_str() {
            Some("TRUST_FOLDER") => (project.starts_with(folder), true),
            Some("TRUST_PARENT") => (
                folder.parent().is_some_and(|p| project.starts_with(p)),
                true,
            ),
            Some("DO_NOT_TRUST") => (project.starts_with(folder), false),
            _ => continue,
        };
        let depth = folder.components().count();
        if covers && best.is_none_or(|(d, _)| depth >= d) {
            best = Some((depth, trusted));
        }
    }
    match best {
        Some((_, true)) => Ok(()),
        Some((_, false)) => Err(format!("{} marks it DO_NOT_TRUST", file.display())),
        None => Err(format!(
            "it is not in {} and {GEMINI_TRUST_ENV} is not `true`",
            file.display()
        )),
    }
}

/// Records in Gemini's trusted folders that the person trusts `project` (`forge hooks install
/// gemini --trust`). Returns whether the file changed. Every byte outside that one entry stays.
pub fn gemini_trust(home: &Path, project: &Path) -> Result<bool> {
    let file = gemini_trusted_folders(home);
    let text = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(Error::io(format!("cannot read {}", file.display()), e)),
    };
    let key = project.to_string_lossy().into_owned();
    let broken = |why: String| Error::Config {
        path: file.clone(),
        message: format!("{why}; fix it by hand, Forge will not overwrite it"),
    };
    let new = if text.trim().is_empty() {
        let mut m = serde_json::Map::new();
        m.insert(key, Value::String(TRUST_FOLDER.into()));
        serde_json::to_string_pretty(&Value::Object(m)).unwrap_or_default() + "\n"
    } else {
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(_)) => {}
            Ok(_) => return Err(broken("is not a JSON object".into())),
            Err(e) => return Err(broken(format!("is not valid JSON ({e})"))),
        }
        let root = json_text::parse(&text)
            .map_err(|e| broken(format!("cannot be edited in place ({e})")))?;
        match root.get(&key) {
            Some(m)
                if serde_json::from_str::<Value>(&text[m.value.span.clone()]).ok()
                    == Some(Value::String(TRUST_FOLDER.into())) =>
            {
                return Ok(false);
            }
            Some(m) => json_text::splice(
                &text,
                m.value.span.clone(),
                &Value::String(TRUST_FOLDER.into()).to_string(),
            ),
            None => {
                json_text::insert_member(&text, &root, &key, &Value::String(TRUST_FOLDER.into()))
            }
        }
    };
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
    }
    write_atomic(&file, new.as_bytes())?;
    Ok(true)
}

/// The Claude Code settings files that switch every hook off (`"disableAllHooks": true`), of
/// those it reads for `project`: the user's, the project's, the project's local ones.
pub fn claude_hooks_disabled(home: &Path, project: &Path) -> Vec<PathBuf> {
    [
        home.join(".claude/settings.json"),
        project.join(".claude/settings.json"),
        project.join(".claude/settings.local.json"),
    ]
    .into_iter()
    .filter(|f| {
        std::fs::read_to_string(f)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .is_some_and(|v| v.get("disableAllHooks") == Some(&Value::Bool(true)))
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemini_trust_is_read_as_the_client_reads_it() {
        let home = tempfile::tempdir().unwrap();
        let p = Path::new("/work/shop");
        assert!(
            gemini_trusts(home.path(), p, None)
                .unwrap_err()
                .contains("not in")
        );
        assert!(gemini_trusts(home.path(), p, Some("true")).is_ok());
        assert!(gemini_trusts(home.path(), p, Some("1")).is_err());
        let f = gemini_trusted_folders(home.path());
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        for (text, ok) in [
            (r#"{"/work/shop": "TRUST_FOLDER"}"#, true),
            (r#"{"/work": "TRUST_FOLDER"}"#, true),
            (r#"{"/work/other": "TRUST_PARENT"}"#, true),
            (
                r#"{"/work": "TRUST_FOLDER", "/work/shop": "DO_NOT_TRUST"}"#,
                false,
            ),
            (r#"{"/work/shopping": "TRUST_FOLDER"}"#, false),
            ("[]", false),
        ] {
            std::fs::write(&f, text).unwrap();
            assert_eq!(gemini_trusts(home.path(), p, None).is_ok(), ok, "{text}");
        }
    }

    #[test]
    fn trusting_writes_the_clients_shape_and_keeps_the_rest() {
        let home = tempfile::tempdir().unwrap();
        let p = Path::new("/work/shop");
        assert!(gemini_trust(home.path(), p).unwrap());
        let f = gemini_trusted_folders(home.path());
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        assert_eq!(v, serde_json::json!({"/work/shop": "TRUST_FOLDER"}));
        assert!(!gemini_trust(home.path(), p).unwrap(), "idempotent");
        // Another folder's entry stays as the person wrote it; a distrust is replaced.
        std::fs::write(
            &f,
            "{\n  \"/a\": \"DO_NOT_TRUST\",\n  \"/work/shop\": \"DO_NOT_TRUST\"\n}\n",
        )
        .unwrap();
        assert!(gemini_trust(home.path(), p).unwrap());
        assert_eq!(
            std::fs::read_to_string(&f).unwrap(),
            "{\n  \"/a\": \"DO_NOT_TRUST\",\n  \"/work/shop\": \"TRUST_FOLDER\"\n}\n"
        );
        assert!(gemini_trusts(home.path(), p, None).is_ok());
        std::fs::write(&f, "{ broken").unwrap();
        let e = gemini_trust(home.path(), p).unwrap_err().to_string();
        assert!(
            e.contains("trustedFolders.json") && e.contains("not valid JSON"),
            "{e}"
        );
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "{ broken");
    }

    #[test]
    fn claudes_disable_all_hooks_is_found_where_the_client_reads_it() {
        let home = tempfile::tempdir().unwrap();
        let proj = tempfile::tempdir().unwrap();
        assert!(claude_hooks_disabled(home.path(), proj.path()).is_empty());
        std::fs::create_dir_all(proj.path().join(".claude")).unwrap();
        std::fs::write(
            proj.path().join(".claude/settings.local.json"),
            r#"{"disableAllHooks": true}"#,
        )
        .unwrap();
        std::fs::write(
            proj.path().join(".claude/settings.json"),
            r#"{"disableAllHooks": false}"#,
        )
        .unwrap();
        assert_eq!(
            claude_hooks_disabled(home.path(), proj.path()),
            [proj.path().join(".claude/settings.local.json")]
        );
    }
}
