//! The values a prompt branch is made of, as types: insertion mode, source scope,
//! evidence mode, neighbours, and the vendor whose API a provider speaks. Each set
//! is defined here once; every reader parses with [`parse`](InsertionMode::parse)
//! (an unknown value is an error, never a default) and every writer spells a value
//! with `name()` or serde, which give the same JSON names (the contract's, byte for byte).
//!
//! The names come from strum (kebab-case of the variant) for `Display`, `FromStr`
//! and the `ALL`/`NAMES` lists, and from serde's identical `rename_all` for JSON.

use serde::{Deserialize, Serialize};
use std::fmt;
use strum::{Display, EnumString, IntoStaticStr, VariantArray, VariantNames};

/// A name outside a value set: what was found, what the set is called and what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UnknownValue {
    pub(crate) kind: &'static str,
    pub(crate) found: String,
    pub(crate) expected: &'static [&'static str],
}

impl fmt::Display for UnknownValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown {} {:?}: expected one of {:?}", self.kind, self.found, self.expected)
    }
}

impl std::error::Error for UnknownValue {}

/// One value set: the enum (its JSON names in kebab-case, from strum and serde alike),
/// and `ALL`, `NAMES`, `name()` and `parse()` (strum derives the pieces).
macro_rules! value_set {
    ($(#[$doc:meta])* $type:ident ($kind:literal) { $($variant:ident),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
        #[derive(Display, EnumString, IntoStaticStr, VariantArray, VariantNames)]
        #[serde(rename_all = "kebab-case")]
        #[strum(serialize_all = "kebab-case")]
        pub enum $type {
            $($variant),+
        }

        impl $type {
            /// Every value, in the contract's order.
            #[cfg(test)]
            pub(crate) const ALL: &'static [$type] = <$type as VariantArray>::VARIANTS;
            /// Every value's JSON name, in the same order.
            pub(crate) const NAMES: &'static [&'static str] = <$type as VariantNames>::VARIANTS;

            /// The JSON name of the value.
            pub fn name(self) -> &'static str {
                self.into()
            }

            /// The value `text` names; anything else is an error that lists the set.
            pub(crate) fn parse(text: &str) -> Result<$type, UnknownValue> {
                text.parse().map_err(|_| UnknownValue { kind: $kind, found: text.to_owned(), expected: Self::NAMES })
            }
        }
    };
}

value_set! {
    /// `resolvedBranch.insertionMode` (and the compile input's `insertionMode`).
    InsertionMode ("insertion mode") {
        Staged,
        Immediate,
    }
}

value_set! {
    /// `resolvedBranch.sourceScope` (the compile input's `source.scope`).
    SourceScope ("source scope") {
        Project,
        System,
    }
}

impl SourceScope {
    /// The other scope (for edits that must change the branch).
    pub(crate) fn other(self) -> SourceScope {
        match self {
            SourceScope::Project => SourceScope::System,
            SourceScope::System => SourceScope::Project,
        }
    }
}

value_set! {
    /// `resolvedBranch.evidenceMode`, and the mode a compile input requests.
    EvidenceMode ("evidence mode") {
        StrategyDefault,
        SelectedOnly,
        NoEvidence,
    }
}

impl EvidenceMode {
    /// Whether a request for `self` can resolve to `resolved`: to itself, or
    /// strategy-default to no-evidence when nothing is accessible.
    pub(crate) fn can_resolve_to(self, resolved: EvidenceMode) -> bool {
        self == resolved || (self == EvidenceMode::StrategyDefault && resolved == EvidenceMode::NoEvidence)
    }
}

value_set! {
    /// `resolvedBranch.neighbours`: which of the target's neighbours are present.
    Neighbours ("neighbours value") {
        Both,
        PredecessorOnly,
        SuccessorOnly,
        None,
    }
}

impl Neighbours {
    /// The value for a target with (or without) a predecessor and a successor.
    pub(crate) fn of(predecessor: bool, successor: bool) -> Neighbours {
        match (predecessor, successor) {
            (true, true) => Neighbours::Both,
            (true, false) => Neighbours::PredecessorOnly,
            (false, true) => Neighbours::SuccessorOnly,
            (false, false) => Neighbours::None,
        }
    }

    pub(crate) fn has_predecessor(self) -> bool {
        matches!(self, Neighbours::Both | Neighbours::PredecessorOnly)
    }

    pub(crate) fn has_successor(self) -> bool {
        matches!(self, Neighbours::Both | Neighbours::SuccessorOnly)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each set's names round-trip through parse, Display and serde alike, and
    /// parsing refuses a name outside the set (also one that differs only in case).
    fn round_trips<T>(all: &[T], names: &[&str], parse: fn(&str) -> Result<T, UnknownValue>, unknown: &str)
    where
        T: Copy + PartialEq + fmt::Debug + fmt::Display + Serialize + for<'de> Deserialize<'de>,
    {
        assert_eq!(all.len(), names.len());
        for (value, name) in all.iter().zip(names) {
            assert_eq!(parse(name), Ok(*value));
            assert_eq!(value.to_string(), *name);
            assert_eq!(serde_json::to_value(value).unwrap(), serde_json::json!(name));
            assert_eq!(serde_json::from_value::<T>(serde_json::json!(name)).unwrap(), *value);
        }
        for bad in [unknown, &names[0].to_uppercase(), ""] {
            let err = parse(bad).unwrap_err();
            assert_eq!((err.found.as_str(), err.expected), (bad, names));
            assert!(serde_json::from_value::<T>(serde_json::json!(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn insertion_mode_parses_its_names_and_rejects_others() {
        round_trips(InsertionMode::ALL, &["staged", "immediate"], InsertionMode::parse, "deferred");
    }

    #[test]
    fn source_scope_parses_its_names_and_rejects_others() {
        round_trips(SourceScope::ALL, &["project", "system"], SourceScope::parse, "global");
        assert_eq!(SourceScope::Project.other(), SourceScope::System);
    }

    #[test]
    fn evidence_mode_parses_its_names_and_rejects_others() {
        let names = ["strategy-default", "selected-only", "no-evidence"];
        round_trips(EvidenceMode::ALL, &names, EvidenceMode::parse, "selected_only");
        assert!(EvidenceMode::StrategyDefault.can_resolve_to(EvidenceMode::NoEvidence));
        assert!(!EvidenceMode::SelectedOnly.can_resolve_to(EvidenceMode::NoEvidence));
    }

    #[test]
    fn neighbours_parse_their_names_and_reject_others() {
        let names = ["both", "predecessor-only", "successor-only", "none"];
        round_trips(Neighbours::ALL, &names, Neighbours::parse, "neither");
        for value in Neighbours::ALL {
            assert_eq!(Neighbours::of(value.has_predecessor(), value.has_successor()), *value);
        }
    }
}
