package engine

import (
	"encoding/json"
	"fmt"
	"time"
)

// EventVersion is the version of the event encoding. Decoding refuses any
// other, so an old binary never misreads a newer log.
const EventVersion = 1

// EventType names what happened.
type EventType string

// Every event the engine emits.
const (
	EvGameCreated      EventType = "game_created"
	EvSetupChanged     EventType = "setup_changed"
	EvPlayerJoined     EventType = "player_joined"
	EvPlayerRenamed    EventType = "player_renamed" // before the start (S4): Name the new name, Text the old
	EvObserverAdmitted EventType = "observer_admitted"
	EvDrawCommitted    EventType = "draw_committed" // public: the commitment (S2)
	EvRolesDrawn       EventType = "roles_drawn"    // referee: the draw and its salt
	EvRoleAssigned     EventType = "role_assigned"  // one player: the role message (S3)
	EvDayStarted       EventType = "day_started"
	EvExtraStarted     EventType = "extra_round_started" // N7
	EvRunoffStarted    EventType = "runoff_started"      // D11
	EvVoted            EventType = "voted"
	EvUnvoted          EventType = "unvoted"
	EvLocked           EventType = "locked"
	EvUnlocked         EventType = "unlocked"
	EvExtensionAsked   EventType = "extension_requested"
	EvExtended         EventType = "extended" // a round or night got longer
	EvExtensionDenied  EventType = "extension_denied"
	EvDeadlineSet      EventType = "deadline_set"
	EvWeekendClose     EventType = "weekend_close_announced"
	EvTieExtended      EventType = "tie_extended" // D12
	EvMissedVote       EventType = "missed_vote"  // D14
	EvVoteCleared      EventType = "vote_cleared" // D14: to the voter whose target died by day
	EvRoundClosed      EventType = "round_closed"
	EvPlayerDied       EventType = "player_died"
	EvNightStarted     EventType = "night_started"
	EvActionTaken      EventType = "night_action" // secret: to the actor (and Mafia) and the referee
	EvDayShot          EventType = "day_shot"
	EvInspection       EventType = "inspection_result"
	EvDawn             EventType = "dawn"
	EvGameEnded        EventType = "game_ended"
	EvPaused           EventType = "paused"
	EvResumed          EventType = "resumed"
	EvAnnouncement     EventType = "announcement"
	EvThreadPost       EventType = "thread_post"
	EvMafiaPost        EventType = "mafia_post"
	EvPrivateNote      EventType = "private_note" // discussion in a private channel, for the referee
	EvSubstituted      EventType = "substituted"  // public: a seat has a new player (S4)
	EvPostHeld         EventType = "post_held"
	EvPostRelayed      EventType = "post_relayed"
	EvPostRejected     EventType = "post_rejected"
	EvPlayerReplaced   EventType = "player_replaced"
	EvSuspended        EventType = "suspended"
	EvReminder         EventType = "reminder"
	EvDigest           EventType = "digest" // the thread's posts and votes since the last one go out (T1)
	EvTallyShown       EventType = "tally"
	EvStatusShown      EventType = "status"
	EvHelpShown        EventType = "help"
	// EvZoneSet: a player chose the zone their own copies show times in
	// beside the game's (Text: the zone as they wrote it, "" for none).
	EvZoneSet EventType = "zone_set"
	// EvZoneShown answers ZONE alone: the player's zone (Text) and how to
	// set it.
	EvZoneShown EventType = "zone"
	// EvLanguageSet: a player chose the language of their own mail (Text:
	// its tag, "" for the game's); EvLanguageShown answers LANGUAGE alone
	// with the language in force (Text).
	EvLanguageSet   EventType = "language_set"
	EvLanguageShown EventType = "language"
	// EvMailSet: a player chose how they take the thread (Text: MailDigest
	// or MailEach); EvMailShown answers MAIL alone with the choice in force.
	EvMailSet   EventType = "mail_set"
	EvMailShown EventType = "mail"
	// EvCalendarSet: a player turned the calendar event of each voting
	// round's close on or off (Text: CalendarOn or CalendarOff);
	// EvCalendarShown answers CALENDAR alone with the choice in force.
	EvCalendarSet   EventType = "calendar_set"
	EvCalendarShown EventType = "calendar"
)

// EvPostGameTalk is a thread post after the game's end, relayed at once to
// every participant while the post-game talk lasts.
const EvPostGameTalk EventType = "post_game_talk"

// Audience says who may see an event. The zero value is no one; Public
// means every player, observer and the referee.
type Audience struct {
	Public  bool `json:"public,omitempty"`
	Referee bool `json:"referee,omitempty"`
	// Mafia is every living Mafioso.
	Mafia bool `json:"mafia,omitempty"`
	// Slot is one player (1-based), or 0.
	Slot int `json:"slot,omitempty"`
	// Address is one address that is not (or no longer) a player's: a
	// sign-up that was refused, an observer, a replaced player.
	Address string `json:"address,omitempty"`
}

var (
	toAll     = Audience{Public: true}
	toReferee = Audience{Referee: true}
)

func toPlayer(slot int) Audience     { return Audience{Slot: slot} }
func toPlayerRef(slot int) Audience  { return Audience{Slot: slot, Referee: true} }
func toMafiaAndRef() Audience        { return Audience{Mafia: true, Referee: true} }
func toAddress(addr string) Audience { return Audience{Address: addr} }

// RoundKind is the kind of a voting round.
type RoundKind string

// Rounds of a day: the opening round, a runoff (D11), and the extra round
// the town gets after a night without a whack (N7).
const (
	Opening RoundKind = "opening"
	Runoff  RoundKind = "runoff"
	Extra   RoundKind = "extra"
)

// Cause is how a player died (announced without roles, N9 and D10).
type Cause string

// Causes of death.
const (
	ByVote         Cause = "vote"
	ByMissedVotes  Cause = "missed_votes"
	ByMafia        Cause = "mafia"
	ByVigilante    Cause = "vigilante"
	ByMafiaAndVig  Cause = "mafia_and_vigilante"
	ByModkill      Cause = "modkill"
	ByVigilanteDay Cause = "vigilante_day"
)

// Outcome is how a round ended.
type Outcome string

// Round outcomes.
const (
	Eliminated Outcome = "eliminated"   // D10
	ToRunoff   Outcome = "runoff"       // D11
	Forfeited  Outcome = "forfeited"    // D12
	NoVotes    Outcome = "no_votes"     // D13
	Void       Outcome = "void"         // D14: a player reached two missed votes
	EndedByRef Outcome = "ended_by_ref" // the game ended during the round
)

// Death is one death at dawn or in a round.
type Death struct {
	Slot  int    `json:"slot"`
	Name  string `json:"name"`
	Cause Cause  `json:"cause"`
}

// Event is one thing that happened in a game. Only the fields its Type uses
// are set. Events are the game's durable record: State is their fold.
type Event struct {
	V    int       `json:"v"`
	Type EventType `json:"type"`
	At   time.Time `json:"at"`
	To   Audience  `json:"to"`

	Game    string `json:"game,omitempty"`
	Referee string `json:"referee,omitempty"`
	Setup   *Setup `json:"setup,omitempty"`

	// Slot is the player the event is about; By the player who acted.
	Slot    int    `json:"slot,omitempty"`
	By      int    `json:"by,omitempty"`
	Name    string `json:"name,omitempty"`
	Address string `json:"address,omitempty"`
	Token   string `json:"token,omitempty"`
	// Target is the player acted upon (0 for none; NullVote for VOTE NULL).
	Target int  `json:"target,omitempty"`
	Null   bool `json:"null,omitempty"`

	Day      int           `json:"day,omitempty"`
	Round    RoundKind     `json:"round,omitempty"`
	Deadline time.Time     `json:"deadline,omitempty"`
	Duration time.Duration `json:"duration,omitempty"`
	Count    int           `json:"count,omitempty"`
	Verb     Verb          `json:"verb,omitempty"`
	Auto     bool          `json:"auto,omitempty"`
	Reason   string        `json:"reason,omitempty"`
	Text     string        `json:"text,omitempty"`
	Held     int           `json:"held,omitempty"`

	Outcome    Outcome `json:"outcome,omitempty"`
	Candidates []int   `json:"candidates,omitempty"`
	Deaths     []Death `json:"deaths,omitempty"`
	Blocked    int     `json:"blocked,omitempty"`
	Tally      *Tally  `json:"tally,omitempty"`
	Slots      []int   `json:"slots,omitempty"`

	// Secret fields: never set on a public event before the game ends (C5).
	Role       Role     `json:"role,omitempty"`
	Roles      []Role   `json:"roles,omitempty"`
	Mafiosi    []int    `json:"mafiosi,omitempty"`
	Known      int      `json:"known,omitempty"`
	Result     string   `json:"result,omitempty"`
	Status     *Status  `json:"status,omitempty"`
	Salt       string   `json:"salt,omitempty"`
	Commitment string   `json:"commitment,omitempty"`
	Winner     Side     `json:"winner,omitempty"`
	Names      []string `json:"names,omitempty"`
}

// RevealsRole reports whether the event carries a role or anything that
// would tell one. Rule C5 forbids that on public events before the end.
func (e Event) RevealsRole() bool {
	return e.Role != "" || len(e.Roles) > 0 || len(e.Mafiosi) > 0 || e.Known != 0 ||
		e.Result != "" || e.Status != nil || e.Salt != ""
}

// MarshalEvent encodes an event for the log.
func MarshalEvent(e Event) ([]byte, error) { return json.Marshal(e) }

// UnmarshalEvent decodes an event from the log, refusing other versions.
func UnmarshalEvent(b []byte) (Event, error) {
	var e Event
	if err := json.Unmarshal(b, &e); err != nil {
		return e, fmt.Errorf("decode event: %w", err)
	}
	if e.V != EventVersion {
		return e, fmt.Errorf("event version %d is not %d: written by another version of mafiamail", e.V, EventVersion)
	}
	return e, nil
}

// Digestible reports whether an event is thread news that a game with a
// digest interval gathers into digests (T1) rather than relaying at once.
func Digestible(e Event) bool {
	switch e.Type {
	case EvThreadPost, EvPostRelayed, EvVoted, EvUnvoted, EvLocked, EvUnlocked:
		return true
	}
	return false
}
