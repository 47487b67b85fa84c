//! The reference player's strategy: cover with the smallest card that
//! covers; when nothing covers, give up the smallest card.
//!
//! Why this never loses a winnable hand, whatever order the cards come in:
//! suppose the remaining hand `H` can cover the remaining dealt cards `D`,
//! i.e. there is a matching `M` giving each `d` in `D` its own `M(d) >= d`.
//! The next card `d` arrives and we play `h*`, the smallest card `>= d`
//! (one exists, since `M(d) >= d`). If `M(d) = h*` the rest of `M` still
//! works. Otherwise `h* <= M(d)`; if `h*` is unused by `M`, give `d` to `h*`
//! instead; if `M(d') = h*` for another `d'`, swap: `d -> h*` and
//! `d' -> M(d)`, which is fine because `d' <= h* <= M(d)`. Either way
//! `H - {h*}` still covers `D - {d}`, so by induction every card gets
//! covered. The rule needs no look-ahead, so it works for any deal order;
//! `docs/evensteven.md` has the longer version.

use super::cards::Card;

/// Index into `hand` of the card to play on `dealt`, or `None` for an empty
/// hand. Among cards of equal value the earliest in `hand` is chosen, so the
/// choice is deterministic.
pub fn choose(hand: &[Card], dealt: Card) -> Option<usize> {
    let smallest_cover = hand
        .iter()
        .enumerate()
        .filter(|(_, c)| c.covers(dealt))
        .min_by_key(|(i, c)| (c.value(), *i));
    let smallest = || hand.iter().enumerate().min_by_key(|(i, c)| (c.value(), *i));
    smallest_cover.or_else(smallest).map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::super::deal::{Deal, MAX_HAND, winnable};
    use super::*;
    use crate::games::evensteven::cards::cards;

    /// Plays `to_cover` in order with `choose`; true when every card is covered.
    fn plays_out(mut hand: Vec<Card>, to_cover: &[Card]) -> bool {
        to_cover.iter().all(|&dealt| {
            let i = choose(&hand, dealt).unwrap();
            hand.remove(i).covers(dealt)
        })
    }

    #[test]
    fn statement_sample_plays() {
        let mut hand = cards("4h 2d Qs Jc");
        let mut played = vec![];
        for dealt in cards("8c Qc 9s") {
            played.push(hand.remove(choose(&hand, dealt).unwrap()));
        }
        assert_eq!(played, cards("Jc Qs 2d"));

        let mut hand = cards("Kd 8c As 5s");
        let mut played = vec![];
        for dealt in cards("3s 6h Kh 5c") {
            played.push(hand.remove(choose(&hand, dealt).unwrap()));
        }
        assert_eq!(played, cards("5s 8c Kd As"));
    }

    #[test]
    fn empty_hand_has_no_choice() {
        assert_eq!(choose(&[], cards("2c")[0]), None);
    }

    #[test]
    fn wins_every_winnable_deal_in_every_order() {
        // Every seed's deal, and the same cards dealt in reverse order.
        for seed in 1..3_000u32 {
            for n in 1..=MAX_HAND {
                let deal = Deal::new(n, seed);
                let mut reversed = deal.to_cover.clone();
                reversed.reverse();
                for order in [&deal.to_cover, &reversed] {
                    assert_eq!(
                        plays_out(deal.hand.clone(), order),
                        winnable(&deal.hand, order),
                        "n={n} seed={seed}"
                    );
                }
            }
        }
    }
}
