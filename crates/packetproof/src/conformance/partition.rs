//! Sharding the gate across CI machines, with `cargo nextest run --partition`'s
//! syntax and meaning: `count:M/N` deals the trials round-robin by their index in
//! name order (shard M takes indexes M-1, M-1+N, …), `hash:M/N` puts a trial in
//! shard `hash(name) mod N + 1`. M counts from 1.
//!
//! Corpus-wide trials (`corpus::…`) are trials like the others and follow the same
//! rule, so every trial runs in exactly one shard. The hash is a fixed one (the
//! first 8 bytes of the name's SHA-256), not std's randomly seeded hasher: a trial
//! stays in its shard on every machine and in every run, whatever the order of
//! discovery. (nextest uses xxHash64; its shard numbers do not carry over anyway,
//! since its test names are not ours.)

use sha2::{Digest, Sha256};
use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Strategy {
    Count,
    Hash,
}

/// One shard of N: `count:M/N` or `hash:M/N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partition {
    pub(crate) strategy: Strategy,
    /// 1-based.
    pub(crate) shard: u64,
    pub(crate) total: u64,
}

impl FromStr for Partition {
    type Err = String;

    fn from_str(text: &str) -> Result<Partition, String> {
        let (strategy, rest) = if let Some(rest) = text.strip_prefix("hash:") {
            (Strategy::Hash, rest)
        } else if let Some(rest) = text.strip_prefix("count:") {
            (Strategy::Count, rest)
        } else {
            return Err(format!("{text:?} must begin with \"hash:\" or \"count:\" (as in hash:1/3)"));
        };
        let Some((shard, total)) = rest.split_once('/') else {
            return Err(format!("{text:?}: expected M/N after the colon (shard M of N, as in count:1/3)"));
        };
        let number = |what: &str, digits: &str| {
            digits.parse::<u64>().map_err(|e| format!("{text:?}: {what} {digits:?} is not a whole number ({e})"))
        };
        let (shard, total) = (number("shard", shard)?, number("shard count", total)?);
        if !(1..=total).contains(&shard) {
            return Err(format!("{text:?}: shard {shard} must be between 1 and the shard count {total}, inclusive"));
        }
        Ok(Partition { strategy, shard, total })
    }
}

impl fmt::Display for Partition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let strategy = match self.strategy {
            Strategy::Count => "count",
            Strategy::Hash => "hash",
        };
        write!(f, "{strategy}:{}/{}", self.shard, self.total)
    }
}

impl Partition {
    /// Whether the trial called `name`, at `index` in name order, belongs to this shard.
    pub(crate) fn contains(&self, name: &str, index: usize) -> bool {
        let slot = match self.strategy {
            Strategy::Count => index as u64,
            Strategy::Hash => stable_hash(name),
        };
        slot % self.total == self.shard - 1
    }

    /// The names of `names` (in any order) that belong to this shard, in name order.
    pub fn select<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
        let mut sorted: Vec<&str> = names.into_iter().collect();
        sorted.sort_unstable();
        sorted.into_iter().enumerate().filter(|(index, name)| self.contains(name, *index)).map(|(_, n)| n).collect()
    }
}

fn stable_hash(name: &str) -> u64 {
    let digest = Sha256::digest(name.as_bytes());
    u64::from_be_bytes(digest[..8].try_into().expect("a SHA-256 digest has 32 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_nextest_syntax_and_refuses_the_rest() {
        let hash = "hash:2/3".parse::<Partition>().unwrap();
        assert_eq!(hash, Partition { strategy: Strategy::Hash, shard: 2, total: 3 });
        assert_eq!(hash.to_string(), "hash:2/3");
        assert_eq!("count:1/1".parse::<Partition>().unwrap().strategy, Strategy::Count);
        for bad in [
            "foo",
            "hash",
            "hash:",
            "hash:1",
            "hash:1/",
            "hash:0/2",
            "hash:3/2",
            "hash:m/2",
            "hash:1/n",
            "hash:1/2/3",
            "count:1/0",
            "slice:1/2",
        ] {
            assert!(bad.parse::<Partition>().is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn shards_are_disjoint_cover_everything_and_ignore_the_order() {
        let names: Vec<String> = (0..50).map(|i| format!("case-{i}::packet::check-{}", i % 7)).collect();
        for strategy in ["count", "hash"] {
            let mut seen: Vec<&str> = Vec::new();
            for shard in 1..=4 {
                let partition: Partition = format!("{strategy}:{shard}/4").parse().unwrap();
                let forward = partition.select(names.iter().map(String::as_str));
                let backward = partition.select(names.iter().rev().map(String::as_str));
                assert_eq!(forward, backward, "{partition}: the order of discovery changed the shard");
                seen.extend(forward);
            }
            seen.sort_unstable();
            let mut all: Vec<&str> = names.iter().map(String::as_str).collect();
            all.sort_unstable();
            assert_eq!(seen, all, "{strategy}: shards overlap or miss a trial");
        }
    }

    /// The hash is fixed: this value must never change between runs or machines.
    #[test]
    fn the_hash_is_stable() {
        assert_eq!(stable_hash("abc"), 0xba78_16bf_8f01_cfea);
    }
}
