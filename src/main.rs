//! The `forge` binary: a thin shell over the library (see `src/cli/`).

mod cli;

fn main() {
    std::process::exit(cli::main());
}
