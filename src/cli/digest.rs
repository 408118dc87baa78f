//! `sightline digest FILE`: the trace's digest (`sightline::analysis::digest`) as JSON, the
//! compact form of its analyses that `sightline diff` (and the Python package) read.

use super::args::DigestArgs;
use super::{load, print_json, Loaded};
use sightline::analysis::digest::Digest;

pub fn run(opts: &DigestArgs) -> Result<(), String> {
    print_json(&digest(&load(&opts.file)?, &opts.file))
}

/// The digest of a trace read from `file`, whose name gives the rank when the trace does not, as
/// `sightline ranks` reads it.
pub fn digest(loaded: &Loaded, file: &str) -> Digest {
    let name = std::path::Path::new(file)
        .file_name()
        .map_or_else(|| file.to_string(), |n| n.to_string_lossy().into_owned());
    loaded.derived.digest(&name)
}
