//! What a league's database gives outside the league: `referee league
//! export DB OUT` (a tournament's `--out`) and `referee league show DB`
//! (the standings in the terminal), both read beside a running league.

use std::io::Write;
use std::path::Path;

use super::db::{Db, Meta};
use super::{Failed, Version, usage};
use crate::exit::Status;
use crate::tournament::standings::{self, Tally};

/// `referee league export DB OUT`: the league's games as a tournament's
/// `--out`, each version an entrant `name@vN`, for `report` and `replay`.
pub fn export(db: &Path, out: &Path) -> Status {
    match export_inner(db, out) {
        Ok(games) => {
            println!(
                "exported {games} game{} to {}",
                if games == 1 { "" } else { "s" },
                out.display()
            );
            Status::Pass
        }
        Err((status, message)) => {
            eprintln!("referee league export: {message}");
            status
        }
    }
}

fn export_inner(path: &Path, out: &Path) -> Result<u64, Failed> {
    let (db, meta) = open(path)?;
    let game: crate::game::GameRef = serde_json::from_str(&meta.game)
        .map_err(|e| usage(format!("{}: its game {:?}: {e}", path.display(), meta.game)))?;
    std::fs::create_dir_all(out).map_err(|e| (Status::Io, format!("{}: {e}", out.display())))?;
    let entrants: Vec<String> = db
        .versions()
        .map_err(usage)?
        .into_iter()
        .map(|v| Version::name(&v.entrant, v.version))
        .collect();
    let records = out.join("records.jsonl");
    let mut file = crate::record::NewFile::create(&records)
        .map_err(|e| (Status::Io, format!("{}: {e}", records.display())))?;
    let mut games = 0u64;
    let mut failed = None;
    let mut tally = Tally::new(meta.solo, &entrants, None, None);
    db.each_game(|record| {
        games += 1;
        if failed.is_none()
            && let Err(e) = serde_json::to_writer(&mut file, &record)
                .map_err(std::io::Error::from)
                .and_then(|()| file.write_all(b"\n"))
        {
            failed = Some(e);
        }
        tally.add(record);
    })
    .map_err(usage)?;
    if let Some(e) = failed {
        return Err((Status::Io, format!("{}: {e}", records.display())));
    }
    file.commit()
        .map_err(|e| (Status::Io, format!("{}: {e}", records.display())))?;
    let info = crate::tournament::RunInfo {
        game,
        solo: meta.solo,
        fingerprint: format!("league {}", path.display()),
        seed: meta.seed,
        games,
        entrants,
        shard: None,
        gauntlet: None,
    };
    let run = out.join("run.json");
    let text = serde_json::to_string_pretty(&info).unwrap_or_default();
    std::fs::write(&run, text + "\n")
        .map_err(|e| (Status::Io, format!("{}: {e}", run.display())))?;
    crate::tournament::write_standings(&tally, &tally.rows(), out).map_err(|e| (Status::Io, e))?;
    crate::tournament::report::regenerate(out, None).map_err(|e| (Status::Io, e))?;
    Ok(games)
}

fn open(path: &Path) -> Result<(Db, Meta), Failed> {
    let db = Db::read(path).map_err(usage)?;
    let meta = db
        .meta()
        .map_err(usage)?
        .ok_or_else(|| usage(format!("{}: no league in it", path.display())))?;
    Ok((db, meta))
}

/// `referee league show DB [--all]`: the standings of the entrants'
/// current versions (every version with `all`), as a tournament prints
/// them, from the database alone.
pub fn show(path: &Path, all: bool) -> Status {
    match show_inner(path, all) {
        Ok(text) => {
            println!("{text}");
            Status::Pass
        }
        Err((status, message)) => {
            eprintln!("referee league show: {message}");
            status
        }
    }
}

fn show_inner(path: &Path, all: bool) -> Result<String, Failed> {
    let (db, meta) = open(path)?;
    let versions = db.versions().map_err(usage)?;
    let names: Vec<String> = versions
        .iter()
        .map(|v| Version::name(&v.entrant, v.version))
        .collect();
    // Each entrant still in the league plays its last version that built.
    let current: Vec<String> = versions
        .iter()
        .filter(|v| v.build_ok && !v.retired)
        .filter(|v| {
            !versions
                .iter()
                .any(|w| w.entrant == v.entrant && w.build_ok && w.version > v.version)
        })
        .map(|v| Version::name(&v.entrant, v.version))
        .collect();
    let mut tally = Tally::new(meta.solo, &names, None, None);
    let mut games = 0u64;
    db.each_game(|record| {
        games += 1;
        tally.add(record);
    })
    .map_err(usage)?;
    let rows: Vec<standings::Row> = tally
        .rows()
        .into_iter()
        .filter(|r| all || current.contains(&r.entrant))
        .enumerate()
        .map(|(i, row)| standings::Row { rank: i + 1, ..row })
        .collect();
    Ok(format!(
        "standings after {games} game{} ({}):\n{}",
        if games == 1 { "" } else { "s" },
        if all {
            "every version"
        } else {
            "current versions"
        },
        standings::table(meta.solo, &rows)
    ))
}
