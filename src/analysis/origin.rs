//! Where a slice comes from, in words a finding can quote: the `nn.Module` frame holding it
//! (`with_modules`, or `with_stack`'s module frames), else the `record_function` range, else the
//! Python frame. A finding that names operators says where they run with it, so that its advice
//! fits the place (a forward module, a loss, an optimizer) rather than a guess.

use crate::model::category::Kind;
use crate::model::{SliceRef, Trace};

/// Where a slice comes from: the innermost `nn.Module` frame, else label, else Python frame
/// holding it on its thread (a bounded look back, as each is read once per finding).
pub fn origin(trace: &Trace, r: SliceRef) -> Option<String> {
    let l = trace.lanes.get(r.lane as usize)?;
    let s = &l.slices;
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
        if module.is_none() && name.starts_with("nn.Module: ") {
            module = Some(format!("the module `{}`", &name["nn.Module: ".len()..]));
        } else if label.is_none() && Kind::of_cat(cat) == Kind::Annotation {
            label = Some(format!("the range `{name}`"));
        } else if frame.is_none() && Kind::of_cat(cat) == Kind::Python {
            frame = Some(format!("the Python frame `{name}`"));
        }
    }
    module.or(label).or(frame)
}
