//! The documents as a reader follows them: `docs/cli.md`'s reference is the commands' own help
//! (clap's, from their definitions in `src/cli/args.rs`), and every relative link in the
//! Markdown files leads to a file and a heading that exist.
#![cfg(not(target_arch = "wasm32"))]

use crate::common;
use std::path::{Path, PathBuf};

/// The commands `sightline --help` lists, in its order (`help` aside).
fn commands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

/// `docs/cli.md`'s reference: `sightline --help`, then each command's `--help`, as the binary of
/// this build prints them.
fn reference() -> String {
    let help = |args: &[&str]| {
        let (code, out, err) = common::run_cli(args);
        assert_eq!(code, 0, "{args:?}: {err}");
        out
    };
    let top = help(&["--help"]);
    let mut out = format!("```text\n$ sightline --help\n{top}```\n");
    let listed = commands(&top);
    assert!(listed.len() >= 15, "{listed:?}");
    for c in listed {
        out.push_str(&format!(
            "\n### `sightline {c}`\n\n```text\n$ sightline {c} --help\n{}```\n",
            help(&[&c, "--help"])
        ));
    }
    out
}

#[test]
fn docs_cli_md_holds_every_commands_help() {
    common::generated_section("docs/cli.md", "reference", &reference());
}

/// The Markdown files a reader opens: the README, the docs, the architecture, the benchmarks and
/// the Python package's README.
fn documents(root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = [
        "README.md",
        "ARCHITECTURE.md",
        "BENCHMARKS.md",
        "python/README.md",
    ]
    .iter()
    .map(|p| root.join(p))
    .collect();
    for dir in ["docs", "bench/notes"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut md: Vec<PathBuf> = entries
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .collect();
        md.sort();
        out.extend(md);
    }
    out
}

/// A heading's anchor as GitHub makes it: lower case, punctuation dropped but `-` and `_`,
/// spaces made `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown file's headings (outside code blocks).
fn anchors(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for l in text.lines() {
        if l.starts_with("```") {
            fenced = !fenced;
        } else if !fenced && l.starts_with('#') {
            out.push(anchor(l.trim_start_matches('#')));
        }
    }
    out
}

/// The relative link targets of a Markdown text (`[text](target)`, outside code blocks).
fn links(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for l in text.lines() {
        if l.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut rest = l;
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let Some(end) = rest.find(')') else { break };
            let target = &rest[..end];
            if !target.contains("://") && !target.starts_with("mailto:") && !target.is_empty() {
                out.push(target.to_string());
            }
            rest = &rest[end..];
        }
    }
    out
}

#[test]
fn relative_links_in_the_docs_lead_to_a_file_and_heading() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut broken = Vec::new();
    let docs = documents(root);
    assert!(docs.len() >= 8, "{docs:?}");
    for doc in docs {
        let text = std::fs::read_to_string(&doc).unwrap();
        for link in links(&text) {
            let (path, hash) = link.split_once('#').unwrap_or((&link, ""));
            let target = if path.is_empty() {
                doc.clone()
            } else {
                doc.parent().unwrap().join(path)
            };
            let name = doc.strip_prefix(root).unwrap().display().to_string();
            if !target.exists() {
                broken.push(format!("{name}: {link}: no such file"));
                continue;
            }
            let is_md = target.extension().is_some_and(|x| x == "md");
            if !hash.is_empty() && is_md {
                let heads = anchors(&std::fs::read_to_string(&target).unwrap());
                if !heads.iter().any(|h| h == hash) {
                    broken.push(format!("{name}: {link}: no such heading"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}
