package templates

import (
	"strings"
	"time"

	"github.com/mafiamail/mafiamail/lang"
)

// Channel is the conversation a message belongs to. It decides the wording
// of the footer: what a plain Reply does and which commands work there.
type Channel string

// The channels of docs/design.md "Addresses", seen from the reader's side.
const (
	Thread  Channel = "thread"  // the public town thread
	Private Channel = "private" // a participant's private channel with the host and the referee
	Mafia   Channel = "mafia"   // the mafia list
	Host    Channel = "host"    // mail about no game in particular
)

// View is everything one copy of one message shows. Compose fills it in
// for one reader; the templates only lay it out.
type View struct {
	// Kind is the message's kind: the template pair that frames it and the
	// value of its X-Mafiamail-Kind field.
	Kind string
	Game string
	// Lang is the reader's language (package lang); "" is English.
	Lang    string
	Channel Channel
	Reader  Reader
	// Now is when the message is sent.
	Now Moment
	// Headline, when set, replaces the subject of the first section as the
	// message's first line.
	Headline string
	// Receipt, when set, is the reader's receipt for their own command in
	// one line right under the headline, when the headline is the news
	// the command caused.
	Receipt string
	// Self is the reader's own position, for the line every copy of thread
	// mail carries (nil: none).
	Self *Self
	// Sections are the news, in order: one per event, or per line of a
	// reply.
	Sections []*Section
	// Tally, when set, ends the message: thread mail carries the official
	// tally while a vote runs (D15).
	Tally  *Tally
	Footer Footer

	main        *Section
	headlineSet bool
	// cache keeps the parts of this copy that other copies share (nil:
	// none are kept).
	cache *Cache
	keys  keys
}

// Reader is whom a copy is for.
type Reader struct {
	Name     string
	Slot     int
	Referee  bool
	Observer bool
}

// Player reports whether the reader holds a seat.
func (r Reader) Player() bool { return r.Slot > 0 }

// Self is the reader's own state, shown near the top of thread mail so that
// nobody has to search the tally for their own line. It holds only what
// everyone can see of the reader (alive or not, their vote): never a role,
// nor anything that depends on one, such as a night action still owed, so
// that every copy of a public mail reads the same for readers of the same
// standing, and a forwarded copy tells nothing (C5). Night reminders go to
// the private channel.
type Self struct {
	Phase    string // signup, day, night, ended
	Day      int
	Round    string
	Paused   bool
	Alive    bool
	Cause    string // how the reader died, in words
	Vote     string // the reader's vote target, if any
	Null     bool
	Locked   bool
	Missed   int
	Runoff   []string // the players a runoff allows votes for
	Closes   Moment   // when the round or the night ends
	OwesVote bool
	// For the referee: requests and held posts waiting for an answer.
	Asked []string
	Held  int
}

// Footer says how to answer: the reader's own reply addresses and the
// commands of the channel the message arrived in.
type Footer struct {
	Channel Channel
	Thread  string // the reader's thread address, if they have one
	Private string // the reader's private address
	Mafia   string // the reader's mafia-list address (living Mafiosi only)
	// Token is the secret token the reader's addresses carry, when they
	// have one: the footers of readers who differ in it alone are laid
	// out once (see footer.go). The templates never show it by itself.
	Token    string
	Signup   string // the game's sign-up address
	Commands []Command
	// Dead: the reader is a dead player; their thread posts go to the
	// referee (C1).
	Dead bool
	// Over: the game has ended; there is nothing left to command.
	Over bool
	// Talk: the game has ended and its post-game talk, open until
	// TalkUntil, still relays thread posts to everyone.
	Talk      bool
	TalkUntil Moment
	// ReplyThread: a plain Reply to this private mail goes to the thread
	// (a reminder to vote, an answer about a vote sent to the wrong place).
	ReplyThread bool
	// RepliesTo, when set, is where a plain Reply to this message goes
	// instead of the channel it came in (a misdirected message's answer
	// points back to where that message belongs), in words, and
	// ReplyAddress that address.
	RepliesTo    string
	ReplyAddress string
}

// Command is one command with what it does.
type Command struct {
	Syntax string
	What   string
}

// Section is one piece of news. Only the fields its Kind uses are set; each
// kind's template documents the ones it reads.
type Section struct {
	Kind string
	// Variant refines the kind: "extra" for the extra round's day start,
	// "locked" for a LOCK, "referee" for the referee's copy, ...
	Variant string
	// Msg is the message the section is part of (set by Render).
	Msg *View

	// Self: the reader is the player the section is about.
	Self   bool
	Name   string // the player the section is about
	By     string // the player who acted
	Target string // the player acted upon
	Text   string // a post, an announcement, a note
	Reason string
	Day    int
	Round  string
	At     Moment
	When   Moment // a deadline or a send time
	Span   Span   // a length of time
	Count  int
	Total  int
	Held   int
	Names  []string
	// Lines are short lines of text: actions, draw lines, refusals.
	Lines   []string
	Deaths  []Death
	Missed  []Missed
	Blocked int
	Tally   *Tally
	Setup   string
	Role    *RoleInfo
	Status  *Status
	Help    *Help
	End     *End
	Reply   *Answer
	Failure *Failure
	Hold    *SendingHold
	Plan    *SendingPlan
	Revoked *Revoked
	// Restored is set for a restore's account to the referee.
	Restored *Restored
	// Address is an address the section names (never a player's own
	// address in public mail).
	Address string
	// Brief: only the subject is shown where the section is nested (a
	// reply names the public effects of a command; the thread has them).
	Brief bool
	// HostAddress is the host's bare address, and Subject the subject of
	// the message the section answers (a misdirected one).
	HostAddress string
	Subject     string
}

// Framed reports whether the section's body is someone's words in a frame
// that names them (HTML): no heading above it says the name again.
func (s *Section) Framed() bool { return s.Kind == "post" || s.Kind == "mafia" }

// Death is one death, with its cause in words (N9: never a role).
type Death struct {
	Name  string
	Cause string
}

// Missed is a player's missed votes after a close (D14).
type Missed struct {
	Name  string
	Count int
}

// Tally is the official tally (D15), ready to show.
type Tally struct {
	Day   int
	Round string // opening, runoff, extra
	Final bool   // the round has closed
	// Paused: the referee paused the game; Closes moves by the length of
	// the pause when it resumes.
	Paused     bool
	At         Moment
	Closes     Moment
	Candidates []string
	Counts     []Count
	Votes      []Vote
	// NotVoted are the living players without a vote, null or not.
	NotVoted []Vote
	Notes    []string
	// Living is the number of living players, to show "12 of 14 voted".
	Living int
	// ToLock are the players who still have to lock a vote for the round
	// to close early (D5), and LastThree says that with three players
	// left two locks on one player do it instead.
	ToLock    []string
	LastThree bool
}

// Count is a player with votes on them.
type Count struct {
	Name   string
	Votes  int
	Voters []Vote
}

// Vote is one living player's vote.
type Vote struct {
	Name   string
	Target string
	Null   bool
	Locked bool
	// Cleared names the player whose death cleared this vote (D14); such a
	// vote counts as cast.
	Cleared string
}

// Voted reports whether the vote names a player.
func (v Vote) Voted() bool { return v.Target != "" }

// Cast lists the votes cast, null ones included, in seat order.
func (t *Tally) Cast() []Vote {
	var out []Vote
	for _, v := range t.Votes {
		if v.Target != "" || v.Null || v.Cleared != "" {
			out = append(out, v)
		}
	}
	return out
}

// Voted is how many living players have placed a vote, null votes
// included: a null vote is a vote placed, which counts as missed only if it
// is still null at the close.
func (t *Tally) Voted() int { return t.Living - len(t.NotVoted) }

// Nulls is how many of the votes placed are null.
func (t *Tally) Nulls() int {
	n := 0
	for _, v := range t.Votes {
		if v.Null {
			n++
		}
	}
	return n
}

// RoleInfo is what a role message tells its player (S3).
type RoleInfo struct {
	// Marker is the verbatim line of engine.SecretMarker (C2).
	Marker string
	Role   string
	Side   string // Town or Mafia
	// Fellows are the other Mafiosi, for a Mafioso.
	Fellows []string
	// Known is the Mafioso a classic Inspector is told.
	Known string
	// ExactRole: inspections name the role, not only Mafia or not.
	ExactRole bool
	Shots     int
	Saves     int // -1: unlimited
	// Doctors and Vigilantes are the setup's counts: a Doctor or a
	// Vigilante among several is told how they act together (N8).
	Doctors    int
	Vigilantes int
	Setup      string
	DayLength  Span
	Runoff     Span
	Night      Span
	NightStep  Span
	// Substitute: the reader takes over a seat in a running game (S4).
	Substitute bool
	Commands   []Command
}

// Status is a STATUS answer: a player's own, or the referee's whole view (F2).
type Status struct {
	Referee bool
	Phase   string
	Day     int
	Round   string
	Closes  Moment
	Paused  bool
	Setup   string
	Players []StatusPlayer
	Fellows []string
	Actions []string
	Held    int
	// Sending is the host's sending budget (the referee's view only).
	Sending *Sending
}

// StatusPlayer is one line of a status.
type StatusPlayer struct {
	Name   string
	Role   string
	Alive  bool
	Cause  string
	Missed int
	Vote   string
	Locked bool
	Saves  string
	Shots  int
	Last   string // the Doctor's last protection
	Doctor bool
	Vig    bool
}

// Help is a HELP answer.
type Help struct {
	Role     string
	Commands []Command
	Thread   []Command
	Observer bool
	Outsider bool
	Referee  bool
	// Host: help from the host's own address, about no game.
	Host bool
	// Dead: the reader is a dead player.
	Dead bool
	// Talk is how long the thread stays open for post-game talk after the
	// end (zero for none).
	Talk Span
	// Verbs are the reader's language's own words for the commands above,
	// "STIMME FÜR = VOTE" (none in English).
	Verbs []string
}

// End is the game's end (W2).
type End struct {
	Winner     string
	Reason     string
	Seats      []Seat
	Commitment string
	Salt       string
	// DrawText is the exact text the commitment hashes.
	DrawText string
	Verified bool
	// Story is the game told again: votes, deaths and nights (nil when
	// the game never started).
	Story *Story
	// Lang is the reader's language, set for the whole view by Render.
	Lang string
}

// MafiaWin says, in words, why the Mafia won (W1): they outnumber everyone
// else alive, or they are as many (one Mafioso and one other player left).
func (e *End) MafiaWin() string {
	mafia, others := 0, 0
	for _, s := range e.Seats {
		switch {
		case !s.Alive:
		case s.Role == "Mafia":
			mafia++
		default:
			others++
		}
	}
	switch {
	case mafia > others:
		return lang.Get(e.Lang).Phrase("The Mafia outnumber everyone else alive")
	case mafia > 0 && mafia == others:
		return lang.Get(e.Lang).Phrase("The Mafia are as many as everyone else alive")
	}
	return lang.Get(e.Lang).Phrase("The Mafia can no longer be outvoted")
}

// Seat is one player's seat at the end.
type Seat struct {
	Name  string
	Role  string
	Alive bool
	Cause string
}

// Answer is the answer to a message that held commands.
type Answer struct {
	Received Moment
	Subject  string
	Where    string // where the message arrived, in words
	Lines    []AnswerLine
	Accepted int
	Refused  int
	// Pending counts the lines held until the sender replies to Confirm,
	// by ConfirmBy.
	Pending   int
	Confirm   string
	ConfirmBy Moment
}

// AnswerLine is one command line and what became of it: its effects, as
// sections the sender may see.
type AnswerLine struct {
	Text     string
	Accepted bool
	// Pending: held until the sender confirms (neither done nor refused).
	Pending  bool
	Error    string
	Sections []*Section
}

// Sending is the host's sending budget, in the referee's STATUS: it is
// shared by every game the host runs.
type Sending struct {
	// Used is the recipients sent in the last 24 hours of the host's
	// clock; Limit the budget (0: none known).
	Used, Limit int
	// Held: the provider refuses mail for its sending limit since
	// HeldSince.
	Held      bool
	HeldSince Moment
	// Waiting is the messages in the outbox; ByKind says of what kinds
	// ("thread 12, role 2").
	Waiting int
	ByKind  string
	// Forecast is when what waits will have gone out, when it does not
	// fit now.
	Forecast *Moment
	// Plan is the forecast for this game's round and the plan that fits
	// it; nil when the host has made none.
	Plan *SendingPlan
}

// SendingPlan is the host's forecast for a game's round against its
// sending budget, and the plan it chose to fit (T3).
type SendingPlan struct {
	// Round names the round ("Day 2"); Closes is its close.
	Round  string
	Closes Moment
	// Every is the digest interval the plan sets for everyone; zero when
	// the thread goes as the setup and the players chose.
	Every Span
	// AsChosen is the recipients the rest of the round would take as the
	// players chose, Planned those under the plan; Room what the budget
	// leaves this game until the close, Limit the budget, Used what was
	// sent in the last 24 hours.
	AsChosen, Planned, Room, Limit, Used int
	// Changed: the plan has just begun (Every set) or ended.
	Changed bool
}

// SendingHold tells the referee that the mailbox's provider refuses mail
// for its sending limit: every message waits, none is lost.
type SendingHold struct {
	Since Moment
	// Reply is the provider's refusal, as it said it.
	Reply string
	// Sent is the recipients sent in the last 24 hours when it refused;
	// Learned the limit the host keeps from now on (0: none).
	Sent, Learned int
	// Waiting is the messages of every game that wait.
	Waiting int
	// Blocked: the same refusal of many messages, not a known limit reply.
	Blocked bool
}

// Revoked tells the referee that the mail provider no longer accepts the
// host's OAuth2 authorisation.
type Revoked struct {
	Since Moment
	// Error is what the provider answered.
	Error string
	// Reading and Sending say which of IMAP and SMTP log in with it.
	Reading, Sending bool
}

// Restored tells a game's referee what a restore of the host's lost
// database did to the game (docs/hosting.md, "Backing up and restoring").
type Restored struct {
	At Moment
	// Backup is the file name of the backup the restore started from, ""
	// for none: the game was rebuilt from the mailbox alone.
	Backup string
	// Replayed is how many of the game's messages were applied anew;
	// Before and After its events in the backup and now.
	Replayed, Before, After int
	// Again are the first few of the game's mails that go out again, the
	// host not knowing whether it had sent them; AgainCount all of them,
	// More those Again leaves out.
	Again            []Resent
	AgainCount, More int
	// NoSentFolder: the mailbox has no folder of sent mail to look in.
	NoSentFolder bool
	// Missing are the first few messages of the game the host had read
	// that the mailbox no longer holds; MissingCount all of them,
	// MissingMore those Missing leaves out. Paused: the restore paused the
	// game for them, until the referee's RESUME.
	Missing                   []Gone
	MissingCount, MissingMore int
	Paused                    bool
	// Unaccounted is how many messages the mailbox's folders numbered and
	// no longer hold, for no game that can be told (service.Gap).
	Unaccounted int
}

// Gone is a message the mailbox no longer holds.
type Gone struct {
	Arrived Moment
	From    string
	Subject string
}

// Resent is one mail a restore sends (again).
type Resent struct {
	Subject    string
	Recipients int
}

// Failure is a message the SMTP server refused for good.
type Failure struct {
	Recipient string
	Name      string
	Kind      string
	MessageID string
	Error     string
	Attempts  int
}

// Moment is an instant shown in the game's zone (D8: always absolute, with
// its zone). A mail is read hours after it is sent, so it never says how
// long is left: "in 8 h" would be wrong by then.
type Moment struct {
	T    time.Time
	Now  time.Time
	Zone *time.Location
	// Held is the deadline as it was set, when the weekend rule (D7) moved
	// the close to T.
	Held time.Time
	// Weekend is the place whose weekend held it, as a sentence names it
	// ("Chicago", "Berlin"): the game's window (D7).
	Weekend string
	// Own is the reader's own zone (ZONE), when they chose one: the time
	// is shown in it too, beside the game's.
	Own *time.Location
	// Lang is the reader's language, set for the whole view by Render.
	Lang string
}

// own is the time in the reader's own zone, " (Wed 03:47 CET for you)", or
// "" when they chose none or theirs reads the same as the game's.
func (m Moment) own() string {
	if m.Own == nil {
		return ""
	}
	game, mine := m.T.In(m.zone()), m.T.In(m.Own)
	if game.Format("MST -0700") == mine.Format("MST -0700") {
		return ""
	}
	l := lang.Get(m.Lang)
	return " " + l.Sprintf("(%s for you)", l.Time(lang.LayoutWeekday, mine))
}

// Why says in a sentence why a round closes later than its deadline: the
// weekend rule held it (D7). Empty when nothing moved it.
func (m Moment) Why() string {
	if m.Held.IsZero() || m.Held.Equal(m.T) {
		return ""
	}
	held := Moment{T: m.Held, Zone: m.Zone, Lang: m.Lang}
	l := lang.Get(m.Lang)
	return l.Sprintf("That is later than the deadline, %s, because no day round closes between Friday 17:00 and Monday 07:00 %s.",
		held.String(), l.Sprintf("%s time", m.Weekend))
}

// IsZero reports whether no time is set.
func (m Moment) IsZero() bool { return m.T.IsZero() }

func (m Moment) zone() *time.Location {
	if m.Zone == nil {
		return time.UTC
	}
	return m.Zone
}

// String is the absolute time, e.g. "Thu 3 Dec 2026 22:00 EST" (in
// German "Do. 3. Dez. 2026, 22:00 EST").
func (m Moment) String() string {
	if m.T.IsZero() {
		return ""
	}
	return lang.Get(m.Lang).Time(lang.LayoutDateTime, m.T.In(m.zone())) + m.own()
}

// Short is the time without the year, e.g. "Thu 3 Dec 22:00 EST", for
// lines that repeat it.
func (m Moment) Short() string {
	if m.T.IsZero() {
		return ""
	}
	return lang.Get(m.Lang).Time(lang.LayoutShort, m.T.In(m.zone())) + m.own()
}

// Span is a length of time, in the reader's language.
type Span struct {
	D time.Duration
	// Lang is the reader's language, set for the whole view by Render.
	Lang string
}

// SpanOf is a length of time, for a view.
func SpanOf(d time.Duration) Span { return Span{D: d} }

// String is the length in words, to the minute: "12 h", "1 day 12 h",
// "1 h 30 min", "45 min".
func (s Span) String() string {
	l := lang.Get(s.Lang)
	d := s.D.Round(time.Minute)
	if d < time.Minute {
		return l.Phrase("less than a minute")
	}
	days := int(d / (24 * time.Hour))
	d -= time.Duration(days) * 24 * time.Hour
	h := int(d / time.Hour)
	d -= time.Duration(h) * time.Hour
	mins := int(d / time.Minute)
	var parts []string
	if days > 0 {
		parts = append(parts, l.Count(days, "%d day", "%d days"))
	}
	if h > 0 {
		parts = append(parts, l.Sprintf("%d h", h))
	}
	// Beside days, minutes are noise.
	if mins > 0 && days == 0 {
		parts = append(parts, l.Sprintf("%d min", mins))
	}
	return strings.Join(parts, " ")
}
