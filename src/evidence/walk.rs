//! A folder tree listed on a few threads. On a large tree, listing every folder and taking
//! every file's `lstat` is most of what a snapshot or a checkout sweep costs, and each folder is
//! independent of the others: workers take folders from one queue and put the subfolders they
//! find back on it. What a visit finds is gathered per worker and handed back whole; deciding
//! what it means (hashing, removing) stays on the caller's thread.

use std::sync::{Condvar, Mutex};

/// A folder to list: its path relative to the walk's root, and what its visit inherits from
/// its parent's (the `.gitignore` rules in force, for a snapshot).
pub struct Job<S> {
    pub rel: String,
    pub state: S,
}

/// Lists from `first` down: `visit` lists one folder into its worker's `F` and returns the
/// subfolders to list. Returns each worker's `F`.
pub fn par_walk<S, F, V>(first: Job<S>, visit: V) -> Vec<F>
where
    S: Send,
    F: Default + Send,
    V: Fn(&Job<S>, &mut F) -> Vec<Job<S>> + Sync,
{
    // (folders to list, folders being listed): the walk is over when both are empty.
    let queue = Mutex::new((vec![first], 0usize));
    let wake = Condvar::new();
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 4);
    let results = Mutex::new(Vec::with_capacity(threads));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut found = F::default();
                loop {
                    let job = {
                        let mut q = queue.lock().unwrap_or_else(|e| e.into_inner());
                        loop {
                            if let Some(j) = q.0.pop() {
                                q.1 += 1;
                                break Some(j);
                            }
                            if q.1 == 0 {
                                break None;
                            }
                            q = wake.wait(q).unwrap_or_else(|e| e.into_inner());
                        }
                    };
                    let Some(job) = job else { break };
                    let more = visit(&job, &mut found);
                    let mut q = queue.lock().unwrap_or_else(|e| e.into_inner());
                    q.0.extend(more);
                    q.1 -= 1;
                    wake.notify_all();
                }
                results
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(found);
            });
        }
    });
    results.into_inner().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_folder_is_visited_once_whatever_the_threads() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..30 {
            let d = dir.path().join(format!("a{}/b{}", i % 7, i));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("f"), "x").unwrap();
        }
        let root = dir.path().to_path_buf();
        let found: Vec<Vec<String>> = par_walk(
            Job {
                rel: String::new(),
                state: (),
            },
            |job, out: &mut Vec<String>| {
                let mut more = Vec::new();
                for e in std::fs::read_dir(root.join(&job.rel)).unwrap().flatten() {
                    let rel = format!("{}{}", job.rel, e.file_name().to_string_lossy());
                    if e.file_type().unwrap().is_dir() {
                        more.push(Job {
                            rel: format!("{rel}/"),
                            state: (),
                        });
                    } else {
                        out.push(rel);
                    }
                }
                more
            },
        );
        let mut all: Vec<String> = found.into_iter().flatten().collect();
        all.sort();
        assert_eq!(all.len(), 30);
        all.dedup();
        assert_eq!(all.len(), 30);
        assert!(all.contains(&"a3/b10/f".to_string()));
    }
}
