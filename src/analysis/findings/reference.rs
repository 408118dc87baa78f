//! Every rule's declaration, and the findings reference written from them (`docs/findings.md`;
//! `tests/findings_reference.rs` fails when the file and [`markdown`] differ, and
//! `SIGHTLINE_BLESS=1` rewrites it).
//!
//! The declarations stand beside their functions: the findings' own rules (`rules::RULES`, which
//! pairs each with its check), the roofline's (`flops::rules`), the critical path's hotspots
//! (`critical::hotspot`) and the rules across ranks (`ranks::findings`). Nothing in the analyses
//! imports this module, so listing them all here closes no circle of imports.

use super::rules;
use super::types::{Rule, Severity, Theme};
use crate::analysis::critical::hotspot;
use crate::analysis::critical::savings::MIN_WARNING_PCT;
use crate::analysis::flops;
use crate::analysis::ranks;

/// Every rule, in the order the reference lists them within a theme.
pub fn rules() -> impl Iterator<Item = &'static Rule> {
    rules::RULES
        .iter()
        .map(|(rule, _)| *rule)
        .chain(flops::rules::RULES)
        .chain(hotspot::RULES)
        .chain(ranks::findings::RULES)
}

/// The rule of an id.
pub fn rule(id: &str) -> Option<&'static Rule> {
    rules().find(|r| r.id == id)
}

/// `text` with each `{name}` written as the rule's threshold of that name; `Err` names a
/// placeholder that is no threshold of the rule.
pub fn with_thresholds(rule: &Rule, text: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let close = after
            .find('}')
            .ok_or_else(|| format!("{}: an unclosed {{ in {text:?}", rule.id))?;
        let name = &after[..close];
        let t = rule
            .thresholds
            .iter()
            .find(|t| t.name == name)
            .ok_or_else(|| format!("{}: {{{name}}} is no threshold of the rule", rule.id))?;
        out.push_str(&t.value.to_string());
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn severity_word(s: Severity) -> &'static str {
    match s {
        Severity::Info => "info",
        Severity::Warning => "warning",
        Severity::Critical => "critical",
    }
}

/// A table cell: one line, its pipes escaped.
fn cell(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// The rules' part of the findings reference, `docs/findings.md`: the severity rule and a table
/// per theme of every rule's id, severity, meaning, thresholds and what-if.
pub fn markdown() -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "A finding of a cost whose fix saves under {MIN_WARNING_PCT}% of the step is `info`, \
         whatever its rule's severity. Notes on how the trace was recorded are facts of the \
         recording, not costs: reports list them apart (`recording` beside `findings` in \
         `report --json`), after every cost.\n"
    ));
    let mut themes: Vec<Theme> = rules().map(|r| r.theme).collect();
    themes.sort();
    themes.dedup();
    for theme in themes {
        out.push_str(&format!(
            "\n## {}\n\n| id | severity | what it says | fires when | the fix's what-if | its \
             saving |\n|---|---|---|---|---|---|\n",
            theme.title()
        ));
        for r in rules().filter(|r| r.theme == theme) {
            let text = |t: &str| cell(&with_thresholds(r, t).unwrap_or_else(|e| panic!("{e}")));
            let severity = if r.recording {
                format!("{}, a note on the recording", severity_word(r.severity))
            } else {
                severity_word(r.severity).to_string()
            };
            out.push_str(&format!(
                "| `{}` | {severity} | {} | {} | {} | {} |\n",
                r.id,
                text(r.meaning),
                text(r.fires),
                text(r.whatif),
                r.pricing.words()
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::findings::types::{Pricing, Value};

    /// A rule is priced exactly when it names a what-if.
    #[test]
    fn a_rule_declares_its_pricing_with_its_what_if() {
        for r in rules() {
            assert_eq!(r.whatif == "-", r.pricing == Pricing::None, "{}", r.id);
        }
    }

    #[test]
    fn ids_are_unique_and_snake_case() {
        let mut ids: Vec<&str> = rules().map(|r| r.id).collect();
        for id in &ids {
            assert!(
                !id.is_empty()
                    && id
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                "{id}"
            );
        }
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), n, "an id declared twice");
    }

    #[test]
    fn every_threshold_is_named_in_its_rules_text_and_every_name_is_a_threshold() {
        for r in rules() {
            for text in [r.meaning, r.fires, r.whatif] {
                with_thresholds(r, text).unwrap();
            }
            for t in r.thresholds {
                let named = format!("{{{}}}", t.name);
                assert!(
                    r.fires.contains(&named) || r.whatif.contains(&named),
                    "{}: threshold {} is not in its text",
                    r.id,
                    t.name
                );
            }
        }
    }

    #[test]
    fn a_placeholder_that_is_no_threshold_is_an_error() {
        let r = rule("warmup_outlier").unwrap();
        assert_eq!(
            with_thresholds(r, "at {ratio} or more").unwrap(),
            "at 1.5x or more"
        );
        assert!(with_thresholds(r, "at {share}").is_err());
        assert!(with_thresholds(r, "at {ratio").is_err());
    }

    #[test]
    fn recording_notes_are_the_findings_own_rules() {
        // `Finding::is_recording` looks among those alone.
        for r in rules().filter(|r| r.recording) {
            assert!(
                rules::RULES.iter().any(|(own, _)| own.id == r.id),
                "{}",
                r.id
            );
        }
        assert!(rules().any(|r| r.recording));
    }

    #[test]
    fn values_read_in_their_units() {
        let cases = [
            (Value::Share(0.15), "15%"),
            (Value::Share(0.05), "5%"),
            (Value::Share(0.975), "97.5%"),
            (Value::Pct(10.0), "10%"),
            (Value::Times(1.5), "1.5x"),
            (Value::Count(100), "100"),
            (Value::Ns(50_000), "50 µs"),
            (Value::Ns(1_000_000), "1 ms"),
            (Value::Ns(1_500_000), "1.5 ms"),
            (Value::Ns(500), "500 ns"),
            (Value::Bytes(1 << 20), "1 MiB"),
            (Value::Bytes(512), "512 bytes"),
        ];
        for (v, text) in cases {
            assert_eq!(v.to_string(), text, "{v:?}");
        }
    }
}
