//! Conditions a CI job fails on (`sightline diff --fail-if EXPR`), read from a [`Diff`].
//!
//! Grammar (spaces may stand around the comparison, inside the value and at either end, as in
//! `"step_time >= +5 %"`; a name keeps its inner spaces, `label:forward pass.device`):
//! ```text
//! EXPR    := METRIC CMP VALUE | "finding:" ID
//! METRIC  := "step_time" | "gpu_idle" | "host_wait" | "step:" CATEGORY
//!          | "op:" NAME "." OPFIELD | "label:" NAME "." LABELFIELD
//! OPFIELD := calls | self_cpu | cpu_total | self_device | device_total
//! LABELFIELD := calls | cpu_total | self_cpu | device
//! CMP     := ">" | ">=" | "<" | "<="
//! VALUE   := ["+" | "-"] NUMBER [ "%" | "us" | "ms" | "s" ]
//! ```
//! A value with `%` is held against the relative change, `(new - base) / base` in percent; a
//! value with a unit (or none: microseconds for times, a count for `calls`) against the change
//! `new - base`. So `step_time>+5%` fails when the step time grew by more than 5%, and
//! `op:aten::copy_.self_cpu>+200us` when `aten::copy_` gained more than 200 us of self CPU time
//! per step. Figures are those of the diff (per step unless `--total`). `op:` sums every row with
//! that name (all input shapes); NAME is everything up to the last `.`, so names with dots work.
//! `finding:ID` fails when NEW raises the finding and BASE did not, or raises it with a higher
//! severity. A metric whose name is in neither trace is an error, not a pass: a typo must not
//! silence a gate.

use super::headline::signed_time;
use super::Diff;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cmp {
    Gt,
    Ge,
    Lt,
    Le,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Threshold {
    /// Percent of the base.
    Percent(f64),
    /// An absolute change, in microseconds (or a count).
    Absolute(f64),
}

#[derive(Debug, Clone, PartialEq)]
enum Metric {
    StepTime,
    GpuIdle,
    HostWait,
    Step(String),
    Op(String, OpField),
    Label(String, LabelField),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OpField {
    Calls,
    SelfCpu,
    CpuTotal,
    SelfDevice,
    DeviceTotal,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LabelField {
    Calls,
    CpuTotal,
    SelfCpu,
    Device,
}

/// A parsed `--fail-if` condition.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    text: String,
    kind: CondKind,
}

#[derive(Debug, Clone, PartialEq)]
enum CondKind {
    Compare(Metric, Cmp, Threshold),
    Finding(String),
}

/// A condition held against a diff.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    pub expr: String,
    pub failed: bool,
    /// What was compared, in words.
    pub reason: String,
    pub base: Option<f64>,
    pub new: Option<f64>,
}

impl Condition {
    pub fn parse(text: &str) -> Result<Condition, String> {
        let text = text.trim();
        let bad = |why: &str| format!("--fail-if '{text}': {why}");
        if text.is_empty() {
            return Err(bad("empty; expected METRIC CMP VALUE or finding:ID"));
        }
        if let Some(id) = text.strip_prefix("finding:") {
            let id = id.trim();
            if id.is_empty() {
                return Err(bad("a finding id is missing"));
            }
            return Ok(Condition {
                text: text.to_string(),
                kind: CondKind::Finding(id.to_string()),
            });
        }
        // The comparison is the last '<' or '>': a value holds neither, a name may.
        let at = text.rfind(['<', '>']).ok_or_else(|| {
            bad("no comparison (>, >=, <, <=); an expression with spaces must be quoted whole")
        })?;
        let (lhs, rest) = text.split_at(at);
        let (cmp, value) = match (rest.as_bytes()[0], rest.as_bytes().get(1)) {
            (b'>', Some(b'=')) => (Cmp::Ge, &rest[2..]),
            (b'>', _) => (Cmp::Gt, &rest[1..]),
            (b'<', Some(b'=')) => (Cmp::Le, &rest[2..]),
            _ => (Cmp::Lt, &rest[1..]),
        };
        let metric = parse_metric(lhs.trim()).map_err(|e| bad(&e))?;
        // Spaces inside the value (`+ 5 %`) carry no meaning.
        let value: String = value.chars().filter(|c| !c.is_whitespace()).collect();
        if value.is_empty() {
            return Err(bad("a value is missing after the comparison"));
        }
        let threshold = parse_value(&value).map_err(|e| bad(&e))?;
        Ok(Condition {
            text: text.to_string(),
            kind: CondKind::Compare(metric, cmp, threshold),
        })
    }

    /// Holds the condition against `d`; an error when it names what neither trace has.
    pub fn check(&self, d: &Diff) -> Result<Verdict, String> {
        match &self.kind {
            CondKind::Finding(id) => {
                let added = d.findings.added.iter().find(|f| &f.finding.id == id);
                let worse = d.findings.changed.iter().find(|c| &c.id == id && c.worse());
                let reason = if let Some(a) = added {
                    let how = match &a.crossed {
                        Some(c) => format!("crossed its threshold, {}", c.text()),
                        None => "appeared".to_string(),
                    };
                    let f = &a.finding;
                    format!("finding {id} {how} ({}): {}", f.severity, f.detail)
                } else if let Some(c) = worse {
                    format!(
                        "finding {id} rose from {} to {}: {}",
                        c.base_severity, c.new_severity, c.new_detail
                    )
                } else {
                    format!("finding {id} did not appear or worsen")
                };
                Ok(Verdict {
                    expr: self.text.clone(),
                    failed: added.is_some() || worse.is_some(),
                    reason,
                    base: None,
                    new: None,
                })
            }
            CondKind::Compare(metric, cmp, threshold) => {
                let (base, new) = value(metric, d)
                    .ok_or_else(|| format!("--fail-if '{}': not in either trace", self.text))?;
                let change = match threshold {
                    Threshold::Percent(_) if base == 0.0 => {
                        if new == 0.0 {
                            0.0
                        } else {
                            f64::INFINITY.copysign(new)
                        }
                    }
                    Threshold::Percent(_) => (new - base) / base.abs() * 100.0,
                    Threshold::Absolute(_) => new - base,
                };
                let limit = match threshold {
                    Threshold::Percent(x) | Threshold::Absolute(x) => *x,
                };
                let failed = match cmp {
                    Cmp::Gt => change > limit,
                    Cmp::Ge => change >= limit,
                    Cmp::Lt => change < limit,
                    Cmp::Le => change <= limit,
                };
                let is_count = matches!(
                    metric,
                    Metric::Op(_, OpField::Calls) | Metric::Label(_, LabelField::Calls)
                );
                let show = |v: f64| {
                    if is_count {
                        format!("{v}")
                    } else {
                        super::headline::time(v)
                    }
                };
                let moved = if is_count {
                    format!("{:+}", new - base)
                } else {
                    signed_time(new - base)
                };
                let pct = if base != 0.0 {
                    format!(" ({:+.1}%)", (new - base) / base.abs() * 100.0)
                } else {
                    String::new()
                };
                let verb = if failed { "fails" } else { "passes" };
                Ok(Verdict {
                    expr: self.text.clone(),
                    failed,
                    reason: format!(
                        "{} {verb}: {} -> {}, {moved}{pct}",
                        self.text,
                        show(base),
                        show(new)
                    ),
                    base: Some(base),
                    new: Some(new),
                })
            }
        }
    }
}

fn parse_metric(s: &str) -> Result<Metric, String> {
    match s {
        "step_time" => return Ok(Metric::StepTime),
        "gpu_idle" => return Ok(Metric::GpuIdle),
        "host_wait" => return Ok(Metric::HostWait),
        _ => {}
    }
    if let Some(c) = s.strip_prefix("step:") {
        return Ok(Metric::Step(c.trim().to_string()));
    }
    let field = |rest: &str| -> Result<(String, String), String> {
        let (name, f) = rest
            .rsplit_once('.')
            .map(|(n, f)| (n.trim(), f.trim()))
            .filter(|(n, _)| !n.is_empty())
            .ok_or("expected NAME.FIELD")?;
        Ok((name.to_string(), f.to_string()))
    };
    if let Some(rest) = s.strip_prefix("op:") {
        let (name, f) = field(rest)?;
        let f = match f.as_str() {
            "calls" => OpField::Calls,
            "self_cpu" => OpField::SelfCpu,
            "cpu_total" => OpField::CpuTotal,
            "self_device" => OpField::SelfDevice,
            "device_total" => OpField::DeviceTotal,
            _ => {
                return Err(format!(
                    "unknown operator field '{f}' (calls, self_cpu, cpu_total, self_device, \
                     device_total)"
                ))
            }
        };
        return Ok(Metric::Op(name, f));
    }
    if let Some(rest) = s.strip_prefix("label:") {
        let (name, f) = field(rest)?;
        let f = match f.as_str() {
            "calls" => LabelField::Calls,
            "cpu_total" => LabelField::CpuTotal,
            "self_cpu" => LabelField::SelfCpu,
            "device" => LabelField::Device,
            _ => {
                return Err(format!(
                    "unknown label field '{f}' (calls, cpu_total, self_cpu, device)"
                ))
            }
        };
        return Ok(Metric::Label(name, f));
    }
    Err(format!(
        "unknown metric '{s}' (step_time, gpu_idle, host_wait, step:CATEGORY, op:NAME.FIELD, \
         label:NAME.FIELD, finding:ID)"
    ))
}

fn parse_value(s: &str) -> Result<Threshold, String> {
    let (num, unit) = match s.find(|c: char| c.is_ascii_alphabetic() || c == '%') {
        Some(i) => s.split_at(i),
        None => (s, ""),
    };
    let x: f64 = num
        .parse()
        .ok()
        .filter(|x: &f64| x.is_finite())
        .ok_or_else(|| format!("'{s}' is not a number with an optional %, us, ms or s"))?;
    match unit {
        "%" => Ok(Threshold::Percent(x)),
        "" | "us" => Ok(Threshold::Absolute(x)),
        "ms" => Ok(Threshold::Absolute(x * 1e3)),
        "s" => Ok(Threshold::Absolute(x * 1e6)),
        u => Err(format!("unknown unit '{u}' (%, us, ms, s)")),
    }
}

/// (base, new) of a metric in the diff's figures; `None` when neither trace has it.
fn value(m: &Metric, d: &Diff) -> Option<(f64, f64)> {
    match m {
        Metric::StepTime => Some((d.steps.base.step_time_us, d.steps.new.step_time_us)),
        Metric::GpuIdle => Some((d.idle.base.idle_us, d.idle.new.idle_us)),
        Metric::HostWait => Some((d.idle.base.host_wait_us, d.idle.new.host_wait_us)),
        Metric::Step(c) => {
            let (b, n) = (
                d.steps.base.breakdown.iter().find(|k| &k.category == c),
                d.steps.new.breakdown.iter().find(|k| &k.category == c),
            );
            (b.is_some() || n.is_some()).then(|| (b.map_or(0.0, |k| k.us), n.map_or(0.0, |k| k.us)))
        }
        Metric::Op(name, f) => {
            let rows: Vec<_> = d.ops.iter().filter(|o| &o.name == name).collect();
            let pick = |s: &super::OpSide| match f {
                OpField::Calls => s.calls.0,
                OpField::SelfCpu => s.self_cpu_us,
                OpField::CpuTotal => s.cpu_total_us,
                OpField::SelfDevice => s.self_device_us,
                OpField::DeviceTotal => s.device_total_us,
            };
            (!rows.is_empty()).then(|| {
                (
                    rows.iter().map(|o| pick(&o.base)).sum(),
                    rows.iter().map(|o| pick(&o.new)).sum(),
                )
            })
        }
        Metric::Label(name, f) => {
            let l = d.labels.iter().find(|l| &l.name == name)?;
            let pick = |s: &super::LabelSide| match f {
                LabelField::Calls => s.calls.0,
                LabelField::CpuTotal => s.cpu_total_us,
                LabelField::SelfCpu => s.self_cpu_us,
                LabelField::Device => s.device_us,
            };
            Some((pick(&l.base), pick(&l.new)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_grammar() {
        let c = Condition::parse("op:aten::copy_.self_cpu>+10%").unwrap();
        assert_eq!(
            c.kind,
            CondKind::Compare(
                Metric::Op("aten::copy_".into(), OpField::SelfCpu),
                Cmp::Gt,
                Threshold::Percent(10.0)
            )
        );
        let c = Condition::parse("step_time>=2ms").unwrap();
        assert_eq!(
            c.kind,
            CondKind::Compare(Metric::StepTime, Cmp::Ge, Threshold::Absolute(2000.0))
        );
        let c = Condition::parse("op:enumerate(DataLoader)#_Iter.__next__.calls<-1").unwrap();
        assert_eq!(
            c.kind,
            CondKind::Compare(
                Metric::Op(
                    "enumerate(DataLoader)#_Iter.__next__".into(),
                    OpField::Calls
                ),
                Cmp::Lt,
                Threshold::Absolute(-1.0)
            )
        );
        let c = Condition::parse("op:<lambda>.self_cpu<=5us").unwrap();
        assert_eq!(
            c.kind,
            CondKind::Compare(
                Metric::Op("<lambda>".into(), OpField::SelfCpu),
                Cmp::Le,
                Threshold::Absolute(5.0)
            )
        );
        assert_eq!(
            Condition::parse("finding:pageable_memcpy").unwrap().kind,
            CondKind::Finding("pageable_memcpy".into())
        );
        for bad in [
            "",
            "   ",
            "step_time >= ",
            "step_time = 5%",
            "step time > 5%",
            "step_time > 5 parsecs",
            "step_time",
            "step_time>",
            "step_time>5parsecs",
            "op:aten::mm>5%",
            "op:aten::mm.speed>5%",
            "wall>1",
            "finding:",
        ] {
            assert!(Condition::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn spaces_around_the_comparison_and_in_the_value() {
        let same = [
            ("step_time>=+5%", "step_time >= +5%"),
            ("step_time>+5%", "  step_time > + 5 %  "),
            (
                "op:aten::copy_.self_cpu>200us",
                "op:aten::copy_.self_cpu > 200 us",
            ),
            ("op:<lambda>.self_cpu<=5us", "op:<lambda>.self_cpu <= 5us"),
            ("step:DataLoader>=20%", "step:DataLoader >= 20%"),
            ("finding:pageable_memcpy", " finding: pageable_memcpy "),
        ];
        for (tight, spaced) in same {
            assert_eq!(
                Condition::parse(tight).unwrap().kind,
                Condition::parse(spaced).unwrap().kind,
                "{spaced}"
            );
        }
        // A name keeps its inner spaces; the text shown is the expression, trimmed.
        let c = Condition::parse(" label:forward pass.device > 1ms ").unwrap();
        assert_eq!(
            c.kind,
            CondKind::Compare(
                Metric::Label("forward pass".into(), LabelField::Device),
                Cmp::Gt,
                Threshold::Absolute(1000.0)
            )
        );
        assert_eq!(c.text, "label:forward pass.device > 1ms");
        // An expression split by the shell names what is missing.
        let e = Condition::parse("step_time").unwrap_err();
        assert!(e.contains("quoted"), "{e}");
        let e = Condition::parse("step_time >=").unwrap_err();
        assert!(e.contains("value is missing"), "{e}");
    }
}
