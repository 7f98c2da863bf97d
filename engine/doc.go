// Package engine is the referee of a Mafia game: the rules of docs/rules.md as a
// pure reducer.
//
// A game's State is the fold of its Events. Commands are checked against the
// state by Apply, which returns the events they cause (already folded into the
// state) or a *Refusal that a player can read. Tick applies whatever the clock
// has made due (round closes, night ends, reminders), and NextDeadline tells the
// host when to call Tick next.
//
// The package does no I/O and keeps no clock or random source of its own: the
// current time and the random source for the role draw come in through Env.
// That keeps every game reproducible from its event log (Replay), and lets the
// tests play tens of thousands of whole games in seconds.
//
// Every Event says who may see it (To). Public events never carry a role
// before the game has ended (rule C5); the mail layer only has to honour To to
// keep every secret where it belongs.
package engine
