// Package story reads a game's event log back as its story: each day's
// votes at the close and in the order they came, the deaths and their
// causes, and, once the game is over, each night's secret actions and every
// player's side. It is a pure function of the log, for the end mail, its
// picture and the archive.
//
// What it tells depends on the log alone: while no game_ended event with
// the roles is in it, only public events are read, so a story of a game in
// progress holds nothing the town thread did not show.
package story

import (
	"time"

	"github.com/mafiamail/mafiamail/engine"
)

// History is a game's story.
type History struct {
	Game string
	// Revealed: the game is over and its roles were announced; Players
	// carry their roles and sides, and Nights are filled in.
	Revealed bool
	Winner   engine.Side
	Players  []Player
	Days     []Day
	// Doctors is how many Doctors the setup has, which is public.
	Doctors int
}

// Player is one seat, by its name at the end.
type Player struct {
	Name string
	// Role and Side are empty until the game is over.
	Role engine.Role
	Side engine.Side
	// Died is how the player left the game ("" while alive).
	Died engine.Cause
}

// Day is one day of votes and the night that followed it.
type Day struct {
	Number int
	// Extra: this is the extra round after night Number, which had no
	// kill (the engine counts it in the day before the night).
	Extra  bool
	Rounds []Round
	// Deaths are those of the day: by vote, missed votes, the referee, a
	// Vigilante's shot by day.
	Deaths []Death
	// Shots are the Vigilante's shots by day, known once the game is over
	// (the death itself is public).
	Shots []Shot
	// Night is the night after the day, nil when there was none (yet).
	Night *Night
}

// Round is one voting round of a day.
type Round struct {
	Kind engine.RoundKind
	// Closed is when the round closed (zero while it runs).
	Closed  time.Time
	Outcome engine.Outcome
	// Target is the player the round eliminated, if any.
	Target string
	// Votes is every living player's vote at the close, in seat order.
	Votes []Vote
	// Moves are the votes, unvotes, locks and unlocks in order.
	Moves []Move
}

// Vote is one player's vote at a round's close.
type Vote struct {
	Voter  string
	Target string // "" for no vote
	Null   bool
	Locked bool
}

// MoveKind is what a move did.
type MoveKind string

// Moves of a voting round.
const (
	MoveVote   MoveKind = "vote"
	MoveUnvote MoveKind = "unvote"
	MoveLock   MoveKind = "lock"
	MoveUnlock MoveKind = "unlock"
)

// Move is one vote, unvote, lock or unlock.
type Move struct {
	At     time.Time
	Kind   MoveKind
	Voter  string
	Target string // the vote's or the lock's target; "" for none
	Null   bool
}

// Death is one death and its cause.
type Death struct {
	At    time.Time
	Name  string
	Cause engine.Cause
}

// Night is what happened in one night. Its actions are known only once the
// game is over.
type Night struct {
	Number int
	// Kill is the Mafia's standing target, "" for none; NoKill says they
	// chose no kill.
	Kill   string
	NoKill bool
	// Protections are each Doctor's standing protection, in the order of
	// the seats.
	Protections []Protection
	Inspections []Inspection
	Shots       []Shot
	// Saved counts the attacks the Doctors' protections blocked.
	Saved int
	// Dawn: the night resolved, and Deaths are its dawn's. A night the
	// game's end cut short had no dawn.
	Dawn   bool
	Deaths []Death
	// Removed are the players who left the game during the night, before
	// any dawn (the referee's removals): they did not die at dawn.
	Removed []Death
}

// Protection is a Doctor's protection.
type Protection struct {
	By, Target string
}

// Inspection is one Inspector's question and its answer.
type Inspection struct {
	By, Target, Result string
}

// Shot is a Vigilante's shot (or pass, with no target).
type Shot struct {
	By, Target string
	// ByDay: shot in the day, at once.
	ByDay bool
}
