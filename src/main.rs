//! The `forge` binary: a thin shell over the library (see `src/cli/`).

mod cli;

#[global_allocator]
static ALLOC: cli::watchdog::Capped = cli::watchdog::Capped;

fn main() {
    std::process::exit(cli::main());
}
