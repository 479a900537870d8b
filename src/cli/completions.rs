//! `forge completions <shell>` and `forge man`: generated from the same clap definitions as
//! `--help`, so they list exactly the commands and flags this binary has.

use std::path::PathBuf;

use clap::CommandFactory;
use forge::error::{EXIT_OK, Error, Result};

#[derive(clap::Args)]
#[command(
    about = "Print a shell completion script (bash, zsh, fish, elvish, powershell)",
    after_help = "Examples:\n  forge completions bash > ~/.local/share/bash-completion/completions/forge\n  forge completions zsh > ~/.zfunc/_forge        # with `fpath+=~/.zfunc; autoload -U compinit; compinit` in ~/.zshrc\n  forge completions fish > ~/.config/fish/completions/forge.fish"
)]
pub struct CompletionsArgs {
    shell: clap_complete::Shell,
}

pub fn completions(args: CompletionsArgs) -> Result<i32> {
    let mut cmd = super::Cli::command();
    clap_complete::generate(args.shell, &mut cmd, "forge", &mut std::io::stdout());
    Ok(EXIT_OK)
}

#[derive(clap::Args)]
#[command(
    about = "Print the manual page (roff), or write one page per command into a folder",
    after_help = "Examples:\n  forge man | man -l -                      # read it now\n  forge man > forge.1                        # the top page\n  forge man --dir ~/.local/share/man/man1    # forge.1, forge-verify.1, …; then `man forge-verify`"
)]
pub struct ManArgs {
    /// Write forge.1 and a page per subcommand (forge-verify.1, …) into this folder instead.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

pub fn man(args: ManArgs) -> Result<i32> {
    let cmd = super::Cli::command();
    match args.dir {
        None => clap_mangen::Man::new(cmd)
            .render(&mut std::io::stdout())
            .map_err(|e| Error::io("cannot write the manual page", e))?,
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
            clap_mangen::generate_to(cmd, &dir)
                .map_err(|e| Error::io(format!("cannot write pages into {}", dir.display()), e))?;
            let mut pages: Vec<String> = std::fs::read_dir(&dir)
                .map_err(|e| Error::io(format!("cannot read {}", dir.display()), e))?
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("forge") && n.ends_with(".1"))
                .collect();
            pages.sort();
            println!(
                "Wrote {} page(s) into {}: {}",
                pages.len(),
                dir.display(),
                pages.join(", ")
            );
        }
    }
    Ok(EXIT_OK)
}
