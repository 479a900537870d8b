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
    ) -> Live {
        Live {
            text,
            stdout_tty,
            stderr_tty,
            quiet,
            err_style,
            header_done: false,
            spinner: None,
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
        let thread = std::thread::spawn(move || {
            let mut frame = 0usize;
            loop {
                {
                    let mut err = std::io::stderr().lock();
                    let _ = write!(
                        err,
                        "\r\x1b[2K{} {label}  {:.1}s",
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
