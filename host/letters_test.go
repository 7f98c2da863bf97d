package host_test

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	gomail "github.com/emersion/go-message/mail"
)

const (
	// e2eWait bounds every wait for mail or for the game to move on. It
	// only matters when something is broken: a healthy step takes well
	// under a second, but the machine may be loaded.
	e2eWait = 90 * time.Second
)

// letter is one message as read from a mailbox, parsed with go-message.
type letter struct {
	uid  imap.UID
	seen bool
	raw  []byte
	// err is why the message could not be parsed; the fields below are
	// then as far as parsing got.
	err       error
	header    gomail.Header
	messageID string
	kind      string
	game      string
	subject   string
	replyTo   string
	// text and html are the decoded bodies of the alternatives.
	text, html string
	parts      []string // the media types of the parts, in order
}

// readMailboxAs fetches every message of user's INBOX, logging in with
// password, without changing flags.
func readMailboxAs(t *testing.T, imapAddr, user, password string) []letter {
	t.Helper()
	c, err := imapclient.DialInsecure(imapAddr, nil)
	if err != nil {
		t.Fatalf("dial Dovecot: %v", err)
	}
	defer c.Close()
	if err := c.Login(user, password).Wait(); err != nil {
		t.Fatalf("login %s: %v", user, err)
	}
	sel, err := c.Select("INBOX", &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		t.Fatalf("examine %s's INBOX: %v", user, err)
	}
	var out []letter
	if sel.NumMessages > 0 {
		section := &imap.FetchItemBodySection{Peek: true}
		msgs, err := c.Fetch(imap.SeqSet{{Start: 1, Stop: 0}}, &imap.FetchOptions{UID: true, Flags: true,
			BodySection: []*imap.FetchItemBodySection{section}}).Collect()
		if err != nil {
			t.Fatalf("fetch %s's INBOX: %v", user, err)
		}
		for _, m := range msgs {
			l := parseLetter(m.FindBodySection(section))
			l.uid = m.UID
			for _, f := range m.Flags {
				if f == imap.FlagSeen {
					l.seen = true
				}
			}
			out = append(out, l)
		}
	}
	if err := c.Logout().Wait(); err != nil {
		t.Logf("logout %s: %v", user, err)
	}
	return out
}

// parseLetter reads a message strictly: any error of go-message is kept.
func parseLetter(raw []byte) letter {
	l := letter{raw: raw}
	r, err := gomail.CreateReader(bytes.NewReader(raw))
	if err != nil {
		l.err = fmt.Errorf("read header: %w", err)
		return l
	}
	defer r.Close()
	l.header = r.Header
	l.kind = r.Header.Get("X-Mafiamail-Kind")
	l.game = r.Header.Get("X-Mafiamail-Game")
	if l.messageID, err = r.Header.MessageID(); err != nil {
		l.err = fmt.Errorf("Message-Id: %w", err)
	}
	if l.subject, err = r.Header.Subject(); err != nil && l.err == nil {
		l.err = fmt.Errorf("Subject: %w", err)
	}
	if rt, err := r.Header.AddressList("Reply-To"); err != nil {
		if l.err == nil {
			l.err = fmt.Errorf("Reply-To: %w", err)
		}
	} else if len(rt) == 1 {
		l.replyTo = strings.ToLower(rt[0].Address)
	}
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			if l.err == nil {
				l.err = fmt.Errorf("next part: %w", err)
			}
			break
		}
		h, ok := p.Header.(*gomail.InlineHeader)
		if !ok {
			l.parts = append(l.parts, "attachment")
			continue
		}
		ct, params, err := h.ContentType()
		if err != nil && l.err == nil {
			l.err = fmt.Errorf("part Content-Type: %w", err)
		}
		body, err := io.ReadAll(p.Body)
		if err != nil && l.err == nil {
			l.err = fmt.Errorf("read %s part: %w", ct, err)
		}
		if !strings.EqualFold(params["charset"], "utf-8") && l.err == nil {
			l.err = fmt.Errorf("%s part in charset %q", ct, params["charset"])
		}
		l.parts = append(l.parts, ct)
		switch ct {
		case "text/plain":
			l.text = string(body)
		case "text/html":
			l.html = string(body)
		}
	}
	return l
}

// mediaType is the media type of the message's top-level Content-Type.
func (l letter) mediaType() string {
	mt, _, err := l.header.ContentType()
	if err != nil {
		return ""
	}
	return mt
}

// references returns the References field's message IDs.
func (l letter) references() []string {
	ids, err := l.header.MsgIDList("References")
	if err != nil {
		return nil
	}
	return ids
}

// blockEnd matches the HTML tags after which a reader sees a new line.
var (
	blockEnd = regexp.MustCompile(`(?i)<br\s*/?>|</(p|div|li|tr|td|th|h[1-6]|blockquote|pre|table|ul|ol)>`)
	anyTag   = regexp.MustCompile(`<[^>]*>`)
)

// htmlLines renders an HTML body to the lines a reader would see.
func htmlLines(s string) string {
	s = blockEnd.ReplaceAllString(s, "$0\n")
	return html.UnescapeString(anyTag.ReplaceAllString(s, ""))
}

// waitFor polls cond until it holds, failing the test after e2eWait.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(e2eWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", e2eWait, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
