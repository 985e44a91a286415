use super::*;

fn passing(name: &str) -> Trial {
    Trial::test(name.to_owned(), || Ok(Completion::Completed.into()))
}

fn names(selected: &Selected) -> Vec<String> {
    selected.names()
}

#[test]
fn the_filter_keeps_names_containing_it_or_exactly_it_and_counts_the_rest() {
    let trials =
        || ["a::packet::checksum", "a::packet::contract", "b::packet::checksum", "corpus::layout"].map(passing);
    let all = Selection::default().select(trials().into());
    assert_eq!((names(&all).len(), all.filtered_out, all.in_other_shards), (4, 0, 0));
    let part = Selection { filter: Some("checksum".into()), ..Selection::default() }.select(trials().into());
    assert_eq!(names(&part), ["a::packet::checksum", "b::packet::checksum"]);
    assert_eq!(part.filtered_out, 2);
    let exact = Selection { filter: Some("a::packet::checksum".into()), exact: true, ..Selection::default() };
    assert_eq!(names(&exact.select(trials().into())), ["a::packet::checksum"]);
    let nothing = Selection { filter: Some("checksum".into()), exact: true, ..Selection::default() };
    assert_eq!(nothing.select(trials().into()).filtered_out, 4);
}

#[test]
fn a_shard_is_taken_from_the_trials_the_filter_keeps() {
    let trials = || ["d::x", "c::x", "b::x", "a::x", "corpus::layout"].map(passing);
    let shard = |m| Selection {
        filter: Some("::x".into()),
        partition: Some(format!("count:{m}/2").parse().unwrap()),
        ..Selection::default()
    };
    let first = shard(1).select(trials().into());
    // count: deals the kept trials in name order (a, b, c, d): shard 1 takes a and c, in the order given.
    assert_eq!(names(&first), ["c::x", "a::x"]);
    assert_eq!((first.filtered_out, first.in_other_shards), (1, 2));
    assert_eq!(names(&shard(2).select(trials().into())), ["d::x", "b::x"]);
}

/// Every trial starts before it finishes, the run starts first and finishes last with
/// the counts; a panic is a failure with libtest's message and the others still run.
#[test]
fn a_run_reports_each_trial_and_a_panic_is_a_failed_trial() {
    for workers in [1, 3] {
        let trials: Vec<Trial> = (0..20)
            .map(|i| {
                let name = format!("t{i:02}");
                match i % 5 {
                    0 => Trial::test(name, move || panic!("boom {i}")),
                    1 => Trial::test(name, || Err("wrong".into())),
                    2 => Trial::ignored(name, "not applicable here"),
                    3 => Trial::test(name, || Ok(Completion::ignored_with("found it cannot apply").into())),
                    _ => passing(&name),
                }
            })
            .collect();
        let mut seen: Vec<String> = Vec::new();
        let summary = run_on(Selection::default().select(trials), workers, |event| {
            seen.push(match event {
                RunEvent::Listed(_) => "listed".into(),
                RunEvent::Started(names) => format!("started {}", names.len()),
                RunEvent::TrialStarted(name) => format!("> {name}"),
                RunEvent::TrialFinished(record) => format!("< {}", record.name),
                RunEvent::Finished(summary) => format!("finished {}", summary.records.len()),
            })
        });
        assert_eq!(seen.first().map(String::as_str), Some("started 20"));
        assert_eq!(seen.last().map(String::as_str), Some("finished 20"));
        for i in 0..20 {
            let start = seen.iter().position(|e| *e == format!("> t{i:02}")).unwrap();
            let end = seen.iter().position(|e| *e == format!("< t{i:02}")).unwrap();
            assert!(start < end, "{workers} workers: {seen:?}");
        }
        assert_eq!((summary.passed, summary.failed, summary.ignored), (4, 8, 8), "{workers} workers");
        let names: Vec<&str> = summary.records.iter().map(|r| r.name.as_str()).collect();
        assert!(names.is_sorted(), "{names:?}");
        assert_eq!(summary.records[0].failure.as_deref(), Some("test panicked: boom 0"));
        assert_eq!(summary.records[2].skipped.as_deref(), Some("not applicable here"));
        assert_eq!(summary.records[3].skipped.as_deref(), Some("found it cannot apply"));
    }
}
