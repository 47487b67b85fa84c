//! How often is a random Aces Up deck won within its 52 rotations?
//!
//! ```text
//! cargo run --release --example acesup-odds -- [DECKS] [SEED]
//! ```
//!
//! Plays DECKS (default 1,000,000) random decks through the rules engine,
//! exactly as `referee acesup --random DECKS --seed SEED` would generate
//! them, and prints the share won (with Wilson's 95% interval), won on the
//! first game, and won perfectly, with the time it took. With `--find`, it
//! prints instead the first deck of each kind (for `tournaments/acesup`).

use std::time::Instant;

use referee::games::acesup::{deck, engine};
use referee::stats::wilson95;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let find = args.iter().any(|a| a == "--find");
    let numbers: Vec<u64> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let decks = numbers.first().copied().unwrap_or(1_000_000);
    let seed = numbers.get(1).copied().unwrap_or(2010);
    if find {
        return find_examples(seed);
    }
    let started = Instant::now();
    let (mut won, mut first, mut perfect, mut games) = (0u64, 0u64, 0u64, 0u64);
    for i in 0..decks {
        let played = engine::play_rotations(&deck::random_deck(seed, i));
        games += played.len() as u64;
        let last = played.last().expect("at least one game");
        won += u64::from(last.won);
        first += u64::from(played.len() == 1 && last.won);
        perfect += u64::from(last.perfect);
    }
    let elapsed = started.elapsed();
    let share = |n: u64| {
        let (lo, hi) = wilson95(n, decks);
        format!(
            "{n} ({:.4}%, 95% CI {:.4}%-{:.4}%)",
            100.0 * n as f64 / decks as f64,
            100.0 * lo,
            100.0 * hi
        )
    };
    println!("{decks} random decks, seed {seed}");
    println!("won within 52 rotations: {}", share(won));
    println!("won on the first game:   {}", share(first));
    println!("won perfectly:           {}", share(perfect));
    println!(
        "{games} games in {:.2?}: {:.0} games/s",
        elapsed,
        games as f64 / elapsed.as_secs_f64()
    );
}

/// Whether a deck's games are of a wanted kind.
type Kind = fn(&[engine::Game]) -> bool;

/// The first random deck of each kind the tournament files show.
fn find_examples(seed: u64) {
    let kinds: [(&str, Kind); 3] = [
        ("won on the first game, not perfect", |g| {
            g.len() == 1 && g[0].won && !g[0].perfect
        }),
        ("a perfect first game", |g| g.len() == 1 && g[0].perfect),
        ("won only after rotations", |g| {
            g.len() > 1 && g.last().is_some_and(|l| l.won)
        }),
    ];
    for (name, wanted) in kinds {
        let index = (0..)
            .find(|&i| wanted(&engine::play_rotations(&deck::random_deck(seed, i))))
            .unwrap();
        let d = deck::random_deck(seed, index);
        let games = engine::play_rotations(&d);
        println!(
            "# {name}: seed {seed}, deck {index}, {} game(s)",
            games.len()
        );
        print!("{}", deck::input_text(&d));
    }
}
