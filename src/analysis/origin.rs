//! Where a slice comes from, in words a finding can quote: the `nn.Module` frame holding it
//! (`with_modules`, or `with_stack`'s module frames), else the `record_function` range, else the
//! Python frame. A finding that names operators says where they run with it, so that its advice
//! fits the place (a forward module, a loss, an optimizer) rather than a guess.

use crate::model::category::Kind;
use crate::model::{SliceRef, Trace};

/// The innermost place holding a slice.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Place {
    /// An `nn.Module` frame's instance name (`Qwen2RMSNorm_3`).
    Module(String),
    Label(String),
    Frame(String),
}

impl Place {
    fn words(&self) -> String {
        match self {
            Place::Module(m) => format!("the module `{m}`"),
            Place::Label(l) => format!("the range `{l}`"),
            Place::Frame(f) => format!("the Python frame `{f}`"),
        }
    }

    /// The module's class (its instance name less the `_N` PyTorch adds); other places as they
    /// are.
    fn family(&self) -> Place {
        match self {
            Place::Module(m) => {
                let class = m.trim_end_matches(|c: char| c.is_ascii_digit());
                let class = class.strip_suffix('_').filter(|c| c.len() < m.len() - 1);
                Place::Module(class.unwrap_or(m).to_string())
            }
            p => p.clone(),
        }
    }
}

/// The innermost `nn.Module` frame, else label, else Python frame holding `r` on its thread (a
/// bounded look back, as each is read once per finding).
fn place(trace: &Trace, r: SliceRef) -> Option<Place> {
    let l = trace.lanes.get(r.lane as usize)?;
    let s = trace.slices_of(l);
    let i = r.index as usize;
    let (t0, t1) = (s.start_ns[i], s.end_ns(i));
    let (mut module, mut label, mut frame) = (None, None, None);
    for j in (i.saturating_sub(1 << 14)..i).rev() {
        if s.start_ns[j] > t0 || s.end_ns(j) < t1 {
            continue;
        }
        let name = trace.str(s.name[j]);
        let cat = trace.str(s.cat[j]);
        if name.starts_with("ProfilerStep#") {
            continue;
        }
        if let Some(m) = name.strip_prefix("nn.Module: ") {
            module = module.or_else(|| Some(Place::Module(m.to_string())));
        } else if label.is_none() && Kind::of_cat(cat) == Kind::Annotation {
            label = Some(Place::Label(name.to_string()));
        } else if frame.is_none() && Kind::of_cat(cat) == Kind::Python {
            frame = Some(Place::Frame(name.to_string()));
        }
    }
    module.or(label).or(frame)
}

/// Where one slice comes from ("the module `Linear_3`").
pub fn origin(trace: &Trace, r: SliceRef) -> Option<String> {
    place(trace, r).map(|p| p.words())
}

/// At most this many of a finding's slices are placed.
const SAMPLED: usize = 64;

/// Where many slices come from (the calls of one loop, spread over a model's layers): up to
/// [`SAMPLED`] of them, evenly spaced, placed by their module's class, the first two places with
/// their share of the calls ("`Qwen2RMSNorm` modules (45% of the calls), `Qwen2RotaryEmbedding`
/// modules (30%)"); one instance is named as it is.
pub fn origins(trace: &Trace, refs: &[SliceRef]) -> Option<String> {
    if refs.is_empty() {
        return None;
    }
    let step = refs.len().div_ceil(SAMPLED);
    let mut placed: Vec<(Place, Place)> = Vec::new();
    for &r in refs.iter().step_by(step) {
        if let Some(p) = place(trace, r) {
            placed.push((p.family(), p));
        }
    }
    let sampled = refs.iter().step_by(step).count();
    let mut counts: Vec<(Place, usize, Place)> = Vec::new();
    for (family, p) in placed {
        match counts.iter_mut().find(|c| c.0 == family) {
            Some(c) => c.1 += 1,
            None => counts.push((family, 1, p)),
        }
    }
    counts.sort_by_key(|c| std::cmp::Reverse(c.1));
    let share = |n: usize| 100.0 * n as f64 / sampled as f64;
    let words = |(family, n, one): &(Place, usize, Place)| -> String {
        let what = match family {
            // Several instances of one class: the class.
            Place::Module(class) if *n > 1 && one != family => format!("`{class}` modules"),
            _ => one.words(),
        };
        format!("{what} ({:.0}% of the calls)", share(*n))
    };
    match counts.as_slice() {
        [] => None,
        [only] => Some(words(only)),
        [a, b, ..] => Some(format!("{}, {}", words(a), words(b))),
    }
}
