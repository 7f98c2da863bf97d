package main

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	gomail "github.com/emersion/go-message/mail"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/lang"
	"github.com/mafiamail/mafiamail/mail/mimepart"
)

// A bot is a demo player: it reads its own mailbox over IMAP, learns its
// role and its reply addresses from the host's mail, and answers with real
// mail over SMTP, as a person with a mail client would. To choose whom to
// vote for or act on it looks at the table (the game's public state), the
// way a person reads the tally. It acts only when the demo's conductor
// gives it its turn, and chooses with a random source made from the
// demo's seed, its name and the turn alone (see choices), so that the same
// seed makes the same choices whatever the timing.
type bot struct {
	name, addr string
	imapAddr   string
	smtpAddr   string
	password   string
	seed       uint64
	table      func() (*engine.State, bool)
	// lang is the language the bot writes its commands and its talk in.
	lang *lang.Language

	c       *imapclient.Client
	role    engine.Role
	private string // this bot's private channel (Reply-To of private mail)
	thread  string // this bot's way into the thread
	sent    int
}

// dialMailbox logs in to user's INBOX on the IMAP server at addr and
// returns the session and the mailbox's UIDVALIDITY.
func dialMailbox(addr, user, password string) (*imapclient.Client, uint32, error) {
	c, err := imapclient.DialInsecure(addr, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: dial IMAP: %w", user, err)
	}
	if err := c.Login(user, password).Wait(); err != nil {
		c.Close()
		return nil, 0, fmt.Errorf("%s: login: %w", user, err)
	}
	sel, err := c.Select("INBOX", nil).Wait()
	if err != nil {
		c.Close()
		return nil, 0, fmt.Errorf("%s: select: %w", user, err)
	}
	return c, sel.UIDValidity, nil
}

func (b *bot) connect() error {
	user, _, _ := strings.Cut(b.addr, "@")
	c, _, err := dialMailbox(b.imapAddr, user, b.password)
	if err != nil {
		return fmt.Errorf("%s: %w", b.name, err)
	}
	b.c = c
	return nil
}

func (b *bot) close() {
	if b.c != nil {
		b.c.Logout().Wait()
		b.c.Close()
	}
}

// letter is one message as a bot reads it.
type letter struct {
	kind, replyTo, subject, text string
}

// read fetches and flags the unseen mail.
func (b *bot) read() ([]letter, error) {
	data, err := b.c.UIDSearch(&imap.SearchCriteria{NotFlag: []imap.Flag{imap.FlagSeen}}, nil).Wait()
	if err != nil {
		return nil, err
	}
	uids := data.AllUIDs()
	if len(uids) == 0 {
		return nil, nil
	}
	section := &imap.FetchItemBodySection{Peek: true}
	msgs, err := b.c.Fetch(imap.UIDSetNum(uids...), &imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{section}}).Collect()
	if err != nil {
		return nil, err
	}
	var out []letter
	for _, m := range msgs {
		if l, err := parseLetter(m.FindBodySection(section)); err == nil {
			out = append(out, l)
		}
	}
	err = b.c.Store(imap.UIDSetNum(uids...), &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagSeen}}, nil).Close()
	return out, err
}

func parseLetter(raw []byte) (letter, error) {
	r, err := gomail.CreateReader(bytes.NewReader(raw))
	if err != nil {
		return letter{}, err
	}
	l := letter{kind: r.Header.Get("X-Mafiamail-Kind")}
	l.subject, _ = r.Header.Subject()
	if rt, err := r.Header.AddressList("Reply-To"); err == nil && len(rt) > 0 {
		l.replyTo = rt[0].Address
	}
	for {
		p, err := r.NextPart()
		if err != nil {
			break
		}
		if h, ok := p.Header.(*gomail.InlineHeader); ok {
			if ct, params, _ := h.ContentType(); ct == "text/plain" {
				body, _ := io.ReadAll(p.Body)
				l.text = strings.ReplaceAll(string(body), "\r\n", "\n")
				if strings.EqualFold(params["format"], "flowed") {
					// Read as a mail client shows it: paragraphs whole.
					l.text = mimepart.DecodeFlowed(l.text, strings.EqualFold(params["delsp"], "yes"))
				}
			}
		}
	}
	return l, nil
}

// send writes one message to the host and returns its Message-ID.
func (b *bot) send(to, body string) (string, error) {
	b.sent++
	id := fmt.Sprintf("<%s.%d@bots.example.org>", strings.ToLower(strings.ReplaceAll(b.name, " ", "")), b.sent)
	msg := fmt.Sprintf("From: %s <%s>\r\nTo: %s\r\nSubject: Re: game\r\nMessage-ID: %s\r\n"+
		"Date: %s\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n%s\r\n",
		b.name, b.addr, to, id, time.Now().Format(time.RFC1123Z), body)
	c, err := smtp.Dial(b.smtpAddr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	// A player logs in to their own mailbox to send, as mail clients do.
	user, _, _ := strings.Cut(b.addr, "@")
	if err := c.Auth(sasl.NewPlainClient("", user, b.password)); err != nil {
		return "", fmt.Errorf("log in as %s: %w", user, err)
	}
	if err := c.SendMail(b.addr, []string{to}, strings.NewReader(msg)); err != nil {
		return "", err
	}
	return id, c.Quit()
}

// learn takes what a letter tells: the role and the reply addresses.
func (b *bot) learn(l letter) {
	if l.kind == "role" {
		// The role mail is in the game's language, which a bot does not
		// read: once it has come, the bot takes its role from its seat at
		// the table.
		if s, ok := b.table(); ok {
			if me := b.seat(s); me != nil {
				b.role = me.Role
			}
		}
	}
	switch {
	case strings.Contains(l.replyTo, "-t-"):
		b.thread = l.replyTo
	case strings.Contains(l.replyTo, "-p-"):
		b.private = l.replyTo
	}
}

// readMail reads the new mail and learns from it.
func (b *bot) readMail() error {
	letters, err := b.read()
	if err != nil {
		return fmt.Errorf("%s reads mail: %w", b.name, err)
	}
	for _, l := range letters {
		b.learn(l)
	}
	return nil
}

// ready reads mail until the bot knows its role and both its addresses.
func (b *bot) ready(ctx context.Context) error {
	for {
		if err := b.readMail(); err != nil {
			return err
		}
		if b.role != "" && b.thread != "" && b.private != "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s has not had its role and its addresses from the host: %w", b.name, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// waitReplyTo waits for mail whose Reply-To contains tag and returns it.
func (b *bot) waitReplyTo(ctx context.Context, tag string) (string, error) {
	for {
		letters, err := b.read()
		if err != nil {
			return "", err
		}
		for _, l := range letters {
			if strings.Contains(l.replyTo, tag) {
				return l.replyTo, nil
			}
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// choices is the random source of one bot's choices in one turn: made from
// the demo's seed, the bot's name and the turn (which names the round by
// its place in the game, not by its time), and nothing else.
func (b *bot) choices(turn string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(b.name))
	h.Write([]byte{0})
	h.Write([]byte(turn))
	return rand.New(rand.NewPCG(b.seed, h.Sum64()))
}

// move is what the bot sends on its turn in the round s shows: to which of
// its addresses, and what; to is "" when it has nothing to do.
func (b *bot) move(s *engine.State, turn string) (to, body string) {
	me := b.seat(s)
	if me == nil || !me.Alive || s.Phase == engine.EndedPhase || s.Paused {
		return "", ""
	}
	rng := b.choices(turn)
	switch s.Phase {
	case engine.DayPhase:
		target := b.voteFor(s, rng)
		if target == "" {
			return "", ""
		}
		return b.thread, fmt.Sprintf("%s %s\n%s\n\n%s", b.verb("VOTE"), target, b.verb("LOCK"), b.chatter(target, rng))
	case engine.NightPhase:
		if action := b.nightAction(s, me, rng); action != "" {
			return b.private, action
		}
	}
	return "", ""
}

func (b *bot) seat(s *engine.State) *engine.Player {
	for i := range s.Players {
		if strings.EqualFold(s.Players[i].Address, b.addr) {
			return &s.Players[i]
		}
	}
	return nil
}

// fellow tells whether slot is another Mafioso, for a Mafioso, who knows
// them from the role mail.
func (b *bot) fellow(s *engine.State, slot int) bool {
	p := s.Player(slot)
	return b.role == engine.Mafia && p != nil && p.Role == engine.Mafia && !strings.EqualFold(p.Address, b.addr)
}

// voteFor picks a target: Mafiosi vote for townspeople; the town follows
// the leader of the tally more often than not, so days end.
func (b *bot) voteFor(s *engine.State, rng *rand.Rand) string {
	var options []int
	if s.Round == engine.Runoff {
		options = append(options, s.Candidates...)
	} else {
		options = s.Living()
	}
	var pool, others []string
	for _, slot := range options {
		n := s.Player(slot).Name
		if n == b.name {
			continue
		}
		others = append(others, n)
		if !b.fellow(s, slot) {
			pool = append(pool, n)
		}
	}
	if len(pool) == 0 {
		// A runoff between Mafiosi alone: a vote for one of them still
		// lets the round close.
		pool = others
	}
	if len(pool) == 0 {
		return ""
	}
	if t := s.Tally(s.Clock); len(t.Counts) > 0 && rng.IntN(3) > 0 {
		for _, c := range t.Counts {
			for _, p := range pool {
				if p == c.Name {
					return p
				}
			}
		}
	}
	return pool[rng.IntN(len(pool))]
}

func (b *bot) chatter(target string, rng *rand.Rand) string {
	lines := b.lang.Chatter()
	return fmt.Sprintf(lines[rng.IntN(len(lines))], target)
}

// verb is how the bot writes an English command verb: in its language's
// own words (the shortest phrase for it), as a player of that language
// would; in English as it is.
func (b *bot) verb(english string) string {
	best := ""
	for _, v := range b.lang.Verbs() {
		if v[1] == english && (best == "" || len(v[0]) < len(best)) {
			best = v[0]
		}
	}
	if best == "" {
		return english
	}
	return best
}

// nightAction is the role's action for the night, "" for none. Of the
// Mafia, the first living Mafioso in seat order names the victim for all:
// the latest KILL stands (N2), so one sender keeps the whack from
// depending on which mail came last.
func (b *bot) nightAction(s *engine.State, me *engine.Player, rng *rand.Rand) string {
	var others []string
	for _, slot := range s.Living() {
		if slot != me.Slot {
			others = append(others, s.Player(slot).Name)
		}
	}
	if len(others) == 0 {
		return ""
	}
	pick := func(pool []string) string { return pool[rng.IntN(len(pool))] }
	switch b.role {
	case engine.Mafia:
		for _, slot := range s.Living() {
			if slot == me.Slot {
				break // the first living Mafioso: this bot
			}
			if b.fellow(s, slot) {
				return "" // a fellow before it names the victim
			}
		}
		var town []string
		for _, slot := range s.Living() {
			if slot != me.Slot && !b.fellow(s, slot) {
				town = append(town, s.Player(slot).Name)
			}
		}
		if len(town) == 0 {
			return ""
		}
		return b.verb("KILL") + " " + pick(town)
	case engine.Inspector:
		return b.verb("INSPECT") + " " + pick(others)
	case engine.Doctor:
		// Never the same player two nights running (N4).
		var pool []string
		for _, slot := range s.Living() {
			if slot != me.LastProtected {
				pool = append(pool, s.Player(slot).Name)
			}
		}
		if len(pool) == 0 {
			return ""
		}
		return b.verb("PROTECT") + " " + pick(pool)
	case engine.Vigilante:
		// A shot a night at most, never on consecutive nights (N5).
		shotLastNight := me.LastShotNight > 0 && me.LastShotNight == s.Day-1
		if me.Shots > 0 && !shotLastNight && rng.IntN(4) == 0 {
			return b.verb("SHOOT") + " " + pick(others)
		}
		return b.verb("PASS")
	}
	return ""
}
