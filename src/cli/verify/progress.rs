//! What a person watching `forge verify` sees while it runs: the report's header and each
//! command's block on stdout as soon as that command ends, and on stderr a line when each
//! command starts, naming the log its output fills — on a terminal an elapsed-time spinner instead, redrawn in place and erased
//! when the command ends. Nothing is animated unless stderr is a terminal.

use std::io::Write;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use forge::verify::{self, CommandConfig, CommandResult, Progress, Style};

/// How often the spinner is redrawn.
const TICK: Duration = Duration::from_millis(100);
const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// Where the streamed text report goes and how it looks; `None` for `--json`, whose one object
/// is printed at the end.
pub struct TextStream {
    pub header: String,
    pub width: usize,
    pub style: Style,
}

pub struct Live {
    pub text: Option<TextStream>,
    /// Whether stdout is a terminal: then the stdout block is the command's end line, and the
    /// spinner is only erased.
    pub stdout_tty: bool,
    pub stderr_tty: bool,
    pub quiet: bool,
    pub err_style: Style,
    header_done: bool,
    spinner: Option<Spinner>,
    /// The project's root: logs are named relative to it, and the spinner reads the running
    /// command's log to count its cases.
    root: std::path::PathBuf,
}

struct Spinner {
    stop: mpsc::Sender<()>,
    thread: JoinHandle<()>,
}

impl Live {
    pub fn new(
        text: Option<TextStream>,
        stdout_tty: bool,
        stderr_tty: bool,
        quiet: bool,
        err_style: Style,
        root: std::path::PathBuf,
    ) -> Live {
        Live {
            text,
            stdout_tty,
            stderr_tty,
            quiet,
            err_style,
            header_done: false,
            spinner: None,
            root,
        }
    }

    /// Prints the header now if no command started (a verify that fails before running any).
    pub fn finish_header(&mut self) {
        if !self.header_done
            && let Some(t) = &self.text
        {
            out(&t.header);
            self.header_done = true;
        }
    }

    fn stop_spinner(&mut self) {
        if let Some(s) = self.spinner.take() {
            let _ = s.stop.send(());
            let _ = s.thread.join();
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(b"\r\x1b[2K");
            let _ = err.flush();
        }
    }
}

/// Writes `s` to stdout in one go and flushes it, so a pipe reader sees each block at once.
fn out(s: &str) {
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(s.as_bytes());
    let _ = o.flush();
}

/// One line to stderr in one write (`eprintln!` writes each piece separately).
fn err(line: &str) {
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

impl Progress for Live {
    fn started(&mut self, cmd: &CommandConfig, log: &str) {
        self.finish_header();
        if self.quiet {
            return;
        }
        if !self.stderr_tty {
            err(&format!(
                "forge: {} started: {} (log: {log})\n",
                cmd.name,
                forge::text::clip(&cmd.run, 200)
            ));
            return;
        }
        let (stop, rx) = mpsc::channel::<()>();
        let label = format!(
            "{}  $ {}",
            self.err_style.paint("1", &cmd.name),
            forge::text::clip(&cmd.run, 60)
        );
        let style = self.err_style;
        let started = Instant::now();
        let mut tally = Tally::new(self.root.join(log), cmd.report);
        let thread = std::thread::spawn(move || {
            let mut frame = 0usize;
            loop {
                let count = tally.read();
                {
                    let mut err = std::io::stderr().lock();
                    let _ = write!(
                        err,
                        "\r\x1b[2K{} {label}  {:.1}s{count}",
                        style.paint("36", &FRAMES[frame % FRAMES.len()].to_string()),
                        started.elapsed().as_secs_f64()
                    );
                    let _ = err.flush();
                }
                frame += 1;
                match rx.recv_timeout(TICK) {
                    Err(mpsc::RecvTimeoutError::Timeout) => continue,
                    _ => break,
                }
            }
        });
        self.spinner = Some(Spinner { stop, thread });
    }

    fn finished(&mut self, result: &CommandResult) {
        self.stop_spinner();
        if let Some(t) = &self.text {
            out(&verify::command_block(result, t.width, t.style));
        }
        // The end line on stderr, where stdout does not already show it to the same eyes.
        let shown_on_stdout = self.text.is_some() && (self.stdout_tty || !self.stderr_tty);
        if self.quiet || shown_on_stdout {
            return;
        }
        let state = if result.ok {
            self.err_style.paint("32", "ok")
        } else {
            self.err_style.paint("31", "FAIL")
        };
        let how = if result.timed_out {
            format!("timed out after {} s", result.timeout_secs)
        } else {
            verify::exit_text(result)
        };
        err(&format!(
            "forge: {} finished: {state}, {how}, {:.2}s\n",
            result.name,
            result.duration_ms as f64 / 1000.0
        ));
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.stop_spinner();
    }
}

/// The cases a running command's log says ended so far, read as the log grows (it is written
/// as the command prints; see `exec.rs`).
struct Tally {
    log: std::path::PathBuf,
    format: forge::report::Format,
    offset: u64,
    partial: Vec<u8>,
    passed: u64,
    failed: u64,
}

impl Tally {
    fn new(log: std::path::PathBuf, format: forge::report::Format) -> Tally {
        Tally {
            log,
            format,
            offset: 0,
            partial: Vec::new(),
            passed: 0,
            failed: 0,
        }
    }

    /// Reads what the log gained since the last call; the count to show (empty before any).
    fn read(&mut self) -> String {
        use std::io::{Read, Seek};
        if let Ok(mut f) = std::fs::File::open(&self.log)
            && f.seek(std::io::SeekFrom::Start(self.offset)).is_ok()
        {
            let mut buf = Vec::new();
            // A bounded read per tick: a command that prints fast is counted over a few ticks.
            if let Ok(n) = f.take(1 << 20).read_to_end(&mut buf) {
                self.offset += n as u64;
                self.partial.extend_from_slice(&buf);
                let (mut passed, mut failed, mut start) = (0, 0, 0);
                for line in self.partial.split_inclusive(|b| *b == b'\n') {
                    if line.last() != Some(&b'\n') {
                        break;
                    }
                    start += line.len();
                    let text = String::from_utf8_lossy(&line[..line.len() - 1]);
                    match forge::report::live::case_ended(self.format, &text) {
                        Some(true) => passed += 1,
                        Some(false) => failed += 1,
                        None => {}
                    }
                }
                self.partial.drain(..start);
                self.passed += passed;
                self.failed += failed;
            }
        }
        if self.passed + self.failed == 0 {
            return String::new();
        }
        format!("  {} passed, {} failed", self.passed, self.failed)
    }
}
