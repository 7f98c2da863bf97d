// Package compose turns what happens in a game into the mail the host sends:
// complete RFC 5322 messages, one per recipient, ready for the outbox.
//
// Every message the host sends is caused by an engine.Event and addressed by
// its To (engine.Audience): Public is every player (living and dead), every
// observer and the referee; Mafia is the living Mafiosi; Slot is one player;
// Referee the referee; Address one address that holds no seat. Compose
// resolves the audience against the game's state and writes each reader
// their own copy: their own Reply-To, their own line of state, their own
// footer of commands and addresses.
//
// Conversations. Each reader sees a game as a few conversations: the town
// thread and, for a Mafioso, the mafia list, each one conversation per
// round (a day, a night, the sign-up, the time after the end), and their
// private channel (the referee's channel, for the referee), one for the
// whole game. Every message carries In-Reply-To and References naming the
// root of its conversation (<GAME.thread.d2@domain>, <GAME.mafia.n1@domain>,
// <GAME.p.SLOT@domain>, ...) and the subject of that conversation
// ("[GAME] Day 2", "[GAME] Night 1", "[GAME] Private: NAME"). The root is
// never sent: Thunderbird and other RFC 5256 clients thread by it anyway,
// and Gmail joins messages that share a reference and a subject. So a
// round's mail stays one conversation in every client, the subject in a
// list says where the game stands, and the first line of the body (what
// Gmail, Apple Mail and phones show under the subject) says what happened.
// A round of a large game can still pass the 100 messages Gmail keeps in
// one conversation; it then continues in a second one with the same
// subject, and the next round starts afresh.
//
// Message-IDs are opaque: the game's name, then a keyed hash (HMAC-SHA256,
// keyed by a secret of the game's, see idKey) of the events the message
// carries (their numbers in the game's log), the recipient, the
// conversation and the kind. Composing the same events again gives the same
// Message-IDs, so a copy resent after a crash is recognised as a duplicate
// by every mail client; and since the numbers are hashed with a key no
// player has, no reader can tell from the Message-IDs how many events were
// kept from them (night actions, the mafia list) or when.
//
// Relays (thread posts, the mafia list) come From the host's own address
// with the author's game name as display name, as Mailman's munge_from does:
// the author's address never appears, and DMARC holds.
//
// How a host uses it: compose the events of each engine step as one Batch
// (with the state before the step), in the transaction that stores them.
// When the step answers a message with commands, set Batch.Sender and
// compose the one Reply to that message from the same events: the sender's
// private copies (a tally, a status, a night action's receipt) are then in
// the reply and nowhere else. A game with a digest interval composes its
// batches with HoldForDigest and sends the held posts and votes with
// Digest at each interval. NotAccepted answers a message refused as a
// whole; DeliveryFailure tells the referee about mail that could not be
// delivered.
package compose

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/mail"
	"strconv"
	"strings"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/lang"
	"github.com/mafiamail/mafiamail/templates"
)

// Kinds of message, the values of X-Mafiamail-Kind (docs/design.md "What the host
// sends"), for mail filters.
const (
	KindRole    = "role"    // a role message (S3)
	KindThread  = "thread"  // the town thread: posts, digests, days, votes, closes
	KindTally   = "tally"   // a tally sent on request
	KindDawn    = "dawn"    // the dawn report (N9)
	KindConfirm = "confirm" // a reply to commands, all or some accepted; sign-up and action receipts
	KindError   = "error"   // a reply whose commands were all refused, or a refused message
	KindMafia   = "mafia"   // the mafia list
	KindReferee = "referee" // the referee's channel
	KindEnd     = "end"     // the game's end (W2)
	KindPrivate = "private" // other private news: an inspection's answer, a reminder
)

const (
	productName = "mafiamail"
	digestKind  = "digest"
	// hashDigits is how many hex digits of a SHA-256 name an address or an
	// outside identifier in a Message-ID: enough to tell a game's readers
	// apart. A copy's Message-ID only names its own reader.
	hashDigits = 12
)

// Outgoing is one outgoing message: complete RFC 5322 bytes with their SMTP
// envelope.
type Outgoing struct {
	// MessageID is the Message-ID the bytes carry, with angle brackets.
	MessageID string
	Game      string
	// Kind is the X-Mafiamail-Kind value.
	Kind string
	// From and To are the SMTP envelope: the host's bare address, and the
	// one recipient of this copy.
	From string
	To   []string
	Raw  []byte
	// Recipient names the copy's reader: "s3" (seat 3), "ref" (the
	// referee), "a-…" (an observer or other address).
	Recipient string
	Date      time.Time
	// Contents lists the kinds of news the message carries, in order (see
	// package templates), for logs.
	Contents []string
	// Town is set on mail the town needs before a round's close (T4): a
	// copy of the thread to a player or an observer, or a reminder to
	// vote, which goes to whoever has no vote, as the tally shows. Nothing
	// about such mail is a secret. Answers, the mafia list, a night role's
	// reminder and the referee's mail are never the town's: a close that
	// waited for them would tell of them.
	Town bool
	// Public, for a copy of thread or mafia-list mail, is what every
	// reader of the mail was sent: the lines of its text that the same mail
	// laid out for no one in particular holds too, less the host's headings
	// (its first line, each "▸" line) and its footer, each left blank. A
	// reply's quotes of the mail are relayed as context only where they
	// are these lines (docs/adversaries.md). PublicIn is the conversation
	// they belong to, "thread" or "mafia"; both are empty for other mail.
	Public, PublicIn string
}

// Directory holds what the game state does not: the tokens of the
// participants who hold no seat. Players' tokens are engine.Player.Token.
type Directory struct {
	// RefereeToken is the referee's token in this game.
	RefereeToken string
	// Observers maps an observer's address (any case) to their token; an
	// observer without one can only be written to, not answer.
	Observers map[string]string
}

func (d Directory) observerToken(addr string) string {
	for a, t := range d.Observers {
		if strings.EqualFold(a, addr) {
			return t
		}
	}
	return ""
}

// Logged is an event with its sequence number in the game's log.
type Logged struct {
	Seq   int64
	Event engine.Event
}

// Composer writes the host's mail for one host address.
type Composer struct {
	host   string
	local  string
	domain string
	// sending, if set, tells the host's sending budget for the referee's
	// STATUS.
	sending func(game string) (SendingStatus, bool)
	// lang is the host's default language (SetLanguage).
	lang string
	// alone lays out every copy on its own, sharing nothing with the
	// other copies of its batch: the tests compare the two ways.
	alone bool
}

// SendingStatus is the host's sending budget as the referee's STATUS
// shows it.
type SendingStatus struct {
	// Used is the recipients sent in the host's last day; Limit the
	// budget, 0 for none known.
	Used, Limit int
	// HeldSince is when the provider began refusing mail for its limit,
	// zero while mail flows.
	HeldSince time.Time
	// Waiting counts the messages in the outbox by kind.
	Waiting map[string]int
	// Forecast is when what waits will have gone out; zero when it fits
	// now or no limit is known.
	Forecast time.Time
	// Round is the host's latest forecast for the game's round, nil for
	// none.
	Round *RoundForecast
}

// RoundForecast is the host's forecast for a game's round against the
// sending budget, and the plan it chose to fit (T3).
type RoundForecast struct {
	// Round names the round ("Day 2"); Closes is when it closes.
	Round  string
	Closes time.Time
	// Every is the digest interval the plan sets for everyone, zero for
	// none.
	Every time.Duration
	// AsChosen is the recipients the rest of the round would take as the
	// players chose, Planned those under the plan, Room what the budget
	// leaves the game until the close.
	AsChosen, Planned, Room int
}

// SetSendingStatus makes the referee's STATUS show the sending budget
// that f reports for the game (ok false: nothing to show).
func (c *Composer) SetSendingStatus(f func(game string) (SendingStatus, bool)) { c.sending = f }

// New returns a Composer for the host's bare address, host@example.org.
func New(host string) (*Composer, error) {
	a, err := mail.ParseAddress(host)
	if err != nil {
		return nil, fmt.Errorf("compose: host address %q: %w", host, err)
	}
	local, domain, ok := strings.Cut(a.Address, "@")
	if !ok || local == "" || domain == "" {
		return nil, fmt.Errorf("compose: host address %q has no domain", host)
	}
	if strings.Contains(local, "+") {
		return nil, fmt.Errorf("compose: host address %q must be the bare address, without a +tag", host)
	}
	return &Composer{host: strings.ToLower(a.Address), local: strings.ToLower(local), domain: strings.ToLower(domain)}, nil
}

// SetLanguage sets the host's default language (a tag of package lang):
// the language of mail about no game, and of the games created from now
// on unless their referee sets another.
func (c *Composer) SetLanguage(tag string) { c.lang = tag }

// Language is the host's default language.
func (c *Composer) Language() string {
	if c.lang == "" {
		return lang.Default
	}
	return c.lang
}

// langFor is the language of a reader's copy: the player's own choice,
// else the game's; mail about no game is in the host's.
func (c *Composer) langFor(s *engine.State, r recipient) *lang.Language {
	switch {
	case r.tag != "":
		return lang.Get(r.tag)
	case s == nil:
		return lang.Get(c.Language())
	case r.slot > 0:
		return lang.Get(s.LanguageOf(s.Player(r.slot)))
	}
	if p := playerByAddress(s, r.addr); p != nil && r.slot == 0 && !r.referee && !r.observer {
		return lang.Get(s.LanguageOf(p))
	}
	return lang.Get(s.GameLanguage())
}

// Host returns the host's bare address.
func (c *Composer) Host() string { return c.host }

// Address kinds of docs/design.md "Addresses".
func (c *Composer) tagged(tag string) string { return c.local + "+" + tag + "@" + c.domain }

// ThreadAddress is a participant's way into the town thread.
func (c *Composer) ThreadAddress(game, token string) string {
	return c.tagged(game + "-t-" + token)
}

// PrivateAddress is a participant's private channel.
func (c *Composer) PrivateAddress(game, token string) string {
	return c.tagged(game + "-p-" + token)
}

// MafiaAddress is a Mafioso's way into the mafia list.
func (c *Composer) MafiaAddress(game, token string) string {
	return c.tagged(game + "-m-" + token)
}

// ConfirmAddress is the one-time address a reply to which confirms a
// request held for the sender to prove their address.
func (c *Composer) ConfirmAddress(game, token string) string {
	return c.tagged(game + "-c-" + token)
}

// SignupAddress is a game's public sign-up address.
func (c *Composer) SignupAddress(game string) string { return c.tagged(game) }

// msgID builds a Message-ID from dot-separated parts, with brackets.
func (c *Composer) msgID(parts ...string) string {
	return "<" + strings.Join(parts, ".") + "@" + c.domain + ">"
}

// idKey is the key of a game's Message-IDs: derived from the referee's
// token, a secret of the game's the host keeps and never shows a player.
func idKey(dir Directory, game string) []byte {
	sum := sha256.Sum256([]byte("mafiamail message-id key\x00" + game + "\x00" + dir.RefereeToken))
	return sum[:]
}

// opaqueID is a Message-ID that names its parts without showing them: the
// game, then a keyed hash of the parts.
func (c *Composer) opaqueID(key []byte, game string, parts ...string) string {
	mac := hmac.New(sha256.New, key)
	for _, p := range parts {
		mac.Write([]byte(p))
		mac.Write([]byte{0})
	}
	return c.msgID(game, hex.EncodeToString(mac.Sum(nil))[:opaqueDigits])
}

// namePart names, for opaqueID, the message to reader r whose last event
// left the game in state s. A player's mail is named by what they have been
// sent (engine.State.PublicSent and Player.Sent), so that no part of its
// name depends on an event they were not sent: their Message-IDs are the
// same whatever happened in secret between two of their mails. Anyone
// else's (the referee sees every event; observers and outsiders are no
// players) by the log's numbers of its events, first and last.
func namePart(s *engine.State, r recipient, first, last int64) string {
	if p := s.Player(r.slot); p != nil && !r.referee {
		return "sent-" + strconv.Itoa(s.PublicSent) + "-" + strconv.Itoa(p.Sent)
	}
	return eventsPart(first, last)
}

// eventsPart names the events a message carries, for opaqueID: "41", or
// "41-45".
func eventsPart(first, last int64) string {
	if first == last {
		return strconv.FormatInt(first, 10)
	}
	return strconv.FormatInt(first, 10) + "-" + strconv.FormatInt(last, 10)
}

// opaqueDigits is the length of the hash in a Message-ID: 96 bits.
const opaqueDigits = 24

// hashKey is a short stable digest, for addresses and outside identifiers
// in Message-IDs: it names them without showing them.
func hashKey(s string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(strings.TrimSpace(s))))
	return hex.EncodeToString(sum[:])[:hashDigits]
}

// gameZone is where times are shown (D8).
func gameZone(s *engine.State) *time.Location {
	if s == nil {
		return engine.DefaultLocation()
	}
	return s.GameZone()
}

func moment(s *engine.State, t, now time.Time) templates.Moment {
	return templates.Moment{T: t, Now: now, Zone: gameZone(s)}
}
