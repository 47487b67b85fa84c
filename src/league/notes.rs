//! What a league's live workers said of themselves (see
//! [`super::db::WorkerNote`]), as `league show` and the live page tell
//! it: each worker's void games, and the versions that no live worker can
//! play on its machine, which an organiser who cannot log into the
//! workers' machines learns of here and nowhere else.

use std::time::Duration;

use super::Version;
use super::db::{VersionRow, WorkerNote};
use crate::text;

/// A worker is live while it was seen this recently (it is seen every
/// third of its lease).
pub const WORKER_SEEN: Duration = Duration::from_secs(30);

/// A version that every live worker declines: its name, and each
/// worker's reason.
#[derive(Debug, PartialEq, serde::Serialize)]
pub struct Unplayable {
    pub version: String,
    pub declined: Vec<(String, String)>,
}

/// The versions of `versions` that every one of the live workers `notes`
/// declines (none when no worker is live).
pub fn unplayable(notes: &[WorkerNote], versions: &[VersionRow]) -> Vec<Unplayable> {
    let ids = unplayable_ids(notes);
    versions
        .iter()
        .filter(|v| ids.contains(&v.id))
        .map(|v| Unplayable {
            version: Version::name(&v.entrant, v.version),
            declined: notes
                .iter()
                .filter_map(|n| {
                    let why = n.declined.iter().find(|(id, _)| *id == v.id)?;
                    Some((n.name.clone(), why.1.clone()))
                })
                .collect(),
        })
        .collect()
}

/// The ids of the versions every one of the live workers `notes`
/// declines (none when no worker is live).
pub fn unplayable_ids(notes: &[WorkerNote]) -> std::collections::HashSet<i64> {
    let Some((first, rest)) = notes.split_first() else {
        return Default::default();
    };
    first
        .declined
        .iter()
        .map(|(id, _)| *id)
        .filter(|id| rest.iter().all(|n| n.declined.iter().any(|(d, _)| d == id)))
        .collect()
}

/// What `league show` says of the live workers, if any is live.
pub fn text(notes: &[WorkerNote], versions: &[VersionRow]) -> Option<String> {
    if notes.is_empty() {
        return None;
    }
    let mut out = format!(
        "\nworkers (seen in the last {}):",
        humantime::format_duration(WORKER_SEEN)
    );
    for n in notes {
        out.push_str(&format!(
            "\n  {}: {} job{}",
            text::terminal(&n.name),
            n.jobs,
            if n.jobs == 1 { "" } else { "s" }
        ));
        if n.void_games > 0 {
            out.push_str(&format!(
                ", {} game{} void for its own failures (the last: {})",
                n.void_games,
                if n.void_games == 1 { "" } else { "s" },
                text::terminal(n.last_void.as_deref().unwrap_or("?"))
            ));
        }
        if !n.declined.is_empty() {
            out.push_str(&format!(
                ", cannot play {} version{} on its machine",
                n.declined.len(),
                if n.declined.len() == 1 { "" } else { "s" }
            ));
        }
    }
    let unplayable = unplayable(notes, versions);
    if !unplayable.is_empty() {
        out.push_str(
            "\nno live worker can play (their tables wait; the league's own jobs, if it has \
             any, still play them):",
        );
        for u in &unplayable {
            out.push_str(&format!("\n  {}:", text::terminal(&u.version)));
            for (worker, why) in &u.declined {
                out.push_str(&format!(
                    "\n    {}: {}",
                    text::terminal(worker),
                    text::terminal(why)
                ));
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(id: i64, entrant: &str) -> VersionRow {
        VersionRow {
            id,
            entrant: entrant.into(),
            version: 1,
            fingerprint: String::new(),
            products: vec![],
            built: String::new(),
            build_ok: true,
            build_log: None,
            retired: false,
            player: None,
        }
    }

    fn note(name: &str, declined: &[(i64, &str)]) -> WorkerNote {
        WorkerNote {
            name: name.into(),
            jobs: 1,
            void_games: 0,
            last_void: None,
            declined: declined.iter().map(|(i, w)| (*i, w.to_string())).collect(),
        }
    }

    #[test]
    fn a_version_is_unplayable_when_every_live_worker_declines_it() {
        let versions = [version(1, "ann"), version(2, "bob")];
        let notes = [
            note("w1", &[(2, "no copy")]),
            note("w2", &[(2, "no python")]),
        ];
        assert_eq!(
            unplayable(&notes, &versions),
            [Unplayable {
                version: "bob@v1".into(),
                declined: vec![
                    ("w1".into(), "no copy".into()),
                    ("w2".into(), "no python".into())
                ],
            }]
        );
        let one_plays = [note("w1", &[(2, "no copy")]), note("w2", &[])];
        assert!(unplayable(&one_plays, &versions).is_empty());
        assert!(unplayable(&[], &versions).is_empty());
        let shown = text(&notes, &versions).unwrap();
        assert!(shown.contains("no live worker can play"), "{shown}");
        assert!(shown.contains("w2: no python"), "{shown}");
    }
}
