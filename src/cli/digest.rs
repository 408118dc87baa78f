//! `sightline digest FILE`: the trace's digest (`sightline::analysis::digest`) as JSON, the
//! compact form of its analyses that `sightline diff` (and the Python package) read.

use super::{load, print_json, Opts};
use sightline::analysis::digest::Digest;

pub fn run(opts: &Opts) -> Result<(), String> {
    let loaded = load(&opts.file)?;
    print_json(&Digest::build(&loaded.trace))
}
