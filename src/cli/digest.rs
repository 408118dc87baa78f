//! `sightline digest FILE`: the trace's digest (`sightline::analysis::digest`) as JSON, the
//! compact form of its analyses that `sightline diff` (and the Python package) read.

use super::args::DigestArgs;
use super::{load, print_json};
use sightline::analysis::digest::Digest;

pub fn run(opts: &DigestArgs) -> Result<(), String> {
    let loaded = load(&opts.file)?;
    // The file's name gives the rank when the trace does not, as `sightline ranks` reads it.
    let name = std::path::Path::new(&opts.file)
        .file_name()
        .map_or_else(|| opts.file.clone(), |n| n.to_string_lossy().into_owned());
    print_json(&Digest::build_file(&loaded.trace, &name))
}
