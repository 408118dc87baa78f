//! Comparing two traces in the page (`www/js/compare.js`): each session's digest, and the diff of
//! two digests. Each trace stays in its own session (its own worker, where the page uses them);
//! only the digests, a few kB of JSON, travel between them.

use super::session::{Analysed, Session};
use super::tables::page_idle;
use super::{err, json};
use crate::analysis::columns::WithTables;
use crate::analysis::diff::{diff, DiffOptions, Mode};
use crate::analysis::digest::Digest;
use crate::query::tables;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
impl Session {
    /// The trace's digest as JSON, from the analyses and tables the page keeps
    /// ([`Session::analyse_step`] until it returns `"tables"`).
    /// `file` is the file's name (the rank when the trace does not say it; may be empty).
    pub fn digest(&self, file: &str) -> Result<String, JsValue> {
        let l = self.loaded()?;
        if l.analysed != Analysed::Tables {
            return Err(err("the tables are not built yet (call analyse_step)"));
        }
        Ok(json(&l.derived.digest_with(file, &page_idle())))
    }
}

/// The diff of two digests (JSON from [`Session::digest`]) as JSON, its tables' declared columns
/// beside it ([`WithTables`]): per step unless `total`, operators matched by input shapes too
/// when `by_shape`.
#[wasm_bindgen]
pub fn diff_digests(base: &str, new: &str, total: bool, by_shape: bool) -> Result<String, JsValue> {
    let read = |s: &str, which: &str| -> Result<Digest, JsValue> {
        serde_json::from_str(s).map_err(|e| err(format!("the {which} digest does not read: {e}")))
    };
    let opts = DiffOptions {
        mode: if total { Mode::Total } else { Mode::PerStep },
        by_shape,
    };
    let d = diff(&read(base, "base")?, &read(new, "new")?, &opts);
    // The comparison's tables' declared columns beside it, input shapes only when matched by them.
    let flags: &[&str] = if by_shape { &["by_shape"] } else { &[] };
    let declared = tables::tables_of("diff");
    Ok(json(&WithTables::new(declared, flags, &d)))
}
