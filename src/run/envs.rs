//! The project's environments: folders git ignores that the person's commands need to start —
//! a virtual environment, `node_modules`. The checks run on a clean checkout, which has none of
//! them; each is shown there read-only (`forge sandbox --layer-env`), so `.venv/bin/pytest`
//! starts as it does in the working tree and no check can change what the next one runs.

use std::path::Path;

/// The environments found in `root` when `run.check_envs` is unset: at the top and one folder
/// down (`web/node_modules`), each a real folder (not a link) that is `node_modules` or holds
/// a `pyvenv.cfg` (any virtual environment, whatever its name). Sorted; a tracked folder is
/// left out later by the checkout, which binds nothing over the candidate's own files.
pub fn found(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for (rel, depth) in folders(root, "").into_iter().map(|r| (r, 0)) {
        if is_env(&root.join(&rel), &rel) {
            out.push(rel);
        } else if depth == 0 && !rel.starts_with('.') {
            out.extend(
                folders(root, &rel)
                    .into_iter()
                    .filter(|sub| is_env(&root.join(sub), sub)),
            );
        }
    }
    out.sort();
    out
}

/// The folders (not links) directly inside `root/rel`, as paths relative to `root`.
fn folders(root: &Path, rel: &str) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(root.join(rel)) else {
        return Vec::new();
    };
    rd.flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n != ".git" && n != ".tmp" && n != ".forge")
        .map(|n| {
            if rel.is_empty() {
                n
            } else {
                format!("{rel}/{n}")
            }
        })
        .collect()
}

fn is_env(dir: &Path, rel: &str) -> bool {
    rel.rsplit('/').next() == Some("node_modules") || dir.join("pyvenv.cfg").is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_virtual_environments_and_node_modules_at_the_top_and_one_down() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        for f in [
            ".venv/pyvenv.cfg",
            "env-3.12/pyvenv.cfg",
            "node_modules/x/index.js",
            "web/node_modules/y/index.js",
            "api/.venv/pyvenv.cfg",
            "src/app.py",
            "docs/venv-notes/readme.md",
            ".hidden/node_modules/z.js",
            "a/b/node_modules/deep.js",
        ] {
            let p = r.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        // A link is not an environment of the project's (it may lead anywhere).
        std::os::unix::fs::symlink(r.join(".venv"), r.join("linked")).unwrap();
        assert_eq!(
            found(r),
            [
                ".venv",
                "api/.venv",
                "env-3.12",
                "node_modules",
                "web/node_modules"
            ]
        );
    }
}
