// Package mailbox reads a test participant's mailbox as a person's mail
// client would: every message over IMAP, without changing its flags, parsed
// strictly with go-message, with the fields end-to-end tests look at.
package mailbox

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	gomail "github.com/emersion/go-message/mail"

	"github.com/mafiamail/mafiamail/mail/mimepart"
)

// Letter is one message as read from a mailbox, parsed with go-message.
type Letter struct {
	UID  imap.UID
	Seen bool
	Raw  []byte
	// err is why the message could not be parsed; the fields below are
	// then as far as parsing got.
	Err       error
	Header    gomail.Header
	MessageID string
	Kind      string
	Game      string
	Subject   string
	ReplyTo   string
	// text and html are the decoded bodies of the alternatives.
	Text, HTML string
	Parts      []string // the media types of the parts, in order
}

// Read fetches every message of user's INBOX, logging in with
// password, without changing flags.
func Read(t *testing.T, imapAddr, user, password string) []Letter {
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
	var out []Letter
	if sel.NumMessages > 0 {
		section := &imap.FetchItemBodySection{Peek: true}
		msgs, err := c.Fetch(imap.SeqSet{{Start: 1, Stop: 0}}, &imap.FetchOptions{UID: true, Flags: true,
			BodySection: []*imap.FetchItemBodySection{section}}).Collect()
		if err != nil {
			t.Fatalf("fetch %s's INBOX: %v", user, err)
		}
		for _, m := range msgs {
			l := Parse(m.FindBodySection(section))
			l.UID = m.UID
			for _, f := range m.Flags {
				if f == imap.FlagSeen {
					l.Seen = true
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

// Parse reads a message strictly: any error of go-message is kept.
func Parse(raw []byte) Letter {
	l := Letter{Raw: raw}
	r, err := gomail.CreateReader(bytes.NewReader(raw))
	if err != nil {
		l.Err = fmt.Errorf("read header: %w", err)
		return l
	}
	defer r.Close()
	l.Header = r.Header
	l.Kind = r.Header.Get("X-Mafiamail-Kind")
	l.Game = r.Header.Get("X-Mafiamail-Game")
	if l.MessageID, err = r.Header.MessageID(); err != nil {
		l.Err = fmt.Errorf("read the Message-Id: %w", err)
	}
	if l.Subject, err = r.Header.Subject(); err != nil && l.Err == nil {
		l.Err = fmt.Errorf("read the Subject: %w", err)
	}
	if rt, err := r.Header.AddressList("Reply-To"); err != nil {
		if l.Err == nil {
			l.Err = fmt.Errorf("Reply-To: %w", err)
		}
	} else if len(rt) == 1 {
		l.ReplyTo = strings.ToLower(rt[0].Address)
	}
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			if l.Err == nil {
				l.Err = fmt.Errorf("next part: %w", err)
			}
			break
		}
		h, ok := p.Header.(*gomail.InlineHeader)
		if !ok {
			// The host attaches a deadline's calendar event (text/calendar).
			kind := "attachment"
			if ah, ok := p.Header.(*gomail.AttachmentHeader); ok {
				if ct, _, err := ah.ContentType(); err == nil {
					kind = "attachment " + ct
				}
			}
			l.Parts = append(l.Parts, kind)
			continue
		}
		ct, params, err := h.ContentType()
		if err != nil && l.Err == nil {
			l.Err = fmt.Errorf("part Content-Type: %w", err)
		}
		if strings.HasPrefix(ct, "image/") {
			// A picture the HTML shows (the end mail's story): no text.
			l.Parts = append(l.Parts, ct)
			continue
		}
		body, err := io.ReadAll(p.Body)
		if err != nil && l.Err == nil {
			l.Err = fmt.Errorf("read %s part: %w", ct, err)
		}
		if !strings.EqualFold(params["charset"], "utf-8") && l.Err == nil {
			l.Err = fmt.Errorf("%s part in charset %q", ct, params["charset"])
		}
		l.Parts = append(l.Parts, ct)
		switch ct {
		case "text/plain":
			// A mail client shows a flowed part with its soft line
			// breaks joined (RFC 3676), and so does Text.
			l.Text = string(body)
			if strings.EqualFold(params["format"], "flowed") {
				l.Text = mimepart.DecodeFlowed(strings.ReplaceAll(l.Text, "\r\n", "\n"), strings.EqualFold(params["delsp"], "yes"))
			}
		case "text/html":
			l.HTML = string(body)
		}
	}
	return l
}

// MediaType is the media type of the message's top-level Content-Type.
func (l Letter) MediaType() string {
	mt, _, err := l.Header.ContentType()
	if err != nil {
		return ""
	}
	return mt
}

// References returns the References field's message IDs.
func (l Letter) References() []string {
	ids, err := l.Header.MsgIDList("References")
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

// HTMLLines renders an HTML body to the lines a reader would see.
func HTMLLines(s string) string {
	s = blockEnd.ReplaceAllString(s, "$0\n")
	return html.UnescapeString(anyTag.ReplaceAllString(s, ""))
}
