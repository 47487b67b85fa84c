//! A player's view of a Septica match, kept up to date from the computer's
//! messages, and the loop that runs a player program on standard input and
//! output. Both reference players are a [`Player`] plugged into [`run`].

use std::io::{self, BufRead, Write};

use super::protocol::{self, Message};
use super::rules::{Action, DECK, HAND, Hand, Side, cuts, valuable};

/// Where the match is, from the player's side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Turn {
    /// Waiting for a new match's hand.
    MatchStart,
    /// The computer is to lead.
    ComputerLeads,
    /// The player leads a new trick.
    PlayerLeads,
    /// The player answers the computer's card.
    PlayerAnswers,
    /// The player answered; the computer continues or ends.
    ComputerDecides,
    /// The player led or continued; the computer answers.
    ComputerAnswers,
    /// The computer answered; the player continues (`card`) or ends (`0`).
    PlayerDecides,
}

/// What the player knows.
#[derive(Clone, Debug)]
pub struct View {
    pub hand: Hand,
    /// Every card the player has seen: its own and every card played.
    pub seen: Hand,
    pub turn: Turn,
    pub leader: Side,
    /// The current trick's value, points, holder, and whether its last
    /// answer cut.
    pub value: u8,
    pub trick_points: u8,
    pub holder: Side,
    pub answer_cut: bool,
    /// Cards left in the deck.
    pub deck_left: u8,
    /// Points collected (computer, player).
    pub points: [u8; 2],
    /// Matches started, from 1.
    pub matches: u64,
}

/// What happened, for players that reason about the computer's cards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A new match: the player's hand.
    Dealt,
    /// The computer played `card` (the view is as it was before).
    ComputerPlayed(u8),
    /// The computer ended the trick (the view is as it was before).
    ComputerEnded,
    /// The trick ended and both drew as many cards as `player_drew` holds
    /// (already in the player's hand), or none at the end of the match.
    Drew { player_drew: Hand },
}

/// A Septica player.
pub trait Player {
    /// Called on every event, before the view changes for it (except for
    /// `Dealt` and `Drew`, after).
    fn observe(&mut self, _view: &View, _event: Event) {}
    /// The player's command when it must move.
    fn act(&mut self, view: &View) -> Action;
}

impl Default for View {
    fn default() -> View {
        View {
            hand: Hand::default(),
            seen: Hand::default(),
            turn: Turn::MatchStart,
            leader: Side::Computer,
            value: 0,
            trick_points: 0,
            holder: Side::Computer,
            answer_cut: false,
            deck_left: 0,
            points: [0, 0],
            matches: 0,
        }
    }
}

impl View {
    /// Cards in the computer's hand (always as many as the player's, except
    /// in the middle of a trick).
    pub fn computer_cards(&self) -> usize {
        match self.turn {
            // The computer has just played a card the player has not yet
            // answered, or the other way round.
            Turn::PlayerAnswers => self.hand.len() - 1,
            Turn::ComputerAnswers => self.hand.len() + 1,
            _ => self.hand.len(),
        }
    }

    /// The cards neither in the player's hand nor played: the computer's
    /// hand and the deck.
    pub fn unseen(&self) -> Hand {
        Hand::full_deck().minus(&self.seen)
    }

    fn play(&mut self, side: Side, card: u8) {
        self.trick_points += u8::from(valuable(card));
        if side == Side::Player {
            self.hand.remove(card);
        } else {
            self.seen.add(card);
        }
    }

    /// Applies one message; returns the event it was.
    fn take(&mut self, message: Message) -> Result<Event, String> {
        match (self.turn, message) {
            (Turn::MatchStart, Message::Hand(cards)) => {
                if cards.len() != HAND {
                    return Err(format!("a hand of {} cards", cards.len()));
                }
                *self = View {
                    hand: Hand::from_cards(&cards),
                    seen: Hand::from_cards(&cards),
                    turn: Turn::ComputerLeads,
                    deck_left: (DECK - 2 * HAND) as u8,
                    matches: self.matches + 1,
                    ..View::default()
                };
                Ok(Event::Dealt)
            }
            (Turn::ComputerLeads, Message::Card(c)) => {
                self.play(Side::Computer, c);
                self.leader = Side::Computer;
                self.holder = Side::Computer;
                self.value = c;
                self.turn = Turn::PlayerAnswers;
                Ok(Event::ComputerPlayed(c))
            }
            (Turn::ComputerDecides, Message::Card(c)) => {
                self.play(Side::Computer, c);
                self.holder = Side::Computer;
                self.turn = Turn::PlayerAnswers;
                Ok(Event::ComputerPlayed(c))
            }
            (Turn::ComputerAnswers, Message::Card(c)) => {
                self.play(Side::Computer, c);
                self.answer_cut = cuts(c, self.value);
                if self.answer_cut {
                    self.holder = Side::Computer;
                }
                self.turn = Turn::PlayerDecides;
                Ok(Event::ComputerPlayed(c))
            }
            (Turn::ComputerDecides | Turn::PlayerDecides, Message::Drew { next, cards }) => {
                self.end_trick(next);
                for &c in &cards {
                    self.hand.add(c);
                    self.seen.add(c);
                }
                self.deck_left = self.deck_left.saturating_sub(2 * cards.len() as u8);
                self.turn = match next {
                    Side::Computer => Turn::ComputerLeads,
                    Side::Player => Turn::PlayerLeads,
                };
                Ok(Event::Drew {
                    player_drew: Hand::from_cards(&cards),
                })
            }
            (Turn::ComputerDecides | Turn::PlayerDecides, Message::Over { .. }) => {
                self.end_trick(self.holder);
                self.turn = Turn::MatchStart;
                Ok(Event::Drew {
                    player_drew: Hand::default(),
                })
            }
            (turn, message) => Err(format!("unexpected {message:?} in {turn:?}")),
        }
    }

    fn end_trick(&mut self, winner: Side) {
        self.points[winner as usize] += self.trick_points;
        self.trick_points = 0;
        self.answer_cut = false;
        self.leader = winner;
    }

    /// Applies the player's own command.
    fn act(&mut self, action: Action) {
        match (self.turn, action) {
            (Turn::PlayerLeads, Action::Card(c)) => {
                self.play(Side::Player, c);
                self.leader = Side::Player;
                self.holder = Side::Player;
                self.value = c;
                self.turn = Turn::ComputerAnswers;
            }
            (Turn::PlayerAnswers, Action::Card(c)) => {
                self.play(Side::Player, c);
                self.answer_cut = cuts(c, self.value);
                if self.answer_cut {
                    self.holder = Side::Player;
                }
                self.turn = Turn::ComputerDecides;
            }
            (Turn::PlayerDecides, Action::Card(c)) => {
                self.play(Side::Player, c);
                self.holder = Side::Player;
                self.answer_cut = false;
                self.turn = Turn::ComputerAnswers;
            }
            // `0`: the next message says who won and what was drawn.
            (Turn::PlayerDecides, Action::End) => {}
            _ => {}
        }
    }
}

/// Hands `message` to the view and tells the player what happened.
fn receive(view: &mut View, player: &mut impl Player, message: Message) -> Result<(), String> {
    let before = view.clone();
    let ends_trick = matches!(message, Message::Drew { .. } | Message::Over { .. });
    let event = view.take(message)?;
    if ends_trick && before.turn == Turn::ComputerDecides {
        player.observe(&before, Event::ComputerEnded);
    }
    match event {
        Event::Dealt | Event::Drew { .. } => player.observe(view, event),
        _ => player.observe(&before, event),
    }
    Ok(())
}

fn players_turn(view: &View) -> bool {
    matches!(
        view.turn,
        Turn::PlayerLeads | Turn::PlayerAnswers | Turn::PlayerDecides
    )
}

/// Plays one match in-process, the computer as `referee septica` plays it
/// and the player through the same view as over pipes: for testing and
/// tuning players quickly. `check` sees the true table before each of the
/// player's moves. Panics if the player breaks a rule.
pub fn simulate<P: Player>(
    deck: &[u8],
    rng: &mut crate::rng::SplitMix64,
    player: &mut P,
    mut check: impl FnMut(&super::rules::Table, &P),
) -> super::rules::Table {
    use super::computer;
    use super::rules::{Phase, Table};
    let mut table = Table::deal(deck);
    let mut view = View::default();
    let tell = |view: &mut View, player: &mut P, message| {
        receive(view, player, message).expect("the simulated computer follows the protocol");
    };
    tell(&mut view, player, Message::Hand(deck[..HAND].to_vec()));
    loop {
        let (side, action) = match table.phase {
            Phase::Over => {
                let (computer, player_points) = (table.points[0], table.points[1]);
                tell(
                    &mut view,
                    player,
                    Message::Over {
                        computer,
                        player: player_points,
                    },
                );
                return table;
            }
            Phase::Lead(Side::Computer)
            | Phase::Answer(Side::Computer)
            | Phase::Decide(Side::Computer) => {
                let action = computer::choose(&table)
                    .pick(rng)
                    .map_or(Action::End, Action::Card);
                (Side::Computer, action)
            }
            _ => {
                assert!(players_turn(&view), "the view lost track: {:?}", view.turn);
                check(&table, player);
                let action = player.act(&view);
                if let Err(e) = table.check(Side::Player, action) {
                    panic!("illegal {action:?}: {e}");
                }
                view.act(action);
                (Side::Player, action)
            }
        };
        let end = table.apply(side, action, deck);
        if let (Side::Computer, Action::Card(c)) = (side, action) {
            tell(&mut view, player, Message::Card(c));
        }
        if let Some(end) = end
            && table.phase != Phase::Over
        {
            let cards = end.drawn[Side::Player as usize].clone();
            tell(
                &mut view,
                player,
                Message::Drew {
                    next: end.winner,
                    cards,
                },
            );
        }
    }
}

/// Plays every match on standard input and output until EOF.
pub fn run(player: &mut impl Player) -> io::Result<()> {
    let mut input = io::stdin().lock();
    let mut out = io::stdout().lock();
    play(&mut input, &mut out, player)
}

/// [`run`] on any streams (for tests).
pub fn play(
    input: &mut impl BufRead,
    out: &mut impl Write,
    player: &mut impl Player,
) -> io::Result<()> {
    let mut view = View::default();
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let bad = |e: String| io::Error::new(io::ErrorKind::InvalidData, e);
        let message =
            protocol::parse_message(line.trim_end(), view.turn == Turn::MatchStart).map_err(bad)?;
        receive(&mut view, player, message).map_err(bad)?;
        // Each message leaves at most one command to send: after it the
        // computer moves, or (after `0`) tells how the trick ended.
        if players_turn(&view) {
            let action = player.act(&view);
            match action {
                Action::Card(c) => writeln!(out, "{c}")?,
                Action::End => writeln!(out, "0")?,
            }
            out.flush()?;
            view.act(action);
        }
    }
}
