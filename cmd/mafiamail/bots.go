package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	gomail "github.com/emersion/go-message/mail"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/lang"
	"github.com/mafiamail/mafiamail/mail/compose"
)

// A bot is a demo player: it reads its own mailbox over IMAP, learns its
// role and its reply addresses from the host's mail, and answers with real
// mail over SMTP, as a person with a mail client would. To choose whom to
// vote for or act on it looks at the table (the game's public state), the
// way a person reads the tally.
type bot struct {
	name, addr string
	imapAddr   string
	smtpAddr   string
	password   string
	rng        *rand.Rand
	table      func() (*engine.State, bool)
	// lang is the language the bot writes its commands and its talk in.
	lang *lang.Language

	c           *imapclient.Client
	role        engine.Role
	fellows     []string
	private     string // this bot's private channel (Reply-To of private mail)
	thread      string // this bot's way into the thread
	acted       string // the phase this bot last acted in
	lastProtect string
	mu          sync.Mutex
	sent        int
}

func (b *bot) connect() error {
	c, err := imapclient.DialInsecure(b.imapAddr, nil)
	if err != nil {
		return fmt.Errorf("%s: dial IMAP: %w", b.name, err)
	}
	user, _, _ := strings.Cut(b.addr, "@")
	if err := c.Login(user, b.password).Wait(); err != nil {
		c.Close()
		return fmt.Errorf("%s: login: %w", b.name, err)
	}
	if _, err := c.Select("INBOX", nil).Wait(); err != nil {
		c.Close()
		return fmt.Errorf("%s: select: %w", b.name, err)
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
					l.text = compose.DecodeFlowed(l.text, strings.EqualFold(params["delsp"], "yes"))
				}
			}
		}
	}
	return l, nil
}

// send writes one message to the host.
func (b *bot) send(to, body string) error {
	b.mu.Lock()
	b.sent++
	n := b.sent
	b.mu.Unlock()
	msg := fmt.Sprintf("From: %s <%s>\r\nTo: %s\r\nSubject: Re: game\r\nMessage-ID: <%s.%d.%d@bots.example.org>\r\n"+
		"Date: %s\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n%s\r\n",
		b.name, b.addr, to, strings.ToLower(strings.ReplaceAll(b.name, " ", "")), n, time.Now().UnixNano(),
		time.Now().Format(time.RFC1123Z), body)
	c, err := smtp.Dial(b.smtpAddr)
	if err != nil {
		return err
	}
	defer c.Close()
	// A player logs in to their own mailbox to send, as mail clients do.
	user, _, _ := strings.Cut(b.addr, "@")
	if err := c.Auth(sasl.NewPlainClient("", user, demoPassword)); err != nil {
		return fmt.Errorf("log in as %s: %w", user, err)
	}
	if err := c.SendMail(b.addr, []string{to}, strings.NewReader(msg)); err != nil {
		return err
	}
	return c.Quit()
}

// learn takes what a letter tells: the role, the fellow Mafiosi, the
// reply addresses.
func (b *bot) learn(l letter) {
	if l.kind == "role" {
		// The role mail is in the game's language, which a bot does not
		// read: once it has come, the bot takes what it told (the role,
		// the fellow Mafiosi) from its seat at the table.
		if s, ok := b.table(); ok {
			if me := b.seat(s); me != nil {
				b.role = me.Role
				b.fellows = nil
				for _, p := range s.Players {
					if p.Role == engine.Mafia && me.Role == engine.Mafia && p.Slot != me.Slot {
						b.fellows = append(b.fellows, p.Name)
					}
				}
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

// play runs the bot until ctx ends: read mail, act when the game moved on.
func (b *bot) play(ctx context.Context, errs chan<- error) {
	for ctx.Err() == nil {
		letters, err := b.read()
		if err != nil {
			if ctx.Err() == nil {
				errs <- fmt.Errorf("%s reads mail: %w", b.name, err)
			}
			return
		}
		for _, l := range letters {
			b.learn(l)
		}
		if err := b.act(); err != nil && ctx.Err() == nil {
			errs <- fmt.Errorf("%s: %w", b.name, err)
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(60 * time.Millisecond):
		}
	}
}

// act sends what the bot has to do in the phase the table shows, once.
func (b *bot) act() error {
	s, ok := b.table()
	if !ok || b.role == "" || b.thread == "" || b.private == "" {
		return nil
	}
	me := b.seat(s)
	if me == nil || !me.Alive || s.Phase == engine.EndedPhase || s.Paused {
		return nil
	}
	key := fmt.Sprintf("%s/%d/%s/%v/%d", s.Phase, s.Day, s.Round, s.Extra, len(s.Candidates))
	if key == b.acted {
		if s.Phase == engine.DayPhase && me.Vote <= 0 {
			key = "" // a vote that was lost (a runoff reset it): vote again
		} else {
			return nil
		}
	}
	b.acted = key
	switch s.Phase {
	case engine.DayPhase:
		target := b.voteFor(s)
		if target == "" {
			return nil
		}
		return b.send(b.thread, fmt.Sprintf("%s %s\n%s\n\n%s", b.verb("VOTE"), target, b.verb("LOCK"), b.chatter(target)))
	case engine.NightPhase:
		return b.nightAction(s)
	}
	return nil
}

func (b *bot) seat(s *engine.State) *engine.Player {
	for i := range s.Players {
		if strings.EqualFold(s.Players[i].Address, b.addr) {
			return &s.Players[i]
		}
	}
	return nil
}

func (b *bot) isFellow(name string) bool {
	for _, f := range b.fellows {
		if f == name {
			return true
		}
	}
	return false
}

// voteFor picks a target: Mafiosi vote for townspeople; the town follows
// the leader of the tally more often than not, so days end.
func (b *bot) voteFor(s *engine.State) string {
	var options []string
	if s.Round == engine.Runoff {
		t := s.Tally(s.Clock)
		options = append(options, t.Candidates...)
	} else {
		for _, slot := range s.Living() {
			options = append(options, s.Player(slot).Name)
		}
	}
	var pool []string
	for _, o := range options {
		if o == b.name || (b.role == engine.Mafia && b.isFellow(o)) {
			continue
		}
		pool = append(pool, o)
	}
	if len(pool) == 0 {
		return ""
	}
	if t := s.Tally(s.Clock); len(t.Counts) > 0 && b.rng.IntN(3) > 0 {
		for _, c := range t.Counts {
			for _, p := range pool {
				if p == c.Name {
					return p
				}
			}
		}
	}
	return pool[b.rng.IntN(len(pool))]
}

func (b *bot) chatter(target string) string {
	lines := b.lang.Chatter()
	return fmt.Sprintf(lines[b.rng.IntN(len(lines))], target)
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

// nightAction sends the role's action to the bot's private channel.
func (b *bot) nightAction(s *engine.State) error {
	var others []string
	for _, slot := range s.Living() {
		n := s.Player(slot).Name
		if n != b.name {
			others = append(others, n)
		}
	}
	if len(others) == 0 {
		return nil
	}
	pick := func(skip func(string) bool) string {
		var pool []string
		for _, o := range others {
			if !skip(o) {
				pool = append(pool, o)
			}
		}
		if len(pool) == 0 {
			return ""
		}
		return pool[b.rng.IntN(len(pool))]
	}
	switch b.role {
	case engine.Mafia:
		if t := pick(b.isFellow); t != "" {
			return b.send(b.private, b.verb("KILL")+" "+t)
		}
	case engine.Inspector:
		return b.send(b.private, b.verb("INSPECT")+" "+pick(func(string) bool { return false }))
	case engine.Doctor:
		all := append(others, b.name)
		var t string
		for t = all[b.rng.IntN(len(all))]; t == b.lastProtect && len(all) > 1; t = all[b.rng.IntN(len(all))] {
		}
		b.lastProtect = t
		return b.send(b.private, b.verb("PROTECT")+" "+t)
	case engine.Vigilante:
		if b.rng.IntN(4) == 0 {
			return b.send(b.private, b.verb("SHOOT")+" "+pick(func(string) bool { return false }))
		}
		return b.send(b.private, b.verb("PASS"))
	}
	return nil
}
