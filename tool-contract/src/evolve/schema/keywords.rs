//! Comparing the keywords of one schema: types, value sets, bounds, `multipleOf`, formats and
//! every other keyword the comparer knows.

use super::*;

impl<'a> Cx<'a, '_> {
    /// Compares `type`; returns whether the types no longer overlap (nothing else is compared).
    pub(super) fn compare_types(&mut self, o: &Norm<'a>, n: &Norm<'a>) -> bool {
        let here = n.view.ptr.clone();
        let (ot, nt) = (implied_types(o), implied_types(n));
        match (&ot, &nt) {
            (None, None) => false,
            (None, Some((t, ptr))) => {
                let what = format!("`type` restricted to {}", types_text(t));
                self.emit(ptr, ChangeKind::TypeNarrowed, Delta::Narrow, what);
                false
            }
            (Some((t, _)), None) => {
                let what = format!("`type` no longer restricted (was {})", types_text(t));
                self.emit(&here, ChangeKind::TypeWidened, Delta::Widen, what);
                false
            }
            (Some((a, _)), Some((b, ptr))) if a != b => {
                let what = format!("`type` changed from {} to {}", types_text(a), types_text(b));
                let old_in_new = a.iter().all(|t| covers(b, t));
                let new_in_old = b.iter().all(|t| covers(a, t));
                let overlap = a.iter().any(|t| covers(b, t)) || b.iter().any(|t| covers(a, t));
                if old_in_new {
                    self.emit(ptr, ChangeKind::TypeWidened, Delta::Widen, what);
                } else if new_in_old {
                    self.emit(ptr, ChangeKind::TypeNarrowed, Delta::Narrow, what);
                } else {
                    self.emit(ptr, ChangeKind::TypeChanged, Delta::Other, what);
                    return !overlap;
                }
                false
            }
            _ => false,
        }
    }

    pub(super) fn compare_values(&mut self, o: &Norm<'a>, n: &Norm<'a>) {
        let here = n.view.ptr.clone();
        match (&o.values, &n.values) {
            (None, None) => {}
            (None, Some((items, ptr))) => {
                let what = format!("values restricted to {}", values_text(items));
                self.emit(ptr, ChangeKind::ValuesRestricted, Delta::Narrow, what);
            }
            (Some((items, _)), None) => {
                let what = format!("values no longer restricted to {}", values_text(items));
                self.emit(&here, ChangeKind::ValuesUnrestricted, Delta::Widen, what);
            }
            (Some((old_items, _)), Some((new_items, new_ptr))) => {
                for item in new_items {
                    match old_items.iter().find(|o| o.key == item.key) {
                        None => {
                            let what = format!("value {} added", show(item.value));
                            self.emit(&item.ptr, ChangeKind::EnumValueAdded, Delta::Widen, what);
                        }
                        Some(old) => self.compare_value_docs(old, item),
                    }
                }
                for item in old_items {
                    if !new_items.iter().any(|n| n.key == item.key) {
                        let what = format!("value {} removed", show(item.value));
                        self.emit(new_ptr, ChangeKind::EnumValueRemoved, Delta::Narrow, what);
                    }
                }
            }
        }
    }

    /// The annotations of one value of a documented enum.
    pub(super) fn compare_value_docs(&mut self, old: &Item<'a>, new: &Item<'a>) {
        let empty = View {
            ptr: new.ptr.clone(),
            kws: Vec::new(),
        };
        let (ov, nv) = (
            old.branch.as_ref().unwrap_or(&empty),
            new.branch.as_ref().unwrap_or(&empty),
        );
        for key in ANNOTATIONS {
            let (a, b) = (ov.get(key), nv.get(key));
            if !same_opt(a.map(|n| n.value), b.map(|n| n.value)) {
                let ptr = b.map_or(new.ptr.as_str(), |n| n.ptr.as_str()).to_owned();
                let what = format!("`{key}` of value {} {}", show(new.value), verb(a, b));
                self.emit(&ptr, ChangeKind::AnnotationChanged, Delta::Annotation, what);
            }
        }
    }

    /// A keyword without subschemas.
    pub(super) fn compare_leaf(
        &mut self,
        key: &str,
        a: Option<&Node<'a>>,
        b: Option<&Node<'a>>,
        here: &str,
    ) {
        if same_opt(a.map(|n| n.value), b.map(|n| n.value)) {
            return;
        }
        let ptr = b.or(a).map_or(here, |n| n.ptr.as_str()).to_owned();
        let (av, bv) = (a.map(|n| n.value), b.map(|n| n.value));
        if ANNOTATIONS.contains(&key) {
            // Prose is long: name the keyword, not its text.
            let what = match (key, a, b) {
                ("description" | "title" | "$comment" | "examples", None, Some(_)) => {
                    format!("`{key}` added")
                }
                ("description" | "title" | "$comment" | "examples", Some(_), None) => {
                    format!("`{key}` removed")
                }
                ("description" | "title" | "$comment" | "examples", _, _) => {
                    format!("`{key}` changed")
                }
                _ => format!("`{key}` {}", verb(a, b)),
            };
            return self.emit(&ptr, ChangeKind::AnnotationChanged, Delta::Annotation, what);
        }
        if LOWER.contains(&key) || UPPER.contains(&key) {
            return self.compare_bound(key, av, bv, &ptr);
        }
        match key {
            "default" => {
                let what = match (av, bv) {
                    (Some(x), Some(y)) => {
                        format!("`default` changed from {} to {}", show(x), show(y))
                    }
                    (None, Some(y)) => format!("`default` {} added", show(y)),
                    (Some(x), _) => format!("`default` {} removed", show(x)),
                    (None, None) => unreachable!("the values differ"),
                };
                match self.dir {
                    Direction::Input => {
                        let reason =
                            format!("{what}: calls that leave it out now mean something else");
                        self.emit_reason(&ptr, ChangeKind::DefaultChanged, Delta::Other, reason);
                    }
                    Direction::Output => {
                        self.emit(&ptr, ChangeKind::DefaultChanged, Delta::Annotation, what)
                    }
                }
            }
            "multipleOf" => self.compare_multiple_of(av, bv, &ptr),
            "uniqueItems" => {
                let (x, y) = (truthy(av), truthy(bv));
                if x == y {
                    let what = format!(
                        "`uniqueItems` written as {}",
                        show(bv.unwrap_or(&Value::Null))
                    );
                    self.emit(&ptr, ChangeKind::Rewritten, Delta::Annotation, what);
                } else if y {
                    self.emit(
                        &ptr,
                        ChangeKind::BoundTightened,
                        Delta::Narrow,
                        "`uniqueItems` added",
                    );
                } else {
                    self.emit(
                        &ptr,
                        ChangeKind::BoundWidened,
                        Delta::Widen,
                        "`uniqueItems` removed",
                    );
                }
            }
            "pattern" => match (av, bv) {
                (None, Some(y)) => {
                    let what = format!("`pattern` {} added", show(y));
                    self.emit(&ptr, ChangeKind::PatternAdded, Delta::Narrow, what)
                }
                (Some(x), None) => {
                    let what = format!("`pattern` {} removed", show(x));
                    self.emit(&ptr, ChangeKind::PatternRemoved, Delta::Widen, what)
                }
                (Some(x), Some(y)) => {
                    let what = format!(
                        "`pattern` changed from {} to {} (which accepts more cannot be decided)",
                        show(x),
                        show(y)
                    );
                    self.emit(&ptr, ChangeKind::PatternChanged, Delta::Other, what)
                }
                (None, None) => {}
            },
            "format" | "contentEncoding" | "contentMediaType" => {
                self.compare_format(key, av, bv, &ptr)
            }
            "x-meaning" => {
                let what = match (av, bv) {
                    (Some(x), Some(y)) => {
                        format!("meaning changed from {} to {}", show(x), show(y))
                    }
                    (None, Some(y)) => format!("meaning {} flagged", show(y)),
                    (Some(x), _) => format!("meaning {} unflagged", show(x)),
                    (None, None) => unreachable!("the values differ"),
                };
                let reason = format!(
                    "{what} (`x-meaning`, set by hand): the same value now means something else"
                );
                self.emit_reason(&ptr, ChangeKind::MeaningChanged, Delta::Other, reason);
            }
            _ => {
                let what = format!("`{key}` {}", verb(a, b));
                self.emit(&ptr, ChangeKind::NotUnderstood, Delta::Unknown, what);
            }
        }
    }

    pub(super) fn compare_bound(
        &mut self,
        key: &str,
        a: Option<&Value>,
        b: Option<&Value>,
        ptr: &str,
    ) {
        let lower = LOWER.contains(&key);
        let (kind, delta, what) = match (a, b) {
            (None, Some(y)) => (
                ChangeKind::BoundTightened,
                Delta::Narrow,
                format!("`{key}` {} added", show(y)),
            ),
            (Some(x), None) => (
                ChangeKind::BoundWidened,
                Delta::Widen,
                format!("`{key}` {} removed", show(x)),
            ),
            (Some(x), Some(y)) => match num_cmp(x, y) {
                Some(Ordering::Equal) => (
                    ChangeKind::Rewritten,
                    Delta::Annotation,
                    format!("`{key}` written as {} instead of {}", show(y), show(x)),
                ),
                Some(order) => {
                    let raised = order == Ordering::Less;
                    let tighter = raised == lower;
                    let verb = if raised { "raised" } else { "lowered" };
                    let what = format!("`{key}` {verb} from {} to {}", show(x), show(y));
                    if tighter {
                        (ChangeKind::BoundTightened, Delta::Narrow, what)
                    } else {
                        (ChangeKind::BoundWidened, Delta::Widen, what)
                    }
                }
                None => (
                    ChangeKind::NotUnderstood,
                    Delta::Unknown,
                    format!("`{key}` changed from {} to {}", show(x), show(y)),
                ),
            },
            (None, None) => return,
        };
        self.emit(ptr, kind, delta, what);
    }

    pub(super) fn compare_multiple_of(&mut self, a: Option<&Value>, b: Option<&Value>, ptr: &str) {
        let (kind, delta, what) = match (a, b) {
            (None, Some(y)) => (
                ChangeKind::BoundTightened,
                Delta::Narrow,
                format!("`multipleOf` {} added", show(y)),
            ),
            (Some(x), None) => (
                ChangeKind::BoundWidened,
                Delta::Widen,
                format!("`multipleOf` {} removed", show(x)),
            ),
            (Some(x), Some(y)) => {
                let what = format!("`multipleOf` changed from {} to {}", show(x), show(y));
                match (x.as_f64(), y.as_f64()) {
                    (Some(fx), Some(fy)) if fx > 0.0 && fy > 0.0 => {
                        if is_multiple(fy, fx) {
                            (ChangeKind::BoundTightened, Delta::Narrow, what)
                        } else if is_multiple(fx, fy) {
                            (ChangeKind::BoundWidened, Delta::Widen, what)
                        } else {
                            (ChangeKind::BoundTightened, Delta::Other, what)
                        }
                    }
                    _ => (ChangeKind::NotUnderstood, Delta::Unknown, what),
                }
            }
            (None, None) => return,
        };
        self.emit(ptr, kind, delta, what);
    }

    pub(super) fn compare_format(
        &mut self,
        key: &str,
        a: Option<&Value>,
        b: Option<&Value>,
        ptr: &str,
    ) {
        // A Rust number format (`uint8`, `double`) is not part of a contract: schemas leave it
        // out, and one in a lock written before that is read as absent.
        let rust = |v: &&Value| {
            key == "format" && v.as_str().is_some_and(crate::schema::is_rust_number_format)
        };
        let (a, b) = (a.filter(|v| !rust(v)), b.filter(|v| !rust(v)));
        let (kind, delta, what) = match (a, b) {
            (None, Some(y)) => (
                ChangeKind::FormatAdded,
                Delta::Narrow,
                format!("`{key}` {} added", show(y)),
            ),
            (Some(x), None) => (
                ChangeKind::FormatRemoved,
                Delta::Widen,
                format!("`{key}` {} removed", show(x)),
            ),
            (Some(x), Some(y)) => {
                let what = format!("`{key}` changed from {} to {}", show(x), show(y));
                (ChangeKind::FormatChanged, Delta::Other, what)
            }
            (None, None) => return,
        };
        self.emit(ptr, kind, delta, what);
    }
}

pub(super) fn types_text(types: &[String]) -> String {
    match types {
        [] => "`null`".to_owned(),
        [one] => format!("`{one}`"),
        many => format!(
            "[{}]",
            many.iter()
                .map(|t| format!("`{t}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

pub(super) fn values_text(items: &[Item<'_>]) -> String {
    let shown: Vec<String> = items.iter().take(8).map(|i| show(i.value)).collect();
    let more = if items.len() > 8 { ", ..." } else { "" };
    format!("[{}{more}]", shown.join(", "))
}

/// An exact order of two JSON numbers (integers exactly, others as `f64`).
pub(super) fn num_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    let (Value::Number(x), Value::Number(y)) = (a, b) else {
        return None;
    };
    match (int(x), int(y)) {
        (Some(i), Some(j)) => Some(i.cmp(&j)),
        _ => x.as_f64()?.partial_cmp(&y.as_f64()?),
    }
}

pub(super) fn int(n: &Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

/// Whether `x` is a whole multiple of `y`.
pub(super) fn is_multiple(x: f64, y: f64) -> bool {
    let ratio = x / y;
    ratio.is_finite() && (ratio - ratio.round()).abs() < 1e-9
}
