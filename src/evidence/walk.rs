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

/// How long a walk lists on its caller's thread before it starts workers: a walk that ends
/// sooner would have spent more starting and joining them.
const SERIAL: std::time::Duration = std::time::Duration::from_millis(2);

/// Lists from `first` down: `visit` lists one folder into its worker's `F` and returns the
/// subfolders to list. Returns each worker's `F`.
pub fn par_walk<S, F, V>(first: Job<S>, visit: V) -> Vec<F>
where
    S: Send,
    F: Default + Send,
    V: Fn(&Job<S>, &mut F) -> Vec<Job<S>> + Sync,
{
    // A small tree is listed here, on this thread: starting workers costs more than listing
    // a few dozen folders (a hook's journal of a 100-file project, BENCHMARKS.md §11). What is
    // left after [`SERIAL`] goes to the workers.
    let mut pending = vec![first];
    let mut mine = F::default();
    let started = std::time::Instant::now();
    while started.elapsed() < SERIAL {
        let Some(job) = pending.pop() else {
            return vec![mine];
        };
        let more = visit(&job, &mut mine);
        pending.extend(more);
    }
    // (folders to list, folders being listed): the walk is over when both are empty.
    let queue = Mutex::new((pending, 0usize));
    let wake = Condvar::new();
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 4);
    let results = Mutex::new(Vec::with_capacity(threads + 1));
    results.lock().unwrap_or_else(|e| e.into_inner()).push(mine);
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
                    // Handed back when dropped, also when `visit` panics: the other workers
                    // then finish and the panic reaches the caller, instead of them waiting
                    // forever on a folder no one is listing.
                    let mut done = Done {
                        queue: &queue,
                        wake: &wake,
                        more: Vec::new(),
                    };
                    done.more = visit(&job, &mut found);
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

/// A listed folder, handed back to the queue with the subfolders found in it.
struct Done<'a, S> {
    queue: &'a Mutex<(Vec<Job<S>>, usize)>,
    wake: &'a Condvar,
    more: Vec<Job<S>>,
}

impl<S> Drop for Done<'_, S> {
    fn drop(&mut self) {
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        q.0.append(&mut self.more);
        q.1 -= 1;
        self.wake.notify_all();
    }
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

    #[test]
    fn a_visit_that_panics_reaches_the_caller_instead_of_hanging_the_walk() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..20 {
            std::fs::create_dir_all(dir.path().join(format!("d{i}/e"))).unwrap();
        }
        let root = dir.path().to_path_buf();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let r = std::panic::catch_unwind(|| {
                par_walk(
                    Job {
                        rel: String::new(),
                        state: (),
                    },
                    |job, _: &mut ()| {
                        if job.rel == "d7" {
                            panic!("a visit failed");
                        }
                        std::fs::read_dir(root.join(&job.rel))
                            .unwrap()
                            .flatten()
                            .filter(|e| e.file_type().unwrap().is_dir())
                            .map(|e| {
                                let name = e.file_name().to_string_lossy().into_owned();
                                Job {
                                    rel: if job.rel.is_empty() {
                                        name
                                    } else {
                                        format!("{}/{name}", job.rel)
                                    },
                                    state: (),
                                }
                            })
                            .collect()
                    },
                )
            });
            let _ = tx.send(r.is_err());
        });
        // A walk of 41 folders takes milliseconds; a minute means the workers wait forever.
        let panicked = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the walk hung after a visit panicked");
        assert!(panicked);
    }
}
