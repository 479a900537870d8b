//! Arbitrary bytes as a bash command line: the analyser and the guard must answer, never panic,
//! hang, overflow the stack or allocate without bound.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let line = String::from_utf8_lossy(data);
    let cwd = Path::new("/repo/sub");
    let home = Path::new("/home/u");
    let _ = forge::guard::shell::analyze(&line, cwd, home);
    let guard = forge::guard::Guard::new(Path::new("/repo"), home, None, None);
    let _ = guard.check_command(&line, cwd);
});
