package inbound

import (
	"bufio"
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	gomessage "github.com/emersion/go-message"
	"github.com/emersion/go-message/mail"
	"github.com/emersion/go-message/textproto"
)

func header(t *testing.T, raw string) mail.Header {
	t.Helper()
	h, err := textproto.ReadHeader(bufio.NewReader(strings.NewReader(strings.ReplaceAll(raw, "\n", "\r\n") + "\r\n")))
	if err != nil {
		t.Fatal(err)
	}
	return mail.Header{Header: gomessage.Header{Header: h}}
}

func TestFindRoute(t *testing.T) {
	const host = "host@example.org"
	tests := []struct {
		name, header string
		want         Route
	}{
		{"thread in To", "To: oak thread <host+oak-t-ahq3vx7kz2mdn4pw@example.org>",
			Route{Kind: RouteThread, Game: "oak", Token: "ahq3vx7kz2mdn4pw", Address: "host+oak-t-ahq3vx7kz2mdn4pw@example.org", Header: "To"}},
		{"private, upper case", "To: HOST+OAK-P-AHQ3VX7KZ2MDN4PW@EXAMPLE.ORG",
			Route{Kind: RoutePrivate, Game: "oak", Token: "ahq3vx7kz2mdn4pw", Address: "HOST+OAK-P-AHQ3VX7KZ2MDN4PW@EXAMPLE.ORG", Header: "To"}},
		{"mafia in Cc after another player in To", "To: Bob <bob@example.com>\nCc: host+oak-m-ahq3vx7kz2mdn4pw@example.org",
			Route{Kind: RouteMafia, Game: "oak", Token: "ahq3vx7kz2mdn4pw", Address: "host+oak-m-ahq3vx7kz2mdn4pw@example.org", Header: "Cc"}},
		{"confirmation", "To: elm confirm <host+elm-c-ahq3vx7kz2mdn4pw@example.org>",
			Route{Kind: RouteConfirm, Game: "elm", Token: "ahq3vx7kz2mdn4pw", Address: "host+elm-c-ahq3vx7kz2mdn4pw@example.org", Header: "To"}},
		{"sign-up", "To: host+elm@example.org", Route{Kind: RouteSignup, Game: "elm", Address: "host+elm@example.org", Header: "To"}},
		{"bare host", "To: Mafia Host <host@example.org>", Route{Kind: RouteHost, Address: "host@example.org", Header: "To"}},
		{"a tag beats the bare address", "To: host@example.org\nDelivered-To: host+oak-t-ahq3vx7kz2mdn4pw@example.org",
			Route{Kind: RouteThread, Game: "oak", Token: "ahq3vx7kz2mdn4pw", Address: "host+oak-t-ahq3vx7kz2mdn4pw@example.org", Header: "Delivered-To"}},
		{"To before Delivered-To", "Delivered-To: host+elm@example.org\nTo: host+oak-t-ahq3vx7kz2mdn4pw@example.org",
			Route{Kind: RouteThread, Game: "oak", Token: "ahq3vx7kz2mdn4pw", Address: "host+oak-t-ahq3vx7kz2mdn4pw@example.org", Header: "To"}},
		{"unparseable X-Original-To is read by hand", "To: undisclosed-recipients:;\nX-Original-To: host+elm@example.org (via alias)",
			Route{Kind: RouteSignup, Game: "elm", Address: "host+elm@example.org", Header: "X-Original-To"}},
		{"other domain", "To: host+oak-t-ahq3vx7kz2mdn4pw@example.com", Route{Kind: RouteNone}},
		{"other local part", "To: hostess+elm@example.org", Route{Kind: RouteNone}},
		{"game name too short", "To: host+x@example.org", Route{Kind: RouteInvalid, Address: "host+x@example.org", Header: "To"}},
		{"token not base32", "To: host+oak-t-abc0189@example.org", Route{Kind: RouteInvalid, Address: "host+oak-t-abc0189@example.org", Header: "To"}},
		{"unknown channel letter", "To: host+oak-x-ahq3vx7kz2mdn4pw@example.org", Route{Kind: RouteInvalid, Address: "host+oak-x-ahq3vx7kz2mdn4pw@example.org", Header: "To"}},
		{"nothing", "Subject: hi", Route{Kind: RouteNone}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FindRoute(header(t, tt.header), host); got != tt.want {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestCheckAuthentication(t *testing.T) {
	tests := []struct {
		name, fields, from string
		result, method     string
	}{
		{"dmarc pass", "Authentication-Results: mx.example.org; dmarc=pass header.from=gmail.com", "gmail.com", "pass", "dmarc"},
		{"dmarc pass for another domain", "Authentication-Results: mx.example.org; dmarc=pass header.from=evil.example", "gmail.com", "fail", ""},
		{"dmarc fail beats an aligned dkim pass", "Authentication-Results: mx.example.org; dkim=pass header.d=gmail.com; dmarc=fail header.from=gmail.com", "gmail.com", "fail", ""},
		{"dkim aligned by organisational domain", "Authentication-Results: mx.example.org; dkim=pass header.d=mail.example.co.uk", "example.co.uk", "pass", "dkim"},
		{"dkim of a sibling under a public suffix is not aligned", "Authentication-Results: mx.example.org; dkim=pass header.d=evil.co.uk", "example.co.uk", "fail", ""},
		{"dkim domain from header.i", "Authentication-Results: mx.example.org; dkim=pass header.i=@posteo.de", "posteo.de", "pass", "dkim"},
		{"spf aligned", "Authentication-Results: mx.example.org; spf=pass smtp.mailfrom=bounce@lists.example.net", "example.net", "pass", "spf"},
		{"spf softfail", "Authentication-Results: mx.example.org; spf=softfail smtp.mailfrom=a@example.net", "example.net", "fail", ""},
		{"authserv-id is matched without regard to case", "Authentication-Results: MX.Example.ORG; dmarc=pass header.from=example.net", "example.net", "pass", "dmarc"},
		{"version 1 is fine", "Authentication-Results: mx.example.org 1; dmarc=pass header.from=example.net", "example.net", "pass", "dmarc"},
		{"other ids are ignored", "Authentication-Results: mx.google.com; dmarc=pass header.from=example.net", "example.net", "none", ""},
		{"only the topmost from the trusted id counts",
			"Authentication-Results: mx.example.org; spf=fail smtp.mailfrom=a@example.net\nAuthentication-Results: mx.example.org; dmarc=pass header.from=example.net",
			"example.net", "fail", ""},
		{"comments hold free text", "Authentication-Results: mx.example.org; dkim=pass (good; signature) header.d=example.net; spf=neutral (a) smtp.mailfrom=x@y", "example.net", "pass", "dkim"},
		// A value the sender controls must not smuggle in a result.
		{"quoted string injection", `Authentication-Results: mx.example.org; spf=fail smtp.mailfrom="x;dmarc=pass header.from=victim.example;"@evil.example`, "victim.example", "fail", ""},
		{"comment injection", `Authentication-Results: mx.example.org; spf=fail (x; dmarc=pass header.from=victim.example) smtp.mailfrom=a@evil.example`, "victim.example", "fail", ""},
		{"unreadable results fail", "Authentication-Results: mx.example.org; garbage", "example.net", "fail", ""},
		// An unbalanced comment or quote once hid every result after it.
		{"unbalanced comment hides no dmarc=fail", "Authentication-Results: mx.example.org; spf=pass smtp.mailfrom=a@gmail.com (helo=(x; dmarc=fail header.from=gmail.com", "gmail.com", "fail", ""},
		{"unbalanced comment in a pass", "Authentication-Results: mx.example.org; dkim=pass header.d=gmail.com (unclosed", "gmail.com", "fail", ""},
		{"nested comments are fine", "Authentication-Results: mx.example.org; dkim=pass (a (b) c) header.d=gmail.com; spf=pass smtp.mailfrom=a@gmail.com", "gmail.com", "pass", "dkim"},
		{"unclosed quote", `Authentication-Results: mx.example.org; spf=pass smtp.mailfrom="a@gmail.com; dmarc=fail header.from=gmail.com`, "gmail.com", "fail", ""},
		{"escaped paren in a comment", `Authentication-Results: mx.example.org; dmarc=fail (a \) b; dmarc=pass) header.from=gmail.com`, "gmail.com", "fail", ""},
		{"no results", "Authentication-Results: mx.example.org; none", "example.net", "fail", ""},
		// The server's own login as the From address; smtp.auth is what
		// the server wrote, here always someone@ the From domain.
		{"smtp auth as the From address", "Authentication-Results: mx.example.org; auth=pass smtp.auth=someone@example.net", "example.net", "pass", "auth"},
		{"smtp auth as the From address, any case", "Authentication-Results: mx.example.org; auth=pass smtp.auth=SomeOne@Example.NET", "example.net", "pass", "auth"},
		{"smtp auth as another mailbox of the domain", "Authentication-Results: mx.example.org; auth=pass smtp.auth=eve@example.net", "example.net", "fail", ""},
		{"smtp auth as a bare user name", "Authentication-Results: mx.example.org; auth=pass smtp.auth=someone", "example.net", "fail", ""},
		{"smtp auth failed", "Authentication-Results: mx.example.org; auth=fail smtp.auth=someone@example.net", "example.net", "fail", ""},
		{"dmarc fail beats an smtp auth pass", "Authentication-Results: mx.example.org; auth=pass smtp.auth=someone@example.net; dmarc=fail header.from=example.net", "example.net", "fail", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CheckAuthentication(header(t, tt.fields), "mx.example.org", "someone@"+tt.from)
			if got.Result != tt.result || got.Method != tt.method {
				t.Errorf("got %+v, want result %q method %q", got, tt.result, tt.method)
			}
		})
	}
}

func TestLimiter(t *testing.T) {
	l := NewLimiter(10*time.Minute, 3)
	t0 := time.Date(2025, 3, 3, 12, 0, 0, 0, time.UTC)
	for i := 0; i < 3; i++ {
		if ok, _ := l.Allow("a", t0); !ok {
			t.Fatalf("message %d of the burst refused", i+1)
		}
	}
	ok, first := l.Allow("a", t0.Add(time.Minute))
	if ok || !first {
		t.Fatalf("4th message: ok=%v first=%v, want a first refusal", ok, first)
	}
	if ok, first := l.Allow("a", t0.Add(2*time.Minute)); ok || first {
		t.Fatalf("5th message: ok=%v first=%v, want a repeated refusal", ok, first)
	}
	if ok, _ := l.Allow("b", t0.Add(2*time.Minute)); !ok {
		t.Fatal("another sender is limited too")
	}
	// One token comes back every 10 minutes.
	if ok, _ := l.Allow("a", t0.Add(10*time.Minute)); !ok {
		t.Fatal("no token after 10 minutes")
	}
	if ok, first := l.Allow("a", t0.Add(11*time.Minute)); ok || !first {
		t.Fatalf("after an allowed message the next refusal is a first one again: ok=%v first=%v", ok, first)
	}
	// A clock that steps back neither adds nor panics.
	if ok, _ := l.Allow("a", t0); ok {
		t.Fatal("going back in time gave a token")
	}
	// After a long quiet time the burst is full again, no more.
	later := t0.Add(24 * time.Hour)
	for i := 0; i < 3; i++ {
		if ok, _ := l.Allow("a", later); !ok {
			t.Fatalf("full burst after a day: message %d refused", i+1)
		}
	}
	if ok, _ := l.Allow("a", later); ok {
		t.Fatal("the bucket grew beyond its burst")
	}
}

func TestLimiterForgetsKeysButStaysBounded(t *testing.T) {
	l := NewLimiter(time.Second, 1)
	l.maxKeys = 100
	t0 := time.Date(2025, 3, 3, 12, 0, 0, 0, time.UTC)
	for i := 0; i < 1000; i++ {
		l.Allow(fmt.Sprintf("k%d", i), t0) // every bucket empty: nothing is forgettable for free
	}
	if n := len(l.buckets); n > 100 {
		t.Errorf("%d buckets held, want at most 100", n)
	}
	// Idle buckets are dropped before busy ones.
	l2 := NewLimiter(time.Second, 1)
	l2.maxKeys = 10
	for i := 0; i < 9; i++ {
		l2.Allow(fmt.Sprintf("idle%d", i), t0)
	}
	l2.Allow("busy", t0.Add(time.Hour))
	l2.Allow("new", t0.Add(time.Hour)) // prunes: the idle ones are full by now
	if ok, _ := l2.Allow("busy", t0.Add(time.Hour)); ok {
		t.Error("the busy sender's bucket was forgotten")
	}
}

func TestLimiterConcurrent(t *testing.T) {
	l := NewLimiter(time.Hour, 50)
	t0 := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				if ok, _ := l.Allow("same", t0); ok {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if allowed != 50 {
		t.Errorf("%d allowed from one bucket of 50", allowed)
	}
}

const plainVote = "From: Alice Hart <alice.hart@gmail.com>\r\n" +
	"To: host+oak-t-ahq3vx7kz2mdn4pw@example.org\r\n" +
	"Authentication-Results: mx.example.org; dmarc=pass header.from=gmail.com\r\n" +
	"Subject: vote\r\n\r\nVOTE Bernd\r\n"

func TestProcessorRateLimit(t *testing.T) {
	var logs bytes.Buffer
	p, err := NewProcessor(testConfig, testDirectory, NewLimiter(time.Hour, 2), slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2025, 3, 3, 12, 0, 0, 0, time.UTC)
	for i := 0; i < 2; i++ {
		if r := p.Process([]byte(plainVote), now); r.Verdict.Kind != Accepted {
			t.Fatalf("message %d: %+v", i+1, r.Verdict)
		}
	}
	r := p.Process([]byte(plainVote), now)
	if r.Verdict.Kind != Refused || r.Verdict.Reason != ReasonRateLimited || r.Verdict.Notify != "alice.hart@gmail.com" {
		t.Fatalf("3rd message: %+v", r.Verdict)
	}
	if r := p.Process([]byte(plainVote), now); r.Verdict.Reason != ReasonRateLimited || r.Verdict.Notify != "" {
		t.Fatalf("4th message must be refused without another reply: %+v", r.Verdict)
	}
	if !strings.Contains(logs.String(), "reason=rate-limited") || strings.Contains(logs.String(), "ahq3vx7kz2mdn4pw") {
		t.Errorf("log must give the reason and never the token:\n%s", logs.String())
	}

	// Forged mail in Alice's name makes refusals go to her; they are
	// limited on their own, without touching her own allowance.
	spoof := strings.Replace(plainVote, "alice.hart@gmail.com>", "eve@evil.example>", 1)
	p2, _ := NewProcessor(testConfig, testDirectory, NewLimiter(time.Hour, 2), slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)))
	notified := 0
	for i := 0; i < 10; i++ {
		r := p2.Process([]byte(spoof), now)
		if r.Verdict.Reason != ReasonSenderMismatch {
			t.Fatalf("spoof %d: %+v", i, r.Verdict)
		}
		if r.Verdict.Notify != "" {
			notified++
		}
	}
	if notified != 2 {
		t.Errorf("%d refusals sent for 10 forged messages, want 2", notified)
	}
	if r := p2.Process([]byte(plainVote), now); r.Verdict.Kind != Accepted {
		t.Errorf("Alice's own message after the forgeries: %+v", r.Verdict)
	}
}

func TestNewProcessorChecksConfig(t *testing.T) {
	if _, err := NewProcessor(Config{HostAddress: "host+x@example.org"}, testDirectory, nil, nil); err == nil {
		t.Error("a tagged host address was accepted")
	}
	if _, err := NewProcessor(Config{HostAddress: "nohost"}, testDirectory, nil, nil); err == nil {
		t.Error("an address without a domain was accepted")
	}
	if _, err := NewProcessor(testConfig, nil, nil, nil); err == nil {
		t.Error("a nil directory was accepted")
	}
}

func TestInspectLimits(t *testing.T) {
	// Too large: refused from the header alone, and the participant told.
	big := plainVote + strings.Repeat("padding line to make the message large\r\n", 3000)
	cfg := testConfig
	cfg.MaxSize = 100 << 10
	r := Inspect([]byte(big), cfg, testDirectory)
	if r.Verdict.Reason != ReasonTooLarge || r.Verdict.Notify != "alice.hart@gmail.com" || len(r.Commands) != 0 {
		t.Errorf("too large: %+v", r)
	}
	if !strings.Contains(r.Verdict.Explanation, "100 KiB") {
		t.Errorf("explanation does not give the limit: %q", r.Verdict.Explanation)
	}
	// The default limit is 10 MiB.
	if r := Inspect([]byte(big), testConfig, testDirectory); r.Verdict.Kind != Accepted {
		t.Errorf("a 120 KiB message under the default limit: %+v", r.Verdict)
	}

	// Command lines: at the limit is fine, one more is refused.
	cfg = testConfig
	cfg.MaxCommands = 3
	three := strings.Replace(plainVote, "VOTE Bernd\r\n", "VOTE Bernd\r\nLOCK\r\nVOTE\r\n", 1)
	if r := Inspect([]byte(three), cfg, testDirectory); r.Verdict.Kind != Accepted || len(r.Errors) != 1 {
		t.Errorf("3 command lines with limit 3: %+v", r)
	}
	four := strings.Replace(three, "LOCK\r\n", "LOCK\r\nUNLOCK\r\n", 1)
	if r := Inspect([]byte(four), cfg, testDirectory); r.Verdict.Reason != ReasonTooManyCommands {
		t.Errorf("4 command lines with limit 3: %+v", r.Verdict)
	}

	// Two addresses in From: nobody can say who wrote it.
	two := strings.Replace(plainVote, "From: Alice Hart <alice.hart@gmail.com>", "From: alice.hart@gmail.com, eve@evil.example", 1)
	if r := Inspect([]byte(two), testConfig, testDirectory); r.Verdict.Kind != Refused || r.Verdict.Notify != "alice.hart@gmail.com" {
		t.Errorf("two From addresses: %+v", r.Verdict)
	}

	// Without an authserv-id no Authentication-Results is needed.
	noAuth := strings.Replace(plainVote, "Authentication-Results: mx.example.org; dmarc=pass header.from=gmail.com\r\n", "", 1)
	if r := Inspect([]byte(noAuth), Config{HostAddress: "host@example.org"}, testDirectory); r.Verdict.Kind != Accepted || r.Sender.Authentication != nil {
		t.Errorf("no authserv-id configured: %+v", r)
	}
}

func TestInspectNeverPanics(t *testing.T) {
	for _, raw := range []string{"", "\r\n", "From:", "From: <>\r\n\r\n", "From: a@b\r\nContent-Type: multipart/mixed; boundary=\r\n\r\n",
		"From: host@example.org\r\n\r\n", "From: a@b\r\nTo: host+\r\n\r\n"} {
		r := Inspect([]byte(raw), testConfig, testDirectory)
		if r.Verdict.Kind == Accepted {
			t.Errorf("%q accepted: %+v", raw, r)
		}
	}
}

func TestOutOfOfficeSubjects(t *testing.T) {
	auto := []string{"Automatic reply: [oak] Day 2", "AutoReply: x", "Auto-Reply: x", "Out of Office: Re: x",
		"Automatische Antwort: x", "Abwesenheitsnotiz: x", "Réponse automatique : x", "Respuesta automática: x"}
	human := []string{"Out of office next week", "Vacation: back Monday, VOTE Bob stands", "Absence: I'll miss Day 3",
		"Re: Automatic replies are annoying", "[oak] automatic reply: explained"}
	for _, s := range auto {
		if !outOfOfficeSubject.MatchString(s) {
			t.Errorf("%q not taken for an automatic reply", s)
		}
	}
	for _, s := range human {
		if outOfOfficeSubject.MatchString(s) {
			t.Errorf("%q taken for an automatic reply", s)
		}
	}
}

// Take decides without counting; Put counts, and restores a saved bucket.
func TestLimiterTakeThenPut(t *testing.T) {
	l := NewLimiter(time.Minute, 2)
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for range 3 {
		if ok, _, after := l.Take("a", t0); !ok || after.Tokens != 1 {
			t.Fatalf("Take on a full bucket: %v, %+v; want allowed with 1 token left", ok, after)
		}
	}
	_, _, b := l.Take("a", t0)
	l.Put("a", b)
	_, _, b = l.Take("a", t0)
	l.Put("a", b)
	ok, first, b := l.Take("a", t0)
	if ok || !first || !b.Refused {
		t.Fatalf("third message at once: allowed %v, first refusal %v, %+v", ok, first, b)
	}
	// A bucket saved by another process, refused and nearly empty.
	l2 := NewLimiter(time.Minute, 2)
	l2.Put("a", b)
	if ok, first := l2.Allow("a", t0.Add(30*time.Second)); ok || first {
		t.Errorf("restored bucket half a token later: allowed %v, first refusal %v; want refused, not first", ok, first)
	}
	if ok, _ := l2.Allow("a", t0.Add(90*time.Second)); !ok {
		t.Error("restored bucket refilled by a token was refused")
	}
	if l2.FillTime() != 2*time.Minute {
		t.Errorf("FillTime %v, want 2m", l2.FillTime())
	}
}

// Without an authserv-id, mail that no token ties to a seat draws on its
// From's, its domain's and the shared allowance; a seat's own mail draws
// on the seat's alone, so forgeries cannot refuse it.
func TestAllowancesFollowProof(t *testing.T) {
	cfg := Config{HostAddress: "host@example.org"}
	p, err := NewProcessor(cfg, testDirectory, NewLimiter(time.Hour, 2), slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2025, 3, 3, 12, 0, 0, 0, time.UTC)
	toHost := strings.Replace(plainVote, "host+oak-t-ahq3vx7kz2mdn4pw@example.org", "host@example.org", 1)
	for i := range 5 {
		r := p.Process([]byte(toHost), now)
		if want := i >= 2; (r.Verdict.Reason == ReasonRateLimited) != want {
			t.Fatalf("forgery %d to the host's address: %+v", i+1, r.Verdict)
		}
	}
	for i := range 2 {
		if r := p.Process([]byte(plainVote), now); r.Verdict.Kind != Accepted {
			t.Fatalf("Alice's own vote %d after the forgeries: %+v", i+1, r.Verdict)
		}
	}
	// Ever new addresses of one domain share that domain's allowance (4 ×
	// 2), and all unproven mail one pool (10 × 2).
	accepted := 0
	for i := range 30 {
		m := strings.Replace(toHost, "alice.hart@gmail.com", fmt.Sprintf("eve%d@evil.example", i), 1)
		if p.Process([]byte(m), now).Verdict.Kind == Accepted {
			accepted++
		}
	}
	if accepted != 8 {
		t.Errorf("%d of 30 messages from new addresses at one domain accepted, want the domain's 8", accepted)
	}
	for i := range 30 {
		m := strings.Replace(toHost, "alice.hart@gmail.com", fmt.Sprintf("eve@evil%d.example", i), 1)
		if p.Process([]byte(m), now).Verdict.Kind == Accepted {
			accepted++
		}
	}
	// The pool had given 2 to Alice's forgeries and 8 to evil.example.
	if accepted != 8+10 {
		t.Errorf("%d messages from new domains accepted in all, want the pool's 20 less the 2 of the first sender", accepted)
	}
	if r := p.Process([]byte(plainVote), now); r.Verdict.Kind != Refused || r.Verdict.Reason != ReasonRateLimited {
		t.Fatalf("Alice's third vote at once must draw on her seat's own allowance of 2 and be refused: %+v", r.Verdict)
	}
}
