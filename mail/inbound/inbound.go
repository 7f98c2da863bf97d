// Package inbound decides what an incoming mail means to the host: which of
// its addresses it was sent to, who sent it and whether that sender is
// believed, whether it must be ignored (auto-replies, bounces, the host's own
// mail), and which commands and discussion it holds.
//
// Inspect does all of that for one raw message and returns a Report; it is
// what `mafiamail parse` prints and what the mail watcher applies. A Processor
// adds what needs memory across messages: a per-sender rate limit.
//
// Authentication is as docs/design.md states it: a message to a participant's
// channel counts only if its token is known and its From is that
// participant's registered address, and, where an authserv-id is configured,
// the topmost Authentication-Results field from that id passes. A refused
// message is answered once, privately, at the registered address of the
// participant it claimed to be — never at the From address, which may be
// forged.
//
// The route says which channel a message came in on; it does not say that
// the participant may use it. Only Mafiosi are given a mafia-list address,
// but the token is the same on every channel, so the rules engine must check
// that a message on RouteMafia comes from a Mafioso.
package inbound

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mafiamail/mafiamail/lang/phrase"
	"github.com/mafiamail/mafiamail/mail/address"
	"github.com/mafiamail/mafiamail/mail/command"
	"github.com/mafiamail/mafiamail/mail/message"
	"github.com/mafiamail/mafiamail/mail/reply"
)

// Defaults for Config.
const (
	DefaultMaxSize = 10 << 20 // 10 MiB
	// DefaultMaxCommands leaves room for a referee who ADDs a whole
	// mafia150 game (25 players) and sets it up in one message.
	DefaultMaxCommands = 50
)

// Config is what Inspect needs to know about the host.
type Config struct {
	// HostAddress is the host's bare address, host@example.org.
	HostAddress string
	// AuthServID is the authserv-id of the receiving mail server whose
	// Authentication-Results field is trusted; empty means no check.
	AuthServID string
	// ListIDDomain is the domain of the List-Id the host puts on its own
	// mail; mail carrying it is the host's own. Default: the domain of
	// HostAddress.
	ListIDDomain string
	// MaxSize is the largest message read, in bytes (default 10 MiB).
	MaxSize int
	// MaxCommands is the most command lines one message may hold
	// (default 50).
	MaxCommands int
}

func (c Config) withDefaults() Config {
	if c.MaxSize <= 0 {
		c.MaxSize = DefaultMaxSize
	}
	if c.MaxCommands <= 0 {
		c.MaxCommands = DefaultMaxCommands
	}
	if c.ListIDDomain == "" {
		_, c.ListIDDomain, _ = splitAddress(c.HostAddress)
	}
	c.ListIDDomain = strings.ToLower(c.ListIDDomain)
	return c
}

// Validate reports a configuration Inspect cannot work with.
func (c Config) Validate() error {
	if _, _, ok := splitAddress(c.HostAddress); !ok {
		return fmt.Errorf("inbound: host address %q is not an address", c.HostAddress)
	}
	if strings.Contains(c.HostAddress, "+") {
		return fmt.Errorf("inbound: host address %q must be the bare address, without a +tag", c.HostAddress)
	}
	return nil
}

// Participant is a registered player, or the referee, of a game.
type Participant struct {
	Name     string `json:"name"`
	Address  string `json:"address"`
	Referee  bool   `json:"referee,omitempty"`
	Observer bool   `json:"observer,omitempty"`
}

// Directory finds the participant a token belongs to. The store implements
// it; tests use a map.
type Directory interface {
	Participant(game, token string) (Participant, bool)
}

// VerdictKind is what becomes of a message.
type VerdictKind string

// The verdicts.
const (
	Accepted VerdictKind = "accepted" // apply its commands
	Refused  VerdictKind = "refused"  // apply nothing; tell Notify why, if set
	Ignored  VerdictKind = "ignored"  // apply nothing, answer nothing
)

// Reasons a message is refused.
const (
	ReasonMalformed       = "malformed"
	ReasonTooLarge        = "too-large"
	ReasonTooManyCommands = "too-many-commands"
	ReasonNoRoute         = "no-route"
	ReasonUnknownAddress  = "unknown-address"
	ReasonSenderMismatch  = "sender-mismatch"
	ReasonAuthMissing     = "auth-missing"
	ReasonAuthFailed      = "auth-failed"
	ReasonRateLimited     = "rate-limited"
	ReasonBadAddress      = "bad-address"
)

// Verdict is what becomes of a message, and why.
type Verdict struct {
	Kind   VerdictKind `json:"kind"`
	Reason string      `json:"reason,omitempty"`
	// Explanation is a sentence for people: the referee reading `parse`
	// output, and, for a refusal, the participant told about it.
	Explanation string `json:"explanation,omitempty"`
	// Why is Explanation as its format and arguments, for the notice to
	// word in its reader's language.
	Why *phrase.Error `json:"-"`
	// Notify is the address a refusal is to be sent to: the registered
	// address of the participant the message claimed to come from, or
	// empty when nobody is to be told.
	Notify string `json:"notify,omitempty"`
	// Bounce is set for a delivery failure, which counts against
	// BouncedAddress when it could be read.
	Bounce         bool   `json:"bounce,omitempty"`
	BouncedAddress string `json:"bounced_address,omitempty"`
}

// Sender is who sent a message, and how far that is believed.
type Sender struct {
	Address        string       `json:"address,omitempty"`
	Name           string       `json:"name,omitempty"`
	Participant    *Participant `json:"participant,omitempty"`
	Authentication *AuthResult  `json:"authentication,omitempty"`
}

// Body describes how the text was found.
type Body struct {
	// Type is the media type the text came from (text/plain, text/html).
	Type string `json:"type,omitempty"`
	// Cut says where the author's text ended (see reply.Parts.Cut).
	Cut         string               `json:"cut,omitempty"`
	QuotedLines int                  `json:"quoted_lines,omitempty"`
	Signature   string               `json:"signature,omitempty"`
	Ignored     []message.Attachment `json:"attachments_ignored,omitempty"`
	Warnings    []string             `json:"warnings,omitempty"`
	// LeftOut is the text that could not be told apart from a quote (see
	// reply.Parts.Unsure): neither read for commands nor relayed, and
	// named in the sender's answer.
	LeftOut string `json:"left_out,omitempty"`
}

// Report is everything Inspect found out about a message.
type Report struct {
	MessageID string  `json:"message_id,omitempty"`
	Subject   string  `json:"subject,omitempty"`
	Size      int     `json:"size"`
	Route     Route   `json:"route"`
	Sender    Sender  `json:"sender"`
	Verdict   Verdict `json:"verdict"`
	// CommandSet is the set of verbs the message was read against.
	CommandSet command.Set         `json:"command_set,omitempty"`
	Commands   []command.Command   `json:"commands,omitempty"`
	Errors     []command.LineError `json:"command_errors,omitempty"`
	// Misplaced are command lines of another address than this one: they
	// are neither applied nor relayed, and the sender is told where they go.
	Misplaced  []command.Misplaced `json:"misplaced,omitempty"`
	Discussion string              `json:"discussion,omitempty"`
	// Inline, for a message to the thread or the mafia list that answers
	// between quoted lines, are its answers, each with the lines it
	// quotes. Discussion then holds the answers alone: the quoted lines
	// are relayed only once checked against the mail answered (see
	// InlineDiscussion).
	Inline []InlineAnswer `json:"inline_reply,omitempty"`
	// Own is the author's own text (quotes and signature removed), and
	// InReplyTo the Message-IDs the message answers (In-Reply-To, then
	// References): what the host needs to point a message sent to the
	// wrong address to the right one.
	Own       string   `json:"-"`
	InReplyTo []string `json:"-"`
	Body      *Body    `json:"body,omitempty"`
	// Unproven is set for mail that no token ties to a seat and no
	// trusted authentication confirms (to the host's address or a
	// sign-up address, without an authserv-id): its From may be anyone's,
	// so what answers it must be of no use to a forger (see
	// Processor.Limit). Quiet is set when such an address has had its
	// answer today: the message is applied, and answered no more.
	Unproven bool                    `json:"unproven,omitempty"`
	Quiet    bool                    `json:"quiet,omitempty"`
	Delivery *message.DeliveryReport `json:"delivery_report,omitempty"`
}

// Inspect reads one raw message and decides what it means. It does no I/O
// and keeps no state: the same message, configuration and directory always
// give the same report.
//
// The checks run in this order: the header must be readable; mail that must
// never be answered is ignored; the message must be routed to one of the
// host's addresses; a participant's channel needs a known token, the
// registered From and, if configured, a passing Authentication-Results;
// then the size limit, the body, and the command limit. Commands are read
// from refused messages too, so that a referee can see what a refused
// message would have done; only an accepted message's commands may be
// applied.
func Inspect(raw []byte, cfg Config, dir Directory) Report {
	return InspectSized(raw, len(raw), cfg, dir)
}

// InspectSized is Inspect for a message of size bytes of which raw may
// hold only the header: a reader that knows a message is over the size
// limit need not fetch it whole to have it refused. A message cut short
// that is not over the limit cannot be read, and is refused as malformed.
func InspectSized(raw []byte, size int, cfg Config, dir Directory) Report {
	cfg = cfg.withDefaults()
	r := Report{Size: size}

	tooLarge := size > cfg.MaxSize || size > len(raw)
	var m *message.Parsed
	var err error
	if tooLarge {
		m, err = message.ParseHeader(raw)
	} else {
		m, err = message.Parse(raw)
	}
	if m == nil {
		r.Verdict = refuse(ReasonMalformed, phrase.Errorf("The message could not be read: %s.", cleanError(err)), "")
		return r
	}
	bodyErr := err
	r.MessageID, r.Subject = m.MessageID, m.Subject
	for _, f := range []string{"In-Reply-To", "References"} {
		if ids, err := m.Header.MsgIDList(f); err == nil {
			for _, id := range ids {
				r.InReplyTo = append(r.InReplyTo, "<"+id+">")
			}
		}
	}
	r.Sender.Address, r.Sender.Name = strings.ToLower(m.From[0].Address), m.From[0].Name
	r.Delivery = m.Report

	r.Route = FindRoute(m.Header, cfg.HostAddress)
	if v := neverAnswer(m, cfg); v != nil {
		r.Verdict = *v
		return r
	}

	where := describe(r.Route)
	switch r.Route.Kind {
	case RouteNone:
		r.Verdict = refuse(ReasonNoRoute, phrase.Errorf("No recipient of the message is an address of the host %s.", cfg.HostAddress), "")
		return r
	case RouteInvalid:
		r.Verdict = refuse(ReasonUnknownAddress, phrase.Errorf("%s is not an address of any game.", r.Route.Address), "")
		return r
	}

	if !r.Route.Kind.Participant() && !address.Valid(r.Sender.Address) {
		// Only a plain address may be given a seat or a game, and only a
		// plain address is ever written into an envelope: an answer to
		// this one is what an attacker would want, so none is sent.
		r.Verdict = refuse(ReasonBadAddress, phrase.Errorf(
			"The message came from %q, which is not a plain mail address (name@domain, without quotes, spaces or brackets): "+
				"the host neither answers nor seats such an address. Write from an ordinary address.", r.Sender.Address), "")
		return r
	}

	set := setFor(r.Route.Kind, false)
	notify := ""
	if r.Route.Kind.Participant() {
		p, ok := dir.Participant(r.Route.Game, r.Route.Token)
		if !ok {
			r.Verdict = refuse(ReasonUnknownAddress, phrase.Errorf("%s belongs to no participant of game %s.", r.Route.Address, r.Route.Game), "")
			return r
		}
		r.Sender.Participant = &p
		notify = p.Address
		set = setFor(r.Route.Kind, p.Referee)
		if len(m.From) != 1 || !sameAddress(m.From[0].Address, p.Address) {
			r.Verdict = refuse(ReasonSenderMismatch, phrase.Errorf(
				"A message to %s was not accepted: it came from %s, not from your registered address %s. "+
					"If you sent it, send it again from %s; if you did not, someone else knows your address for this game.",
				where, fromList(m), p.Address, p.Address), notify)
			r.readCommands(m, set)
			return r
		}
	}
	if len(m.From) != 1 {
		r.Verdict = refuse(ReasonMalformed, phrase.Errorf("The From field of the message names %d addresses; the host needs exactly one.", len(m.From)), notify)
		return r
	}

	if cfg.AuthServID != "" {
		a := CheckAuthentication(m.Header, cfg.AuthServID, m.From[0].Address)
		r.Sender.Authentication = &a
		if !a.Passed() {
			var detail any = a.Detail
			if a.Why != nil {
				detail = a.Why
			}
			reason, why := ReasonAuthFailed, phrase.Errorf("A message to %s in your name was not accepted: "+
				"the mail server could not confirm that it came from %s (%s). "+
				"If you sent it, check that your mail provider signs your mail (DKIM) and send it again.", where, m.From[0].Address, detail)
			if a.Result == "none" {
				reason, why = ReasonAuthMissing, phrase.Errorf("A message to %s in your name was not accepted: "+
					"the receiving mail server %s recorded no authentication result for it. "+
					"If you sent it, check that your mail provider signs your mail (DKIM) and send it again.", where, cfg.AuthServID)
			}
			r.Verdict = refuse(reason, why, notify)
			r.readCommands(m, set)
			return r
		}
	}

	if tooLarge && size > cfg.MaxSize {
		r.Verdict = refuse(ReasonTooLarge, phrase.Errorf(
			"A message to %s was not accepted: it is %s, more than the limit of %s. Send commands as plain text, without attachments.",
			where, sizeText(size), sizeText(cfg.MaxSize)), notify)
		return r
	}
	if tooLarge {
		r.Verdict = refuse(ReasonMalformed, phrase.Errorf("A message to %s was not accepted: only %d of its %d bytes could be read. "+
			"Send it again.", where, len(raw), size), notify)
		return r
	}
	if bodyErr != nil {
		r.Verdict = refuse(ReasonMalformed, phrase.Errorf("A message to %s was not accepted: its content could not be read (%s). "+
			"Send it again as ordinary text.", where, cleanError(bodyErr)), notify)
		return r
	}

	res := r.readCommands(m, set)
	if n := res.Lines(); n > cfg.MaxCommands {
		r.Verdict = refuse(ReasonTooManyCommands, phrase.Errorf(
			"A message to %s was not accepted: it holds %d command lines, and at most %d are read from one message. "+
				"Nothing in it was applied; send the commands in several messages.", where, n, cfg.MaxCommands), notify)
		return r
	}
	r.Verdict = Verdict{Kind: Accepted}
	// A reply to a confirmation address is proven by its token, which
	// only the mailbox of the request it confirms was told.
	r.Unproven = !r.Route.Kind.Participant() && r.Route.Kind != RouteConfirm && cfg.AuthServID == ""
	return r
}

// readCommands fills in the text, commands and discussion of the report.
func (r *Report) readCommands(m *message.Parsed, set command.Set) command.Result {
	parts := reply.Split(m.Text)
	res := command.Parse(parts.New, set)
	r.CommandSet = set
	r.Own = parts.New
	r.Commands, r.Errors, r.Misplaced, r.Discussion = res.Commands, res.Errors, res.Misplaced, res.Discussion
	if set == command.Thread || set == command.Mafia {
		if answers, ok := inlineAnswers(m.Text, parts, set); ok {
			r.Inline = answers
			var own []string
			for _, a := range answers {
				if a.Discussion != "" {
					own = append(own, a.Discussion)
				}
			}
			r.Discussion = strings.Join(own, "\n\n")
		}
	}
	r.Body = &Body{
		Type:      m.TextType,
		Cut:       parts.Cut,
		Signature: parts.Signature,
		Ignored:   m.Attachments,
		Warnings:  m.Warnings,
	}
	if parts.Quoted != "" {
		r.Body.QuotedLines = strings.Count(parts.Quoted, "\n") + 1
	}
	if parts.Unsure != "" {
		// Nothing is lost in silence: the sender's answer names the
		// part that was set aside, as it names a line it could not read.
		r.Body.LeftOut = parts.Unsure
		r.Errors = append(r.Errors, leftOut(parts.Unsure))
	}
	return res
}

// leftOut is the line of the sender's answer that tells what part of the
// message was neither read nor passed on, and why.
func leftOut(unsure string) command.LineError {
	first, n := "", 0
	for _, l := range strings.Split(unsure, "\n") {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		if n == 0 {
			first = l
		}
		n++
	}
	if r := []rune(first); len(r) > 60 {
		first = string(r[:60]) + "…"
	}
	p := phrase.Errorf("this line could not be told apart from the message you replied to " +
		"(quoted text without \">\" marks, or text below your phone's signature), so nothing in it was read as a command " +
		"or passed on; if you wrote it, send it again above the quoted message")
	if n > 1 {
		p = phrase.Errorf("this line and the %d below it could not be told apart from the message you replied to "+
			"(quoted text without \">\" marks, or text below your phone's signature), so nothing in it was read as a command "+
			"or passed on; if you wrote it, send it again above the quoted message", n-1)
	}
	return command.LineError{Text: first, Message: p.Error(), Phrase: p}
}

// cleanError turns a parse error into words for a sentence: without the
// package prefixes, on one line.
func cleanError(err error) string {
	s := err.Error()
	for _, p := range []string{message.ErrMalformed.Error() + ": ", "message: "} {
		s = strings.ReplaceAll(s, p, "")
	}
	return strings.TrimRight(strings.Join(strings.Fields(s), " "), ".")
}

func refuse(reason string, why *phrase.Error, notify string) Verdict {
	return Verdict{Kind: Refused, Reason: reason, Explanation: why.Error(), Why: why, Notify: notify}
}

// explain sets the verdict's sentence, in English and as a phrase.
func (v *Verdict) explain(why *phrase.Error) { v.Explanation, v.Why = why.Error(), why }

// setFor is the command set read at a route.
func setFor(k RouteKind, referee bool) command.Set {
	switch k {
	case RouteThread:
		return command.Thread
	case RoutePrivate:
		if referee {
			return command.Referee
		}
		return command.Private
	case RouteMafia:
		return command.Mafia
	case RouteSignup:
		return command.Signup
	}
	return command.Host
}

// describe names a route in a sentence.
func describe(r Route) *phrase.Error {
	switch r.Kind {
	case RouteThread:
		return phrase.Errorf("the thread of game %s", r.Game)
	case RoutePrivate:
		return phrase.Errorf("your private address in game %s", r.Game)
	case RouteMafia:
		return phrase.Errorf("the mafia list of game %s", r.Game)
	case RouteSignup:
		return phrase.Errorf("the sign-up address of game %s", r.Game)
	case RouteConfirm:
		return phrase.Errorf("a confirmation address of game %s", r.Game)
	}
	return phrase.Errorf("the host")
}

func fromList(m *message.Parsed) string {
	var s []string
	for _, a := range m.From {
		s = append(s, a.Address)
	}
	return strings.Join(s, ", ")
}

func sizeText(n int) *phrase.Error {
	if n >= 1<<20 {
		return phrase.Errorf("%s MiB", strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64))
	}
	return phrase.Errorf("%d KiB", (n+1023)/1024)
}

// JSON is the report as `mafiamail parse` prints it: indented, one trailing
// newline.
func (r Report) JSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // addresses in <…> stay readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("inbound: report: %w", err)
	}
	return b.Bytes(), nil
}

// InlineAnswer is one answer of an inline reply (the author writes between
// quoted lines): the lines it quotes and the author's words below them.
type InlineAnswer struct {
	// Quoted are the quoted lines just above the answer, in full and
	// without their quote marks (reply.InlinePart.Quoted), and Context
	// the same cut to reminders.
	Quoted  []string `json:"quoted,omitempty"`
	Context []string `json:"-"`
	// Discussion is the author's own lines of the answer, its commands
	// taken out.
	Discussion string `json:"discussion,omitempty"`
}

// inlineAnswers reads an inline reply's answers, each with the lines it
// quotes. Commands are still read from the author's own lines alone
// (readCommands); the quoted lines are only shown, and only once checked
// (InlineDiscussion). ok is false for a message that is no inline reply.
func inlineAnswers(text string, parts reply.Parts, set command.Set) ([]InlineAnswer, bool) {
	if parts.Unsure != "" {
		// What the reader could not place is neither relayed nor shown as
		// context.
		return nil, false
	}
	answers := reply.InlineParts(text)
	if answers == nil {
		return nil, false
	}
	// The answers must be exactly the author's text as Split read it:
	// where the two readings differ, the post goes without context rather
	// than with a line Split took for quoted.
	own := make([]string, len(answers))
	for i, a := range answers {
		own[i] = a.Text
	}
	if strings.Join(strings.Fields(strings.Join(own, " ")), " ") != strings.Join(strings.Fields(parts.New), " ") {
		return nil, false
	}
	out := make([]InlineAnswer, len(answers))
	for i, a := range answers {
		out[i] = InlineAnswer{Quoted: a.Quoted, Context: a.Context,
			Discussion: strings.TrimSpace(command.Parse(a.Text, set).Discussion)}
	}
	return out, true
}

// InlineDiscussion is what an inline reply relays: each answer below the
// lines it quotes, those checked against rec, the host's record of the
// mail the reply answers (nil when the host found none it sent the author:
// then no quoted line is relayed). A quoted line every reader of that mail
// was sent is relayed as a quote ("> "), the one layout that shows words
// as someone else's; a line of the mail that is not (a heading, the
// author's own state or receipt) is left out; any other quoted line is the
// author's own, whatever its quote marks say, and is relayed as the
// author's words, without them. Such a line that reads as a command is no
// command (quoted lines never are) and is not relayed either: errs says
// so, for the author's answer.
func (r Report) InlineDiscussion(rec *reply.Record) (discussion string, errs []command.LineError) {
	var blocks []string
	for _, a := range r.Inline {
		var lines []string
		authors := a.Discussion != ""
		for i, k := range rec.Check(a.Quoted) {
			q := strings.TrimSpace(a.Quoted[i])
			switch k {
			case reply.Public:
				c := q
				if i < len(a.Context) {
					c = a.Context[i]
				}
				lines = append(lines, "> "+c)
			case reply.Authors:
				res := command.Parse(q, r.CommandSet)
				if res.Lines() > 0 {
					p := phrase.Errorf("this line is marked as a quote (\">\") of the mail you answered, which does not hold it; " +
						"quoted lines are never done, and this one reads as a command, so it was not passed on either: " +
						"to do it, write it on a line of its own, without \">\"")
					errs = append(errs, command.LineError{Text: q, Message: p.Error(), Phrase: p})
					continue
				}
				if d := strings.TrimSpace(res.Discussion); d != "" {
					lines = append(lines, d)
					authors = true
				}
			}
		}
		if !authors {
			// Commands alone: nothing is posted, nor what they answer.
			continue
		}
		if a.Discussion != "" {
			lines = append(lines, a.Discussion)
		}
		blocks = append(blocks, strings.Join(lines, "\n"))
	}
	return strings.Join(blocks, "\n\n"), errs
}
