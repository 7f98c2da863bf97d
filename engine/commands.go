package engine

import "time"

// ActorKind says who sent a command, as the mail layer authenticated them.
type ActorKind string

// The kinds of sender.
const (
	ByPlayer   ActorKind = "player"
	ByReferee  ActorKind = "referee"
	ByObserver ActorKind = "observer"
	ByOutsider ActorKind = "outsider"
)

// Channel is the address a command arrived at.
type Channel string

// The channels of docs/design.md.
const (
	Thread  Channel = "thread"
	Private Channel = "private"
	MafiaCh Channel = "mafia"
	Signup  Channel = "signup"
)

// Actor is the authenticated sender of a command.
type Actor struct {
	Kind ActorKind `json:"kind"`
	// Slot is the player's seat (1-based) when Kind is ByPlayer.
	Slot int `json:"slot,omitempty"`
	// Address is the sender's address (used by sign-ups and outsiders).
	Address string `json:"address,omitempty"`
}

// PlayerActor returns the actor for the player in slot.
func PlayerActor(slot int) Actor { return Actor{Kind: ByPlayer, Slot: slot} }

// Referee is the actor for the game's referee.
var Referee = Actor{Kind: ByReferee}

// Verb is what a command asks for.
type Verb string

// Every command of docs/design.md that reaches the engine.
const (
	// Sign-up and setup.
	CmdJoin  Verb = "JOIN"
	CmdAdd   Verb = "ADD"
	CmdSetup Verb = "SETUP"
	CmdStart Verb = "START"
	CmdAdmit Verb = "ADMIT"

	// Day.
	CmdVote   Verb = "VOTE"
	CmdUnvote Verb = "UNVOTE"
	CmdLock   Verb = "LOCK"
	CmdUnlock Verb = "UNLOCK"
	CmdExtend Verb = "EXTEND"
	CmdTally  Verb = "TALLY"
	CmdHelp   Verb = "HELP"
	CmdStatus Verb = "STATUS"
	CmdPost   Verb = "POST" // discussion in the thread or the mafia list
	// CmdZone sets the zone a player's own copies show times in beside the
	// game's (Text: a zone such as Europe/Berlin), or asks for it (no Text).
	CmdZone Verb = "ZONE"
	// CmdLanguage sets the language of a player's own mail (Text: a
	// language such as de or Deutsch), or asks for it (no Text).
	CmdLanguage Verb = "LANGUAGE"
	// CmdMail chooses how a player takes the thread (Text: MailDigest or
	// MailEach), or asks (no Text).
	CmdMail Verb = "MAIL"
	// CmdCalendar turns the calendar event of each round's deadline on or
	// off for a player (Text: CalendarOn or CalendarOff), or asks (no Text).
	CmdCalendar Verb = "CALENDAR"

	// Night.
	CmdKill    Verb = "KILL"
	CmdNoKill  Verb = "NO KILL"
	CmdInspect Verb = "INSPECT"
	CmdProtect Verb = "PROTECT"
	CmdShoot   Verb = "SHOOT"
	CmdPass    Verb = "PASS"

	// Referee.
	CmdClose        Verb = "CLOSE"
	CmdDeadline     Verb = "DEADLINE"
	CmdGrant        Verb = "GRANT"
	CmdDeny         Verb = "DENY"
	CmdWeekendClose Verb = "WEEKEND CLOSE"
	CmdReplace      Verb = "REPLACE"
	CmdModkill      Verb = "MODKILL"
	CmdSuspend      Verb = "SUSPEND"
	CmdRelay        Verb = "RELAY"
	CmdReject       Verb = "REJECT"
	CmdPause        Verb = "PAUSE"
	CmdResume       Verb = "RESUME"
	CmdAnnounce     Verb = "ANNOUNCE"
	CmdEnd          Verb = "END"
)

// Command is one command line, already split into its parts by the mail
// layer's grammar; names are still as the sender wrote them and are resolved
// here (D1).
type Command struct {
	Verb    Verb    `json:"verb"`
	By      Actor   `json:"by"`
	Channel Channel `json:"channel"`

	// Target is the name a command names (VOTE, KILL, INSPECT, …), "null" for
	// VOTE NULL, or the player a referee command is about.
	Target string `json:"target,omitempty"`
	// Voter is the left side of "Voter >> Target"; it must be the sender.
	Voter string `json:"voter,omitempty"`
	// Name is a sign-up name (JOIN, ADD).
	Name string `json:"name,omitempty"`
	// Address is an address argument (ADD, REPLACE, SUSPEND, ADMIT).
	Address string `json:"address,omitempty"`
	// Token is the new participant's secret token (JOIN, ADD, REPLACE),
	// made by the host; the engine keeps it to spot leaked addresses (C2).
	Token string `json:"token,omitempty"`
	// Text is discussion (POST), an announcement, or SETUP's arguments.
	Text string `json:"text,omitempty"`
	// Duration is the length of EXTEND or GRANT; zero means the default.
	Duration time.Duration `json:"duration,omitempty"`
	// Text, for DEADLINE, is the new deadline as the referee wrote it; the
	// engine reads it in the game's zone (ParseGameTime). Time is the new
	// deadline as an instant, for callers that have one; Text wins.
	Time time.Time `json:"time,omitempty"`
	// Held is the number of a held post (RELAY, REJECT).
	Held int `json:"held,omitempty"`
	// Suspend asks REJECT to suspend the author too.
	Suspend bool `json:"suspend,omitempty"`
	// Suspension, on JOIN and REPLACE, is the reason the host's registry
	// holds against the address, if any (C3).
	Suspension string `json:"suspension,omitempty"`
}

// HelpRules is the Text of a HELP that asks for the rules themselves (HELP
// RULES) rather than the commands.
const HelpRules = "RULES"
