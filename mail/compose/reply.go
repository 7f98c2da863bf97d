package compose

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/lang"
	"github.com/mafiamail/mafiamail/lang/phrase"
	"github.com/mafiamail/mafiamail/mail/command"
	"github.com/mafiamail/mafiamail/templates"
)

// Answer is the one private answer to a message that held commands
// (docs/design.md "Commands"): what was accepted, and for each line refused, why.
type Answer struct {
	// State is the game after the message's commands; nil for mail to the
	// host's own address that concerns no game.
	State *engine.State
	Dir   Directory
	// Sender is who sent the message, as the mail layer authenticated them.
	// A sign-up (an outsider's JOIN) is answered as the player it made.
	Sender engine.Actor
	// Channel is where the message arrived.
	Channel engine.Channel
	// Cause identifies the message stably: its Message-ID, or the inbox
	// key when it has none. The reply's Message-ID derives from it.
	Cause    string
	Subject  string
	Received time.Time
	Now      time.Time
	Lines    []Line
	// ReplyTo, when set, is the sender's thread address, where a plain
	// Reply to the answer goes: the answer is about lines that belong there
	// (a vote sent to the private channel), and sending them again is one
	// Reply away.
	ReplyTo string
	// Confirm, when set, is the one-time address a reply to which confirms
	// the lines held for it (Line.Pending), and where a plain Reply goes;
	// the request lapses at ConfirmBy.
	Confirm   string
	ConfirmBy time.Time
}

// Line is one command line and what became of it.
type Line struct {
	// Text is the line as written.
	Text string
	// Label, when set, is the host's own name for what Text stands for
	// ("(the rest of your message)"), worded in the reader's language;
	// Text is then its English.
	Label *phrase.Error
	// Err is why the line was refused: an *engine.Refusal, or the grammar's
	// error for a line that could not be read. Nil: accepted.
	Err error
	// Events are what the engine emitted while applying the line (those of
	// a refused line too: a deadline that passed first).
	Events []engine.Event
	// Pending: the line is neither applied nor refused, but held until the
	// sender proves the address by replying (Answer.Confirm).
	Pending bool
	// Instead, for a refused line, are the lines the sender may have
	// meant, each to send as it stands ("VOTE Bobby" for "VOTE Bob" with
	// Bob dead), with Meant the name each one means, if it is one of
	// several.
	Instead []Instead
}

// Instead is a line to send in place of a refused one, and what it means
// (empty: the line itself, written as it reads).
type Instead struct {
	Meant, Line string
}

// Reply composes the answer to a message with commands. Its sender's own
// private copies of the events (a tally, a status, a night action's receipt)
// are inside it; compose the events as a Batch with the same Sender so that
// they are not sent twice.
func (c *Composer) Reply(rp Answer) (Outgoing, error) {
	dr, err := c.replyDraft(rp)
	if err != nil {
		return Outgoing{}, err
	}
	return c.finish(dr)
}

// DraftReply decides the answer to a message as Reply does, and leaves it
// to be laid out (see Drafts).
func (c *Composer) DraftReply(rp Answer) (Drafts, error) {
	dr, err := c.replyDraft(rp)
	if err != nil {
		return Drafts{}, err
	}
	return Drafts{c: c, drafts: []draft{dr}}, nil
}

// replyDraft decides the answer to a message: everything but its layout.
func (c *Composer) replyDraft(rp Answer) (draft, error) {
	if len(rp.Lines) == 0 {
		return draft{}, errors.New("compose: a reply needs at least one command line")
	}
	s := rp.State
	game := ""
	if s != nil {
		game = s.Game
	}
	to := senderRecipient(s, rp.Dir, rp.Sender)
	if to.addr == "" {
		return draft{}, fmt.Errorf("compose: reply to %s: no address to answer", rp.Sender.Kind)
	}
	l := c.langFor(s, to)
	d := delivery{r: to, ch: templates.Private}
	if game == "" {
		d.ch = templates.Host
	}
	view := &templates.Answer{
		Received: moment(s, rp.Received, rp.Now),
		Subject:  strings.TrimSpace(rp.Subject),
		Where:    where(rp.Channel, game, l),
	}
	if rp.Confirm != "" {
		view.Confirm, view.ConfirmBy = rp.Confirm, moment(s, rp.ConfirmBy, rp.Now)
	}
	for _, ln := range rp.Lines {
		rl := templates.AnswerLine{Text: strings.TrimSpace(ln.Text), Accepted: ln.Err == nil && !ln.Pending}
		if ln.Label != nil {
			rl.Text = c.langFor(s, to).Error(ln.Label)
		}
		switch {
		case ln.Pending:
			rl.Pending = true
			view.Pending++
		case ln.Err != nil:
			rl.Error = refusalText(ln.Err, ln.Instead, l)
			view.Refused++
		default:
			view.Accepted++
		}
		if s == nil && ln.Err == nil {
			// Mail to the host's own address concerns no game, so no
			// engine answers its HELP: the host does.
			if c, ok, err := command.ParseLine(ln.Text, command.Host); ok && err == nil && c.Verb == command.Help {
				if c.Text == command.HelpRules {
					rl.Sections = append(rl.Sections, &templates.Section{Kind: "rules", Text: playersRules(l)})
				} else {
					rl.Sections = append(rl.Sections, &templates.Section{Kind: "help", Help: &templates.Help{Host: true}})
				}
			}
		}
		if s != nil {
			for _, e := range ln.Events {
				for _, ed := range deliveries(e, s, rp.Dir) {
					if ed.r.key != to.key {
						continue
					}
					sec, err := c.section(e, s, ed)
					if err != nil {
						return draft{}, fmt.Errorf("compose: reply: %w", err)
					}
					// The thread has the public news in full; the reply
					// only names it.
					sec.Brief = ed.ch == templates.Thread
					rl.Sections = append(rl.Sections, sec)
				}
			}
		}
		view.Lines = append(view.Lines, rl)
	}
	kind := KindConfirm
	if view.Accepted == 0 && view.Pending == 0 {
		kind = KindError
	}
	idGame := game
	if idGame == "" {
		idGame = productName
	}
	sec := &templates.Section{Kind: "reply", Reply: view}
	dr := draft{
		game: game, d: d, state: s, now: rp.Now,
		sections: []*templates.Section{sec}, main: sec, kind: kind,
		id: c.opaqueID(idKey(rp.Dir, game), idGame, "re", strings.ToLower(strings.TrimSpace(rp.Cause)), to.key),
	}
	if rp.ReplyTo != "" {
		dr.replyTo, dr.replyName = rp.ReplyTo, l.Phrase("town thread")
		if game != "" {
			dr.replyName = l.Sprintf("%s town thread", game)
		}
	}
	if rp.Confirm != "" {
		dr.replyTo, dr.replyName = rp.Confirm, l.Phrase("confirm")
		if game != "" {
			dr.replyName = l.Sprintf("%s confirm", game)
		}
	}
	return dr, nil
}

// senderRecipient is whom a reply goes to: the sender's registered address,
// never the From of the message answered (which may be forged).
func senderRecipient(s *engine.State, dir Directory, a engine.Actor) recipient {
	switch {
	case s == nil:
	case a.Kind == engine.ByPlayer:
		if p := s.Player(a.Slot); p != nil {
			return playerRecipient(p)
		}
	case a.Kind == engine.ByReferee, strings.EqualFold(a.Address, s.Referee):
		// The referee writing to the sign-up address is still the referee.
		return refereeRecipient(s, dir)
	}
	if p := playerByAddress(s, a.Address); p != nil {
		return playerRecipient(p)
	}
	return addressRecipient(s, dir, a.Address)
}

// where names the channel a message arrived at.
func where(ch engine.Channel, game string, l *lang.Language) string {
	switch ch {
	case engine.Thread:
		return l.Phrase("the town thread")
	case engine.Private:
		return l.Phrase("your private channel")
	case engine.MafiaCh:
		return l.Phrase("the mafia list")
	case engine.Signup:
		return l.Sprintf("the sign-up address of game %s", game)
	}
	return ""
}

// refusalText is a refusal as the sender reads it, with the names they may
// have meant, or, where the host can write them, the lines to send for
// each.
func refusalText(err error, instead []Instead, l *lang.Language) string {
	var r *engine.Refusal
	if errors.As(err, &r) {
		msg := r.Message
		if r.Phrase != nil {
			msg = r.Phrase.Sprint(l.Phrase)
		}
		if len(r.Candidates) > 0 && len(instead) == 0 {
			msg = l.Sprintf("%s (did you mean %s?)", msg, templates.ListOrIn(l.Tag, r.Candidates))
		}
		return withInstead(sentence(msg), instead, l)
	}
	return withInstead(sentence(l.Error(err)), instead, l)
}

// withInstead adds to a refusal the lines the sender may have meant, each
// last in its sentence with no full stop after it, to be copied as it is.
func withInstead(msg string, instead []Instead, l *lang.Language) string {
	for _, in := range instead {
		s := l.Sprintf("send this line instead: %s", in.Line)
		if in.Meant != "" {
			s = l.Sprintf("if you meant %s, send this line: %s", in.Meant, in.Line)
		}
		msg += " " + strings.TrimSuffix(sentence(s), ".")
	}
	return msg
}

// sentence capitalises the first letter and ends with a full stop.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	// The first letter, not the first byte: "état", "über".
	r, n := utf8.DecodeRuneInString(s)
	s = string(unicode.ToUpper(r)) + s[n:]
	if !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "?") && !strings.HasSuffix(s, "!") {
		s += "."
	}
	return s
}

// Notice tells a participant that a message of theirs was refused as a
// whole (a failed authentication, a sender that is not theirs, a rate
// limit): nothing in it was applied.
type Notice struct {
	// State is the game the message claimed to be for; nil when none.
	State *engine.State
	Dir   Directory
	// To is the registered address of the participant the message claimed
	// to come from (the inbound verdict's Notify): never its From.
	To string
	// Reason is the inbound verdict's reason code ("auth-failed", ...) and
	// Explanation its sentence; Why, when set, is the sentence as its
	// format and arguments, worded in the reader's language.
	Reason      string
	Explanation string
	Why         *phrase.Error
	Cause       string
	Subject     string
	Received    time.Time
	Now         time.Time
}

// NotAccepted composes the notice of a refused message.
func (c *Composer) NotAccepted(n Notice) (Outgoing, error) {
	if strings.TrimSpace(n.To) == "" {
		return Outgoing{}, errors.New("compose: a notice needs the address to tell")
	}
	s := n.State
	game := ""
	var to recipient
	switch {
	case s != nil && strings.EqualFold(n.To, s.Referee):
		game = s.Game
		to = refereeRecipient(s, n.Dir)
	case s != nil:
		game = s.Game
		if p := playerByAddress(s, n.To); p != nil {
			to = playerRecipient(p)
		} else {
			to = addressRecipient(s, n.Dir, n.To)
		}
	default:
		to = recipient{key: "a-" + hashKey(n.To), addr: n.To}
	}
	d := delivery{r: to, ch: templates.Private}
	if game == "" {
		d.ch = templates.Host
	}
	why := n.Explanation
	if n.Why != nil {
		why = c.langFor(s, to).Error(n.Why)
	}
	sec := &templates.Section{
		Kind: "refused", Variant: n.Reason, Reason: sentence(why),
		Text: strings.TrimSpace(n.Subject), When: moment(s, n.Received, n.Now),
	}
	idGame := game
	if idGame == "" {
		idGame = productName
	}
	return c.finish(draft{
		game: game, d: d, state: s, now: n.Now, sections: []*templates.Section{sec}, main: sec,
		kind: KindError, id: c.opaqueID(idKey(n.Dir, game), idGame, "refused", strings.ToLower(strings.TrimSpace(n.Cause)), to.key),
	})
}

// Failure is a message the SMTP server refused for good (a 5xx), to be
// reported to the game's referee (docs/design.md "Guarantees").
type Failure struct {
	State *engine.State
	Dir   Directory
	// Recipient is the address that could not be reached; Kind and
	// MessageID describe the message that failed.
	Recipient string
	Kind      string
	MessageID string
	// Error is the server's answer; Phrase, when set, is the host's
	// sentence around it (Error as it reads in English), worded in the
	// referee's language.
	Error    string
	Phrase   *phrase.Error
	Attempts int
	Now      time.Time
}

// DeliveryFailure composes the referee's notice of a failed delivery.
func (c *Composer) DeliveryFailure(f Failure) (Outgoing, error) {
	s := f.State
	if s == nil {
		return Outgoing{}, errors.New("compose: a delivery failure needs its game")
	}
	ref := refereeRecipient(s, f.Dir)
	text := f.Error
	if f.Phrase != nil {
		text = c.langFor(s, ref).Error(f.Phrase)
	}
	view := &templates.Failure{Recipient: f.Recipient, Kind: f.Kind, MessageID: f.MessageID,
		Error: strings.TrimSpace(text), Attempts: f.Attempts}
	switch p := playerByAddress(s, f.Recipient); {
	case p != nil:
		view.Name = p.Name
	case strings.EqualFold(f.Recipient, s.Referee):
		view.Name = "you, the referee"
	}
	sec := &templates.Section{Kind: "failure", Failure: view}
	return c.finish(draft{
		game: s.Game, d: delivery{r: ref, ch: templates.Private}, state: s, now: f.Now,
		sections: []*templates.Section{sec}, main: sec, kind: KindReferee,
		id: c.opaqueID(idKey(f.Dir, s.Game), s.Game, "failed", strings.ToLower(strings.TrimSpace(f.MessageID+" "+f.Recipient)), ref.key),
	})
}

// Hold is the referee's notice that the mailbox's provider refuses mail
// for its sending limit.
type Hold struct {
	State *engine.State
	Dir   Directory
	// Since is when the provider began refusing; Reply what it said.
	Since time.Time
	Reply string
	// Sent, Learned, Waiting and Blocked are as in templates.SendingHold.
	Sent, Learned, Waiting int
	Blocked                bool
	// Number tells this hold from the host's earlier ones.
	Number int
	Now    time.Time
}

// SendingHold tells a game's referee, once per hold, that mail waits for
// the provider's sending limit.
func (c *Composer) SendingHold(h Hold) (Outgoing, error) {
	s := h.State
	if s == nil {
		return Outgoing{}, errors.New("compose: a sending hold notice needs its game")
	}
	view := &templates.SendingHold{Since: moment(s, h.Since, h.Now), Reply: strings.TrimSpace(h.Reply),
		Sent: h.Sent, Learned: h.Learned, Waiting: h.Waiting, Blocked: h.Blocked}
	return c.hostNotice(s, h.Dir, &templates.Section{Kind: "sendinghold", Hold: view}, "held", h.Number, h.Since, h.Now)
}

// Plan is the referee's notice that the host began or ended its plan for
// the sending budget (T3).
type Plan struct {
	State *engine.State
	Dir   Directory
	// Forecast is the round's, with the plan chosen; Sending the budget.
	Forecast RoundForecast
	Sending  SendingStatus
	Now      time.Time
}

// SendingPlan tells a game's referee, with the figures, that the thread
// now comes in digests for everyone to fit the sending budget, or that
// the plan has ended.
func (c *Composer) SendingPlan(p Plan) (Outgoing, error) {
	s := p.State
	if s == nil {
		return Outgoing{}, errors.New("compose: a sending plan notice needs its game")
	}
	view := planView(p.Forecast, p.Sending, s, p.Now, c.langFor(s, refereeRecipient(s, p.Dir)))
	view.Changed = true
	return c.hostNotice(s, p.Dir, &templates.Section{Kind: "sendingplan", Plan: view}, "plan", int(p.Forecast.Every/time.Minute), p.Now, p.Now)
}

// hostNotice is a referee's private notice of news that concerns the
// whole host (a sending hold, a withdrawn authorisation): number and
// since tell one occurrence of it from another in its Message-ID.
func (c *Composer) hostNotice(s *engine.State, dir Directory, sec *templates.Section, what string, number int, since, now time.Time) (Outgoing, error) {
	ref := refereeRecipient(s, dir)
	return c.finish(draft{
		game: s.Game, d: delivery{r: ref, ch: templates.Private}, state: s, now: now,
		sections: []*templates.Section{sec}, main: sec, kind: KindReferee,
		id: c.msgID(s.Game, what, hashKey(fmt.Sprint(number, " ", since.UTC().Format(time.RFC3339Nano))), ref.key),
	})
}

// Revoked is the referee's notice that the mail provider no longer
// accepts the host's OAuth2 authorisation.
type Revoked struct {
	State *engine.State
	Dir   Directory
	// Since is when the provider first refused; Error what it said.
	Since time.Time
	Error string
	// Reading and Sending say which of IMAP and SMTP use the
	// authorisation.
	Reading, Sending bool
	// Number tells this revocation from the host's earlier ones.
	Number int
	Now    time.Time
}

// AuthorisationRevoked tells a game's referee, once per revocation, that
// the host can no longer log in to its mailbox.
func (c *Composer) AuthorisationRevoked(r Revoked) (Outgoing, error) {
	s := r.State
	if s == nil {
		return Outgoing{}, errors.New("compose: a revoked authorisation notice needs its game")
	}
	view := &templates.Revoked{Since: moment(s, r.Since, r.Now), Error: strings.TrimSpace(r.Error),
		Reading: r.Reading, Sending: r.Sending}
	return c.hostNotice(s, r.Dir, &templates.Section{Kind: "revoked", Revoked: view}, "revoked", r.Number, r.Since, r.Now)
}

// RestoreNotice is the referee's account of what a restore of the host's
// lost database did to the game.
type RestoreNotice struct {
	State *engine.State
	Dir   Directory
	// Backup is the backup's file name, "" for none.
	Backup string
	// Replayed, Before and After are as in templates.Restored.
	Replayed, Before, After int
	// Again are the game's mails that go out (again), all of them: the
	// notice lists the first few.
	Again        []templates.Resent
	NoSentFolder bool
	// Missing are the game's messages the mailbox no longer holds, all
	// of them; Paused, Unaccounted are as in templates.Restored.
	Missing     []Gone
	Paused      bool
	Unaccounted int
	// Listed is when the restore read the mailbox: with the game, it
	// makes the notice's Message-ID, so that a restore is told once.
	Listed time.Time
	Now    time.Time
}

// Gone is a message a restore found deleted from the mailbox.
type Gone struct {
	Arrived       time.Time
	From, Subject string
}

// restoredListed is how many of the mails sent again a restore's notice
// names; it says how many more there are.
const restoredListed = 5

// Restored tells a game's referee, once per restore, what a restore did:
// the backup it started from, what it applied again, and which mails go
// out again.
func (c *Composer) Restored(r RestoreNotice) (Outgoing, error) {
	s := r.State
	if s == nil {
		return Outgoing{}, errors.New("compose: a restore's notice needs its game")
	}
	view := &templates.Restored{At: moment(s, r.Listed, r.Now), Backup: r.Backup,
		Replayed: r.Replayed, Before: r.Before, After: r.After,
		AgainCount: len(r.Again), NoSentFolder: r.NoSentFolder}
	view.Again = r.Again[:min(len(r.Again), restoredListed)]
	view.More = len(r.Again) - len(view.Again)
	view.MissingCount, view.Paused, view.Unaccounted = len(r.Missing), r.Paused, r.Unaccounted
	for _, m := range r.Missing[:min(len(r.Missing), restoredListed)] {
		view.Missing = append(view.Missing, templates.Gone{Arrived: moment(s, m.Arrived, r.Now), From: m.From, Subject: m.Subject})
	}
	view.MissingMore = len(r.Missing) - len(view.Missing)
	return c.hostNotice(s, r.Dir, &templates.Section{Kind: "restored", Restored: view}, "restored", 0, r.Listed, r.Now)
}
