//go:build integration

package e2e

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// TestEmbeddedHostMailboxIsTheHosts: `serve --embedded` gives every
// player's mailbox the simple password it prints, but the host's own
// mailbox (whose INBOX holds every player's night actions) and the
// referee's take passwords made for the run and printed once: a player who
// logs in over IMAP as the host with the players' password is refused,
// under any spelling of the host's address; the printed passwords work.
func TestEmbeddedHostMailboxIsTheHosts(t *testing.T) {
	t.Parallel()
	bin := mafiamail.Path(t)
	cmd := exec.Command(bin, "serve", "--embedded", "--db", filepath.Join(t.TempDir(), "g.db"))
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "watching mailbox") {
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	printed := out.String()
	find := func(re string) string {
		t.Helper()
		m := regexp.MustCompile(re).FindStringSubmatch(printed)
		if m == nil {
			t.Fatalf("serve printed nothing that matches %s:\n%s", re, printed)
		}
		return m[1]
	}
	imapAddr := find(`IMAP\s+(\S+)`)
	playersPassword := find(`the password "([^"]+)"`)

	login := func(user, pass string) error {
		t.Helper()
		c, err := imapclient.DialInsecure(imapAddr, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Login(user, pass).Wait(); err != nil {
			return err
		}
		if _, err := c.Select("INBOX", &imap.SelectOptions{ReadOnly: true}).Wait(); err != nil {
			t.Fatalf("%s logged in and cannot open INBOX: %v", user, err)
		}
		return nil
	}
	for _, user := range []string{"host", "host@example.org", "HOST@Example.org", "host+g1-t-abc", "host+x@example.org"} {
		if err := login(user, playersPassword); err == nil {
			t.Errorf("%s logged in with the players' password", user)
		}
	}
	for _, user := range []string{"referee", "referee@example.org", "referee+x"} {
		if err := login(user, playersPassword); err == nil {
			t.Errorf("%s logged in with the players' password", user)
		}
	}
	hostPass := find(`has one\s+too, for the host alone: (\S+)`)
	refPass := find(`made for this run: (\S+)`)
	if hostPass == playersPassword || refPass == playersPassword || hostPass == refPass {
		t.Fatalf("the host's password %q and the referee's %q are not their own", hostPass, refPass)
	}
	if !strings.Contains(printed, "not for hosting over a network") {
		t.Errorf("serve does not say what --embedded is for:\n%s", printed)
	}
	if err := login("host", hostPass); err != nil {
		t.Errorf("the host's printed password does not log in: %v", err)
	}
	if err := login("host@example.org", hostPass); err != nil {
		t.Errorf("the host's printed password does not log in as host@example.org: %v", err)
	}
	if err := login("referee", refPass); err != nil {
		t.Errorf("the referee's printed password does not log in: %v", err)
	}
	if err := login("alice", playersPassword); err != nil {
		t.Errorf("a player's mailbox does not take the players' password: %v", err)
	}
}
