//go:build linux && integration

package mailstack

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-smtp"
)

// Generous: the tests share two cores with other test binaries.
const waitTimeout = 90 * time.Second

// crashHelperEnv makes the test binary a helper that starts a stack, prints
// its process groups and waits to be killed; see TestKilledTestBinaryLeavesNoDaemons.
const crashHelperEnv = "MAILSTACK_CRASH_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(crashHelperEnv) != "" {
		crashHelper()
		return
	}
	os.Exit(m.Run())
}

func TestTaggedMailReachesTheMailboxThroughPostfixAndDovecot(t *testing.T) {
	s := Start(t, Config{})
	if err := s.AddUser("host", "host-secret"); err != nil {
		t.Fatal(err)
	}
	if err := s.AddUser("alice", "alice-secret"); err != nil {
		t.Fatal(err)
	}
	if err := s.AddUser("bob", "bob-secret"); err != nil {
		t.Fatal(err)
	}

	thread := s.Address("host+game-t-abc")
	private := s.Address("host+game-p-xyz")
	sendMail(t, s, "alice@players.test", []string{thread}, message("alice@players.test", thread, "<vote-1@players.test>", "VOTE Bob"))
	// Sent as a blind copy: the To header names someone else, so only the
	// envelope, kept in Delivered-To, tells which channel it came through.
	sendMail(t, s, "bob@players.test", []string{private}, message("bob@players.test", "someone@players.test", "<night-1@players.test>", "KILL Alice"))
	sendMail(t, s, "host@"+s.Domain(), []string{s.Address("alice")}, message(s.Address("host"), s.Address("alice"), "<role-alice@example.test>", "You are Town."))
	sendMail(t, s, "host@"+s.Domain(), []string{s.Address("bob")}, message(s.Address("host"), s.Address("bob"), "<role-bob@example.test>", "You are Mafia."))

	c := login(t, s, "host", "host-secret")
	msgs := awaitMessages(t, c, 2)
	byID := map[string]fetched{}
	for _, m := range msgs {
		byID[m.header.Get("Message-Id")] = m
	}
	for id, want := range map[string]string{"<vote-1@players.test>": thread, "<night-1@players.test>": private} {
		m, ok := byID[id]
		if !ok {
			t.Fatalf("host's INBOX lacks %s; has %v", id, keys(byID))
		}
		if got := m.header.Get("Delivered-To"); got != want {
			t.Errorf("%s: Delivered-To = %q, want %q", id, got, want)
		}
		if slices.Contains(m.flags, imap.FlagSeen) {
			t.Errorf("%s: already \\Seen after a BODY.PEEK fetch: %v", id, m.flags)
		}
	}
	if body := byID["<night-1@players.test>"].body; !strings.Contains(body, "KILL Alice") {
		t.Errorf("private message body = %q, want the command", body)
	}

	// Every user sees their own mail only.
	for user, want := range map[string]string{"alice": "You are Town.", "bob": "You are Mafia."} {
		uc := login(t, s, user, user+"-secret")
		got := awaitMessages(t, uc, 1)
		if len(got) != 1 || !strings.Contains(got[0].body, want) {
			t.Errorf("%s's INBOX = %v, want one message saying %q", user, got, want)
		}
		logout(t, uc)
	}
	logout(t, c)
}

func TestLoginAndRefusals(t *testing.T) {
	s := Start(t, Config{Domain: "Mafia.Example.Test"})
	if got, want := s.Domain(), "mafia.example.test"; got != want {
		t.Fatalf("Domain() = %q, want %q", got, want)
	}
	if err := s.AddUser("host", "pw1"); err != nil {
		t.Fatal(err)
	}

	// The full address works as a login name too, as many clients send it.
	logout(t, login(t, s, s.Address("host"), "pw1"))

	c, err := imapclient.DialInsecure(s.IMAPAddr(), nil)
	if err != nil {
		t.Fatalf("dial IMAP: %v", err)
	}
	if err := c.Login("host", "wrong").Wait(); err == nil {
		t.Error("login with a wrong password succeeded")
	}
	c.Close()

	// AddUser changes a password in place, to any text without ':' or
	// line breaks.
	if err := s.AddUser("host", "-pw 2 {x}"); err != nil {
		t.Fatal(err)
	}
	logout(t, login(t, s, "host", "-pw 2 {x}"))

	for _, tc := range []struct {
		rcpt string
		code int
	}{
		{s.Address("nobody"), 550},     // unknown user of the domain
		{s.Address("nobody+tag"), 550}, // ... with a tag
		{"host@elsewhere.test", 554},   // not our domain: no relaying
	} {
		err := trySend(s, "referee@players.test", tc.rcpt, message("referee@players.test", tc.rcpt, "<refused@players.test>", "hello"))
		var se *smtp.SMTPError
		if !errors.As(err, &se) || se.Code != tc.code {
			t.Errorf("send to %s: error %v, want SMTP code %d", tc.rcpt, err, tc.code)
		}
	}

	// A user added while Postfix runs is accepted from the next connection on.
	if err := s.AddUser("carol", "carol-pw"); err != nil {
		t.Fatal(err)
	}
	sendMail(t, s, "referee@players.test", []string{s.Address("carol+late")}, message("referee@players.test", s.Address("carol"), "<late@players.test>", "welcome"))
	cc := login(t, s, "carol", "carol-pw")
	if got := awaitMessages(t, cc, 1); got[0].header.Get("Delivered-To") != s.Address("carol+late") {
		t.Errorf("carol's message: Delivered-To = %q", got[0].header.Get("Delivered-To"))
	}
	logout(t, cc)
}

func TestRestartDovecotKeepsMailAndDropsSessions(t *testing.T) {
	s := Start(t, Config{})
	if err := s.AddUser("host", "pw"); err != nil {
		t.Fatal(err)
	}
	tag := s.Address("host+game-t-abc")
	sendMail(t, s, "alice@players.test", []string{tag}, message("alice@players.test", tag, "<before@players.test>", "VOTE Bob"))

	c := login(t, s, "host", "pw")
	before := awaitMessages(t, c, 1)
	sel, err := c.Select("INBOX", nil).Wait()
	if err != nil {
		t.Fatalf("select: %v", err)
	}
	// A watcher sits in IDLE when the server goes away. (Without
	// WaitDelivered, Postfix might still await Dovecot's confirmation of the
	// message already in the INBOX, and deliver it again after the restart.)
	if err := s.WaitDelivered(); err != nil {
		t.Fatal(err)
	}
	idle, err := c.Idle()
	if err != nil {
		t.Fatalf("idle: %v", err)
	}

	if err := s.RestartDovecot(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Closed():
	case <-time.After(waitTimeout):
		t.Fatal("the IDLE connection survived a Dovecot restart")
	}
	_ = idle.Close()

	c2 := login(t, s, "host", "pw")
	sel2, err := c2.Select("INBOX", nil).Wait()
	if err != nil {
		t.Fatalf("select after restart: %v", err)
	}
	if sel2.UIDValidity != sel.UIDValidity {
		t.Errorf("UIDVALIDITY changed across the restart: %d, then %d", sel.UIDValidity, sel2.UIDValidity)
	}
	after := awaitMessages(t, c2, 1)
	if after[0].uid != before[0].uid || after[0].header.Get("Message-Id") != "<before@players.test>" {
		t.Errorf("after restart: UID %d %q, want UID %d <before@players.test>", after[0].uid, after[0].header.Get("Message-Id"), before[0].uid)
	}
	logout(t, c2)

	// Mail sent while Dovecot is down waits in Postfix's queue and arrives
	// once it is back.
	if err := s.StopDovecot(); err != nil {
		t.Fatal(err)
	}
	sendMail(t, s, "bob@players.test", []string{tag}, message("bob@players.test", tag, "<during@players.test>", "VOTE Alice"))
	if err := s.StartDovecot(); err != nil {
		t.Fatal(err)
	}
	c3 := login(t, s, "host", "pw")
	got := awaitMessages(t, c3, 2)
	if id := got[1].header.Get("Message-Id"); id != "<during@players.test>" {
		t.Errorf("second message is %s, want <during@players.test>", id)
	}
	logout(t, c3)
}

func TestParallelStacksAreSeparateAndStopCompletely(t *testing.T) {
	a := Start(t, Config{Domain: "a.test"})
	b := Start(t, Config{Domain: "b.test"})
	ports := map[string]bool{}
	for _, addr := range []string{a.SMTPAddr(), a.IMAPAddr(), a.LMTPAddr(), b.SMTPAddr(), b.IMAPAddr(), b.LMTPAddr()} {
		if ports[addr] {
			t.Fatalf("two listeners share %s", addr)
		}
		ports[addr] = true
	}
	if err := a.AddUser("host", "pw-a"); err != nil {
		t.Fatal(err)
	}
	if err := b.AddUser("host", "pw-b"); err != nil {
		t.Fatal(err)
	}
	sendMail(t, a, "x@players.test", []string{a.Address("host+a1")}, message("x@players.test", a.Address("host"), "<to-a@players.test>", "for a"))
	sendMail(t, b, "x@players.test", []string{b.Address("host+b1")}, message("x@players.test", b.Address("host"), "<to-b@players.test>", "for b"))
	// b does not take a's domain.
	if err := trySend(b, "x@players.test", a.Address("host"), message("x@players.test", a.Address("host"), "<cross@players.test>", "x")); err == nil {
		t.Error("stack b accepted mail for stack a's domain")
	}
	for _, tc := range []struct {
		s    *Stack
		pw   string
		want string
	}{{a, "pw-a", a.Address("host+a1")}, {b, "pw-b", b.Address("host+b1")}} {
		c := login(t, tc.s, "host", tc.pw)
		got := awaitMessages(t, c, 1)
		if d := got[0].header.Get("Delivered-To"); d != tc.want {
			t.Errorf("%s: Delivered-To = %q, want %q", tc.s.Domain(), d, tc.want)
		}
		logout(t, c)
	}

	for _, s := range []*Stack{a, b} {
		s.mu.Lock()
		groups := []int{s.postfix.pid, s.dovecot.pid}
		s.mu.Unlock()
		for _, g := range groups {
			if len(groupMembers(g)) == 0 {
				t.Fatalf("process group %d is empty while the stack runs", g)
			}
		}
		dir, id := s.l.Dir, s.l.ID
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		for _, g := range groups {
			if left := groupMembers(g); len(left) != 0 {
				t.Errorf("after Stop, processes %v of group %d still run", left, g)
			}
		}
		// What a person would check: no process mentions the stack anymore
		// (Dovecot's titles carry the instance name, Postfix's master the
		// folder). pgrep exits 1 when nothing matches.
		out, err := exec.Command("pgrep", "-a", "-f", "mailstack-"+id).Output()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("after Stop, pgrep -f mailstack-%s: %v\n%s", id, err, out)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("after Stop, the stack folder %s is still there: %v", dir, err)
		}
	}
	if err := a.Close(); err != nil { // a second Stop is harmless
		t.Fatal(err)
	}
}

// TestStartTriesOtherPortsWhenOneIsTaken hands Start a port that another
// server holds, first for Postfix, then for Dovecot, as happens when some
// other process binds a port between its choice and the daemon's bind.
func TestStartTriesOtherPortsWhenOneIsTaken(t *testing.T) {
	if _, err := findPrograms(); err != nil {
		Start(t, Config{}) // skips or fails with the same explanation as everywhere
	}
	stranger, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stranger.Close()
	go func() {
		for {
			conn, err := stranger.Accept()
			if err != nil {
				return
			}
			// Greets as servers do, so that only the greeting's text tells
			// it from the stack's own.
			_, _ = conn.Write([]byte("220 stranger ESMTP\r\n* OK stranger\r\n"))
			conn.Close()
		}
	}()
	taken := stranger.Addr().(*net.TCPAddr).Port

	calls := 0
	pickPorts = func(n int) ([]int, error) {
		calls++
		ports, err := freePorts(n)
		if err == nil && calls <= 2 {
			ports[calls-1] = taken // SMTP on the first try, IMAP on the second
		}
		return ports, err
	}
	defer func() { pickPorts = freePorts }()

	s := Start(t, Config{})
	if calls != 3 {
		t.Errorf("Start picked ports %d times, want 3", calls)
	}
	for _, addr := range []string{s.SMTPAddr(), s.IMAPAddr(), s.LMTPAddr()} {
		if addr == stranger.Addr().String() {
			t.Fatalf("the stack uses the taken address %s", addr)
		}
	}
	if err := s.AddUser("host", "pw"); err != nil {
		t.Fatal(err)
	}
	sendMail(t, s, "x@players.test", []string{s.Address("host+t")}, message("x@players.test", s.Address("host"), "<retry@players.test>", "hi"))
	c := login(t, s, "host", "pw")
	if got := awaitMessages(t, c, 1); got[0].header.Get("Delivered-To") != s.Address("host+t") {
		t.Errorf("Delivered-To = %q", got[0].header.Get("Delivered-To"))
	}
	logout(t, c)
}

// TestKilledTestBinaryLeavesNoDaemons kills a test binary that runs a stack,
// as a test timeout or ^C would, and checks that the kernel's parent-death
// signal takes both servers down with it.
func TestKilledTestBinaryLeavesNoDaemons(t *testing.T) {
	if _, err := findPrograms(); err != nil {
		Start(t, Config{}) // skips or fails with the same explanation as everywhere
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), crashHelperEnv+"=1")
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start helper: %v", err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("helper printed no stack: %v", err)
	}
	var postfixGroup, dovecotGroup int
	var dir string
	if _, err := fmt.Sscanf(line, "ready %d %d %s", &postfixGroup, &dovecotGroup, &dir); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("helper said %q: %v", line, err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) }) // the killed helper cannot remove it
	for _, g := range []int{postfixGroup, dovecotGroup} {
		if len(groupMembers(g)) == 0 {
			t.Fatalf("process group %d is empty while the helper runs", g)
		}
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(waitTimeout)
	for _, g := range []int{postfixGroup, dovecotGroup} {
		for len(groupMembers(g)) != 0 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
	}
	for _, g := range []int{postfixGroup, dovecotGroup} {
		if left := groupMembers(g); len(left) != 0 {
			t.Errorf("processes of group %d outlived the killed test binary: %s", g, describe(left))
			_ = syscall.Kill(-g, syscall.SIGKILL) // spare the tests that follow
		}
	}
}

// crashHelper runs in the child of TestKilledTestBinaryLeavesNoDaemons.
func crashHelper() {
	progs, err := findPrograms()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	s, err := launch(progs, Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Printf("ready %d %d %s\n", s.postfix.pid, s.dovecot.pid, s.l.Dir)
	select {} // until killed
}

// message is a minimal RFC 5322 message with CRLF line ends.
func message(from, to, id, body string) string {
	return strings.Join([]string{
		"From: " + from,
		"To: " + to,
		"Subject: test",
		"Message-Id: " + id,
		"Date: " + time.Now().Format(time.RFC1123Z),
		"",
		body,
		"",
	}, "\r\n")
}

// trySend submits one message on a fresh SMTP connection, as the host's
// sender does: plain text on loopback, no authentication.
func trySend(s *Stack, from, to, msg string) error {
	c, err := smtp.Dial(s.SMTPAddr())
	if err != nil {
		return fmt.Errorf("dial SMTP: %w", err)
	}
	defer c.Close()
	c.CommandTimeout = waitTimeout
	c.SubmissionTimeout = waitTimeout
	if err := c.Hello("client.players.test"); err != nil {
		return fmt.Errorf("EHLO: %w", err)
	}
	if err := c.SendMail(from, []string{to}, strings.NewReader(msg)); err != nil {
		return err
	}
	return c.Quit()
}

func sendMail(t testing.TB, s *Stack, from string, to []string, msg string) {
	t.Helper()
	for _, rcpt := range to {
		if err := trySend(s, from, rcpt, msg); err != nil {
			t.Fatalf("send to %s: %v", rcpt, err)
		}
	}
}

func login(t testing.TB, s *Stack, user, password string) *imapclient.Client {
	t.Helper()
	c, err := imapclient.DialInsecure(s.IMAPAddr(), nil)
	if err != nil {
		t.Fatalf("dial IMAP: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Login(user, password).Wait(); err != nil {
		t.Fatalf("login %s: %v", user, err)
	}
	return c
}

func logout(t testing.TB, c *imapclient.Client) {
	t.Helper()
	if err := c.Logout().Wait(); err != nil {
		t.Errorf("logout: %v", err)
	}
}

type fetched struct {
	uid    imap.UID
	flags  []imap.Flag
	header mail.Header
	body   string
}

func (f fetched) String() string {
	return fmt.Sprintf("UID %d %s", f.uid, f.header.Get("Message-Id"))
}

// awaitMessages polls INBOX until it holds want messages, then fetches them
// all, in order, without setting \Seen. Postfix delivers asynchronously, so
// there is no moment to wait for but the mail's arrival.
func awaitMessages(t testing.TB, c *imapclient.Client, want uint32) []fetched {
	t.Helper()
	awaitCount(t, c, want)
	section := &imap.FetchItemBodySection{Peek: true}
	bufs, err := c.Fetch(imap.SeqSet{{Start: 1, Stop: want}}, &imap.FetchOptions{
		UID:         true,
		Flags:       true,
		BodySection: []*imap.FetchItemBodySection{section},
	}).Collect()
	if err != nil {
		t.Fatalf("fetch: %v", err)
	}
	var out []fetched
	for _, b := range bufs {
		raw := b.FindBodySection(section)
		m, err := mail.ReadMessage(strings.NewReader(string(raw)))
		if err != nil {
			t.Fatalf("UID %d does not parse: %v\n%s", b.UID, err, raw)
		}
		body := new(strings.Builder)
		if _, err := bufio.NewReader(m.Body).WriteTo(body); err != nil {
			t.Fatalf("UID %d body: %v", b.UID, err)
		}
		out = append(out, fetched{uid: b.UID, flags: b.Flags, header: m.Header, body: body.String()})
	}
	slices.SortFunc(out, func(x, y fetched) int { return int(x.uid) - int(y.uid) })
	return out
}

// awaitCount polls INBOX until it holds want messages.
func awaitCount(t testing.TB, c *imapclient.Client, want uint32) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		sel, err := c.Select("INBOX", nil).Wait()
		if err != nil {
			t.Fatalf("select INBOX: %v", err)
		}
		if sel.NumMessages > want {
			t.Fatalf("INBOX holds %d messages, want %d", sel.NumMessages, want)
		}
		if sel.NumMessages == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("INBOX holds %d messages after %v, want %d", sel.NumMessages, waitTimeout, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func keys(m map[string]fetched) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
