//go:build integration

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/mail"
	"strings"
	"testing"
	"time"

	gomail "github.com/emersion/go-message/mail"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/lang"
)

// TestDemoInEveryLanguage: demo --language plays a whole game in German,
// French and Spanish: the bots' commands in that language's words count
// (someone wins, and not by everyone missing votes), every mail to a
// player says it is in that language, and the bots talk in it.
func TestDemoInEveryLanguage(t *testing.T) {
	for _, l := range lang.All()[1:] {
		t.Run(l.Tag, func(t *testing.T) {
			setup := engine.Classic()
			setup.Language = l.Tag
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			var progress bytes.Buffer
			res, err := runDemo(ctx, demoOptions{setup: setup, seed: 3, progress: &progress, logTo: io.Discard})
			if err != nil {
				t.Fatalf("demo: %v\n%s", err, progress.String())
			}
			if res.state.Phase != engine.EndedPhase {
				t.Fatalf("the game did not end: %s", res.state.Phase)
			}
			votes, missedOut := 0, 0
			for _, e := range res.log {
				switch {
				case e.Type == engine.EvVoted:
					votes++
				case e.Type == engine.EvPlayerDied && e.Reason == string(engine.ByMissedVotes):
					missedOut++
				}
			}
			if votes < len(res.state.Players) || missedOut > len(res.state.Players)/2 {
				t.Errorf("%d votes counted and %d players removed for missed votes: the bots' %s commands were not read", votes, missedOut, l.Name)
			}
			chatter := map[string]bool{}
			for _, c := range l.Chatter() {
				chatter[strings.SplitN(c, "%s", 2)[0]] = true
			}
			talked := false
			for addr, ms := range res.received {
				if !strings.HasSuffix(addr, "@example.org") || strings.HasPrefix(addr, "host") {
					continue
				}
				for _, m := range ms {
					hdr, err := mail.ReadMessage(bytes.NewReader(m.Data))
					if err != nil {
						t.Fatalf("a delivered message does not parse: %v", err)
					}
					want := l.Tag
					if addr == "referee@example.org" && isNewGameAnswer(hdr.Header.Get("Subject")) {
						want = lang.Default // the answer to NEW GAME, before SETUP
					}
					if got := hdr.Header.Get("Content-Language"); got != want {
						t.Errorf("%s: %q has Content-Language %q, want %q", addr, hdr.Header.Get("Subject"), got, want)
					}
					if !talked && hdr.Header.Get("X-Mafiamail-Kind") == "thread" {
						body := plainText(t, m.Data)
						for prefix := range chatter {
							if prefix != "" && strings.Contains(body, prefix) {
								talked = true
							}
						}
					}
				}
			}
			if !talked {
				t.Errorf("no thread mail holds a line of the bots' %s talk", l.Name)
			}
		})
	}
}

// plainText is the text part of a message.
func plainText(t *testing.T, raw []byte) string {
	t.Helper()
	r, err := gomail.CreateReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("read message: %v", err)
	}
	for {
		p, err := r.NextPart()
		if err != nil {
			return ""
		}
		if h, ok := p.Header.(*gomail.InlineHeader); ok {
			if ct, _, _ := h.ContentType(); ct == "text/plain" {
				b, err := io.ReadAll(p.Body)
				if err != nil {
					t.Fatal(fmt.Errorf("read text: %w", err))
				}
				return string(b)
			}
		}
	}
}

// isNewGameAnswer reports whether a subject is that of the answer to NEW
// GAME or of the game's opening, the referee's mail written before SETUP
// names the game's language.
func isNewGameAnswer(subject string) bool {
	return strings.Contains(subject, "] Done: NEW GAME") || strings.Contains(subject, "] Sign-up: Game ")
}
