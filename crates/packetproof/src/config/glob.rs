//! The globs `[exporter] files` may use, over `/`-separated paths: `*` and `?`
//! within one path segment, `**` for any number of segments. A pattern without a
//! wildcard names one file, or (ending in `/`) everything under a folder.

/// Whether `path` (relative, `/`-separated) is one `pattern` names.
pub(crate) fn matches(pattern: &str, path: &str) -> bool {
    if let Some(folder) = pattern.strip_suffix('/') {
        return path.starts_with(&format!("{folder}/"));
    }
    let pattern: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty() && *s != ".").collect();
    let path: Vec<&str> = path.split('/').collect();
    segments(&pattern, &path)
}

fn segments(pattern: &[&str], path: &[&str]) -> bool {
    match pattern.split_first() {
        None => path.is_empty(),
        Some((&"**", rest)) => (0..=path.len()).any(|skip| segments(rest, &path[skip..])),
        Some((first, rest)) => {
            path.split_first().is_some_and(|(name, more)| segment(first, name) && segments(rest, more))
        }
    }
}

/// One segment: `*` any run of characters, `?` one character.
fn segment(pattern: &str, name: &str) -> bool {
    let (pattern, name): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // Classic two-pointer wildcard matching: the last `*` seen absorbs what does not match.
    let (mut p, mut n, mut star, mut mark) = (0, 0, None, 0);
    while n < name.len() {
        if p < pattern.len() && (pattern[p] == '?' || pattern[p] == name[n]) {
            (p, n) = (p + 1, n + 1);
        } else if p < pattern.len() && pattern[p] == '*' {
            (star, mark, p) = (Some(p), n, p + 1);
        } else if let Some(s) = star {
            (p, mark, n) = (s + 1, mark + 1, mark + 1);
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn globs_match_segments_and_any_depth() {
        assert!(matches("app/prompts.py", "app/prompts.py"));
        assert!(!matches("app/prompts.py", "app/prompts.pyc"));
        assert!(matches("app/*.py", "app/model.py") && !matches("app/*.py", "app/sub/model.py"));
        assert!(matches("samples/**/*.json", "samples/a/b/c.json") && matches("samples/**/*.json", "samples/c.json"));
        assert!(matches("samples/**", "samples/a/b") && !matches("samples/**", "other/a"));
        assert!(matches("samples/", "samples/x.json") && !matches("samples/", "samplesx/x.json"));
        assert!(matches("./app/?.py", "app/a.py") && !matches("app/?.py", "app/ab.py"));
        assert!(matches("a*b*c", "abxbc") && !matches("a*b*c", "abxb"));
    }
}
