//! `sightline`: the analyses of the viewer, in a terminal, for CI gates and traces too big for a tab.

// The CLI is native (its server runs on tokio and hyper, which have no wasm32 build); the browser
// tests' wasm32 build still builds this binary, empty there.
#[cfg(not(target_arch = "wasm32"))]
mod cli;

#[cfg(not(target_arch = "wasm32"))]
use clap::FromArgMatches;
#[cfg(not(target_arch = "wasm32"))]
use cli::args::{Cli, Command};
#[cfg(not(target_arch = "wasm32"))]
use std::process::ExitCode;

/// `sightline report x | head` closes stdout early; Rust ignores SIGPIPE, so `println!` panics on
/// the broken pipe. That is the reader saying "enough", not an error: exit quietly.
#[cfg(not(target_arch = "wasm32"))]
fn quiet_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.contains("failed printing to stdout") && msg.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() -> ExitCode {
    quiet_broken_pipe();
    let matches = match cli::args::command().try_get_matches() {
        Ok(m) => m,
        Err(e) => cli::args::exit_with(e),
    };
    let parsed = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    cli::set_full_names(parsed.full_names);
    let (who, result) = match &parsed.command {
        Command::Summary(a) => ("sightline", cli::summary::run(a)),
        Command::Ops(a) => ("sightline", cli::ops::run(a)),
        Command::Kernels(a) => ("sightline", cli::kernels::run(a)),
        Command::Labels(a) => ("sightline", cli::labels::run(a)),
        Command::Compiled(a) => ("sightline", cli::compiled::run(a)),
        Command::Path(a) => ("sightline", cli::path::run(a)),
        Command::Modules(a) => ("sightline", cli::modules::run(a)),
        Command::Idle(a) => ("sightline", cli::idle::run(a)),
        Command::Steps(a) => ("sightline", cli::steps::run(a)),
        Command::Memory(a) => ("sightline", cli::memory::run(a)),
        Command::Snapshot(a) => ("sightline", cli::snapshot::run(a)),
        Command::Flops(a) => ("sightline", cli::flops::run(a)),
        Command::Graphs(a) => ("sightline", cli::graphs::run(a)),
        Command::Report(a) => ("sightline", cli::report::run(a)),
        Command::Digest(a) => ("sightline", cli::digest::run(a)),
        Command::Ranks(a) => ("sightline", cli::ranks::run(a)),
        Command::Serve(a) => ("sightline serve", cli::serve::run(a)),
        Command::Mcp(a) => ("sightline mcp", cli::mcp::run(a)),
        Command::Diff(a) => {
            return match cli::diff::run(a) {
                Ok(false) => ExitCode::SUCCESS,
                Ok(true) => ExitCode::from(1),
                Err(e) => {
                    eprintln!("sightline: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Command::Completions { shell } => {
            // Written here rather than by clap_complete, which panics on a write error: a
            // reader that stops early (`| head`) is no error, as for every other command.
            let mut script = Vec::new();
            clap_complete::generate(*shell, &mut cli::args::command(), "sightline", &mut script);
            return match std::io::Write::write_all(&mut std::io::stdout(), &script) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    eprintln!("sightline: {e}");
                    ExitCode::from(2)
                }
                _ => ExitCode::SUCCESS,
            };
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{who}: {e}");
            ExitCode::from(2)
        }
    }
}
