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
    /// The trick ended and both drew `count` cards each (the player's are
    /// already in its hand).
    Drew { count: u8 },
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
                    count: cards.len() as u8,
                })
            }
            (Turn::ComputerDecides | Turn::PlayerDecides, Message::Over { .. }) => {
                self.end_trick(self.holder);
                self.turn = Turn::MatchStart;
                Ok(Event::Drew { count: 0 })
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

/// Plays every match on standard input and output until EOF.
pub fn run(player: &mut impl Player) -> io::Result<()> {
    let mut input = io::stdin().lock();
    let mut out = io::stdout().lock();
    play(&mut input, &mut out, player)
}

/// [`run`] on any streams (for tests).
pub fn play(input: &mut impl BufRead, out: &mut impl Write, player: &mut impl Player) -> io::Result<()> {
    let mut view = View::default();
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let bad = |e: String| io::Error::new(io::ErrorKind::InvalidData, e);
        let message = protocol::parse_message(line.trim_end(), view.turn == Turn::MatchStart).map_err(bad)?;
        let before = view.clone();
        let event = view.take(message).map_err(bad)?;
        match event {
            Event::Dealt | Event::Drew { .. } => player.observe(&view, event),
            _ => player.observe(&before, event),
        }
        // Each message leaves at most one command to send: after it the
        // computer moves, or (after `0`) tells how the trick ended.
        if matches!(view.turn, Turn::PlayerLeads | Turn::PlayerAnswers | Turn::PlayerDecides) {
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
