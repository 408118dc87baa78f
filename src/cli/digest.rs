//! `sightline digest FILE`: the trace's digest (`sightline::analysis::digest`) as JSON, the
//! compact form of its analyses that `sightline diff` (and the Python package) read.

use super::args::DigestArgs;
use super::{load, print_json};
use sightline::query::Digest;

/// The digest of the trace, its file's name giving the rank when the trace does not, as
/// `sightline ranks` reads it.
pub fn run(opts: &DigestArgs) -> Result<(), String> {
    print_json(&load(&opts.file)?.ask(&Digest {})?)
}
