package budgetsim

import (
	"bytes"
	"io"
	"regexp"
	"strings"

	gomail "github.com/emersion/go-message/mail"

	"github.com/mafiamail/mafiamail/mail/mimepart"
)

// letter is a delivered message as a player reads it.
type letter struct {
	kind, replyTo, text string
}

var (
	roleLine    = regexp.MustCompile(`your role is (Townsperson|Mafia|Inspector|Doctor|Vigilante)`)
	fellowsLine = regexp.MustCompile(`The other Mafiosi: ([^.]+)\.`)
	mafiaAddr   = regexp.MustCompile(`host\+[a-z0-9]+-m-[a-z2-7]+@example\.org`)
)

// readLetter reads what a mail client shows of raw: the kind, the Reply-To
// and the plain text, paragraphs whole.
func readLetter(raw []byte) (letter, error) {
	r, err := gomail.CreateReader(bytes.NewReader(raw))
	if err != nil {
		return letter{}, err
	}
	l := letter{kind: r.Header.Get("X-Mafiamail-Kind")}
	if rt, err := r.Header.AddressList("Reply-To"); err == nil && len(rt) > 0 {
		l.replyTo = rt[0].Address
	}
	for {
		p, err := r.NextPart()
		if err != nil {
			break
		}
		h, ok := p.Header.(*gomail.InlineHeader)
		if !ok {
			continue
		}
		if ct, params, _ := h.ContentType(); ct == "text/plain" {
			body, _ := io.ReadAll(p.Body)
			l.text = strings.ReplaceAll(string(body), "\r\n", "\n")
			if strings.EqualFold(params["format"], "flowed") {
				l.text = mimepart.DecodeFlowed(l.text, strings.EqualFold(params["delsp"], "yes"))
			}
		}
	}
	return l, nil
}

func splitNames(s string) []string {
	s = strings.ReplaceAll(s, " and ", ", ")
	var out []string
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// headerValue returns the first value of a header field in raw without
// parsing the whole message: the checks read the Message-ID of every
// delivery, tens of thousands in a game.
func headerValue(raw []byte, name string) string {
	end := bytes.Index(raw, []byte("\r\n\r\n"))
	if end < 0 {
		end = len(raw)
	}
	head := raw[:end]
	key := []byte("\r\n" + strings.ToLower(name) + ":")
	low := bytes.ToLower(head)
	i := bytes.Index(append([]byte("\r\n"), low...), key)
	if i < 0 {
		return ""
	}
	v := head[i+len(key)-2:]
	if j := bytes.Index(v, []byte("\r\n")); j >= 0 {
		v = v[:j]
	}
	return strings.TrimSpace(string(v))
}
