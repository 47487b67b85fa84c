//! Games between players: each entrant's Weng-Lin rating and mean score,
//! and with two entrants their Elo against each other.

use skillratings::MultiTeamOutcome;
use skillratings::weng_lin::{WengLinConfig, WengLinRating, weng_lin_multi_team};

use super::arrays::array_of;
use super::entrant::{EloFigures, Point};
use super::state::Tally;
use crate::game::{GameRecord, SeatResult};

/// A seat of a game between players, as the tally counts it.
struct Seated<'r> {
    /// The entrant's position in the tally.
    entrant: usize,
    result: &'r SeatResult,
    /// Its place ([`GameRecord::places`]) and share of the win.
    place: u32,
    share: f64,
}

impl Tally {
    pub(super) fn count_table(&mut self, record: &GameRecord) {
        // The game's places decide wins and ratings: a judge's ranking
        // where it gives one, else the scores; a seat that never played
        // places last and wins nothing ([`GameRecord::places`]).
        let places = record.places();
        let shares = record.win_shares();
        let seats: Vec<Seated> = record
            .results
            .iter()
            .zip(places)
            .zip(shares)
            .filter_map(|((result, place), share)| {
                Some(Seated {
                    entrant: self.at(result.entrant.as_deref())?,
                    result,
                    place,
                    share,
                })
            })
            .collect();
        if seats.is_empty() {
            return;
        }
        let array = array_of(record);
        for seat in &seats {
            let (i, share) = (seat.entrant, seat.share);
            let score = seat.result.points().unwrap_or(0.0);
            let entrant = &mut self.entrants[i];
            entrant.row.games += 1;
            entrant.row.wins += share;
            entrant.row.count(seat.result);
            entrant.scores.add(score);
            if let Some(array) = &array {
                let tally = self.array_tally(array, i);
                tally.wins += share;
                tally.scores.add(score);
            }
        }
        self.rate(record.index, &seats);
        self.count_meetings(record);
    }

    /// Weng-Lin: rank 1 is the best place; equal places share a rank.
    fn rate(&mut self, index: u64, seats: &[Seated]) {
        let config = WengLinConfig::new();
        let teams: Vec<[WengLinRating; 1]> = seats
            .iter()
            .map(|s| [self.entrants[s.entrant].rating])
            .collect();
        let ranked: Vec<(&[WengLinRating], MultiTeamOutcome)> = seats
            .iter()
            .zip(&teams)
            .map(|(s, team)| {
                let rank = 1 + seats.iter().filter(|o| o.place < s.place).count();
                (&team[..], MultiTeamOutcome::new(rank))
            })
            .collect();
        for (s, new) in seats.iter().zip(weng_lin_multi_team(&ranked, &config)) {
            let r = new[0];
            self.entrants[s.entrant].rating = r;
            self.push_history(
                s.entrant,
                Point {
                    index,
                    value: r.rating,
                    low: r.rating - 2.0 * r.uncertainty,
                    high: r.rating + 2.0 * r.uncertainty,
                },
            );
        }
    }

    /// Each entrant's rating and mean score, and two entrants' Elo; the
    /// rows are ranked after.
    pub(super) fn finish_table(&mut self) {
        for entrant in self.entrants.iter_mut() {
            let (mean, half) = entrant.scores.mean_ci95();
            let (rating, row) = (entrant.rating, &mut entrant.row);
            row.mean_score = Some(mean);
            row.mean_score_ci = Some(half.unwrap_or(0.0));
            row.rating = Some(rating.rating);
            row.uncertainty = Some(rating.uncertainty);
            row.conservative = Some(rating.rating - 3.0 * rating.uncertainty);
        }
        if let Some((mut games, mut pairs)) = self.first_two()
            && let [first, second] = &mut self.entrants[..]
        {
            first.row.elo = EloFigures::of(&second.name, games, pairs);
            // The second's side: every count the other way round.
            games.reverse();
            pairs.reverse();
            second.row.elo = EloFigures::of(&first.name, games, pairs);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::stats::EloModel;
    use crate::tournament::standings::testing::{records, table_game};
    use crate::tournament::standings::{compute, csv, elo_line, table};
    use serde_json::{Value, json};

    #[test]
    fn chomp_ratings_favour_the_higher_scorer() {
        let names = vec!["x".to_string(), "y".to_string(), "z".to_string()];
        let values: Vec<Value> = (1..=10)
            .map(|i| {
                json!({"index": i, "results": [
                    {"entrant": "x", "score": 100, "status": "ok"},
                    {"entrant": "y", "score": 50, "status": "ok"},
                    {"entrant": "z", "score": 50, "status": "timeout", "phase": "clock"},
                ]})
            })
            .collect();
        let rows = compute(false, &names, &records(values));
        assert_eq!(rows[0].entrant, "x");
        assert_eq!(rows[0].wins, 10.0);
        assert!(rows[0].rating > rows[1].rating);
        // y and z always tie: the same rating.
        assert_eq!(rows[1].rating, rows[2].rating);
        assert_eq!(rows.iter().find(|r| r.entrant == "z").unwrap().timeouts, 10);
        assert!(csv(&rows).lines().count() == 4);
    }

    #[test]
    fn two_entrants_elo_from_judged_pairs_only() {
        let names: Vec<String> = ["a", "b"].map(String::from).to_vec();
        // Ranks of a and b per game: 1-2 a wins both, 3-4 a wins and
        // draws, 5 a loses and 6 is void (its pair incomplete).
        let games = [(1, 2), (1, 2), (1, 2), (1, 1), (2, 1), (1, 2)];
        let mut values: Vec<Value> = games
            .iter()
            .enumerate()
            .map(|(i, &(ra, rb))| {
                let index = i + 1;
                // Seats swap from game to game, as two entrants' do.
                let mut seats = vec![
                    json!({"entrant": "a", "rank": ra, "status": "ok"}),
                    json!({"entrant": "b", "rank": rb, "status": "ok"}),
                ];
                if index % 2 == 0 {
                    seats.reverse();
                }
                json!({"index": index, "results": seats})
            })
            .collect();
        values[5]["judge_error"] = json!({"message": "judge died"});
        let rows = compute(false, &names, &records(values));
        let row = |name: &str| rows.iter().find(|r| r.entrant == name).unwrap();
        let a = row("a").elo.as_ref().unwrap();
        assert_eq!(a.elo_model, EloModel::Pentanomial);
        assert_eq!((a.elo_wins, a.elo_draws, a.elo_losses), (3, 1, 1));
        assert_eq!(a.elo_pentanomial, [0, 0, 0, 1, 1]);
        let b = row("b").elo.as_ref().unwrap();
        assert_eq!(b.elo_pentanomial, [1, 1, 0, 0, 0]);
        assert_eq!(b.elo_vs, "a");
        assert!((a.elo + b.elo).abs() < 1e-9 && (a.elo_low + b.elo_high).abs() < 1e-9);
        let line = elo_line(false, &rows).unwrap();
        assert!(line.contains("from 2 game pairs"), "{line}");
        assert!(line.contains("1 unpaired game left out"), "{line}");
        assert!(table(false, &rows).contains(" Elo |"));
        // The table's line and CSV's columns follow the rows.
        assert!(csv(&rows).lines().all(|l| l.split(',').count() == 35));
    }

    #[test]
    fn games_of_more_seats_than_the_two_entrants_give_no_elo() {
        let names: Vec<String> = ["e0", "e1"].map(String::from).to_vec();
        // One entrant twice at the table: not a game of the two alone.
        let mut game = table_game(1, &[3, 2, 1]);
        game.results[2].entrant = Some("e0".into());
        let rows = compute(false, &names, &[game]);
        assert!(rows.iter().all(|r| r.elo.is_none()));
        assert_eq!(
            elo_line(false, &rows).as_deref(),
            Some("Elo: none yet, no game of the two alone against each other")
        );
        assert!(!table(false, &rows).contains(" Elo |"));
        // One-player games and three entrants: no Elo, and no line.
        assert_eq!(elo_line(true, &rows), None);
        let three = compute(
            false,
            &["e0", "e1", "e2"].map(String::from),
            &[table_game(1, &[1, 2, 3])],
        );
        assert_eq!(elo_line(false, &three), None);
    }
}
