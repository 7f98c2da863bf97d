package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/internal/hostkey"
	"github.com/mafiamail/mafiamail/internal/testkit/mailtest"
	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/service"
)

// TestRestoreCommand runs `mafiamail restore` as documented, on the
// built-in mail servers: it needs the host key, rebuilds the database from
// the mailbox alone, says what it did game by game, and never writes over
// a database that exists.
func TestRestoreCommand(t *testing.T) {
	srv := mailtest.StartServer(t, mailserver.Config{Domain: "example.org", Users: map[string]string{"host": "pw"},
		AutoCreateUsers: true})
	dir := t.TempDir()
	cfgPath, db := filepath.Join(dir, "mafiamail.toml"), filepath.Join(dir, "games.db")
	cfg := fmt.Sprintf(`address = "host@example.org"
referees = ["ref@example.org"]
database = %q
[imap]
url = "imap://%s"
username = "host"
password = "pw"
[smtp]
url = "smtp://%s"
username = "host"
password = "pw"
[auth]
authserv_id = "mx.players.test"
`, db, srv.IMAPAddr(), srv.SMTPAddr())
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	raw := "Authentication-Results: mx.players.test; dmarc=pass header.from=example.org\r\nFrom: ref@example.org\r\n" +
		"To: host@example.org\r\nSubject: new\r\nMessage-ID: <new@example.org>\r\n\r\nNEW GAME friday\r\n"
	if err := srv.DeliverAt("ref@example.org", "host@example.org", []byte(raw), at); err != nil {
		t.Fatal(err)
	}
	restore := func() (int, string) {
		var out, errOut bytes.Buffer
		code := run([]string{"restore", "--config", cfgPath}, strings.NewReader(""), &out, &errOut)
		return code, out.String() + errOut.String()
	}

	if code, out := restore(); code == 0 || !strings.Contains(out, "host key") {
		t.Fatalf("restore without the host key: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Fatalf("restore without the host key left a database (%v)", err)
	}
	if _, err := hostkey.Create(filepath.Join(dir, "mafiamail.key")); err != nil {
		t.Fatal(err)
	}
	code, out := restore()
	if code != 0 {
		t.Fatalf("restore: exit %d\n%s", code, out)
	}
	t.Logf("restore said:\n%s", out)
	for _, want := range []string{"from no backup", "1 message; 0 were in the backup, 1 replayed", "friday ",
		"No folder of sent mail was found", "1 message goes out when serve starts", `"[friday] Done: NEW GAME friday" to ref@example.org`,
		"The referees are told the same, one mail a game, which goes out when serve starts (1: <friday.restored.",
		"Next: mafiamail serve --config " + cfgPath} {
		if !strings.Contains(out, want) {
			t.Errorf("restore did not say %q:\n%s", want, out)
		}
	}
	if code, out := restore(); code == 0 || !strings.Contains(out, "never writes over one") {
		t.Errorf("restore over a database: exit %d\n%s", code, out)
	}

	// serve on no database, beside a mailbox a host has read, does not
	// start the games over: it says the restore to run. A host has read
	// it when it read mail to a game's address, which only a host hands
	// out (mail to its own address alone may be its owner's).
	join := "Authentication-Results: mx.players.test; dmarc=pass header.from=example.org\r\nFrom: bob@example.org\r\n" +
		"To: host+friday@example.org\r\nSubject: join\r\nMessage-ID: <join@example.org>\r\n\r\nJOIN Bob\r\n"
	if err := srv.DeliverAt("bob@example.org", "host+friday@example.org", []byte(join), at.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	c := mailtest.IMAP(t, srv.IMAPAddr(), "host", "pw", "INBOX")
	defer c.Close()
	mailtest.AddFlags(t, c, imap.UIDSetNum(1, 2), imap.FlagSeen)
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(db + suffix)
	}
	var sout, serr bytes.Buffer
	code = run([]string{"serve", "--config", cfgPath}, strings.NewReader(""), &sout, &serr)
	if want := "    mafiamail restore --config " + cfgPath + "\n"; code == 0 || !strings.Contains(serr.String(), "there is no database") || !strings.Contains(serr.String(), want) {
		t.Errorf("serve on no database beside a mailbox a host has read: exit %d, want it to say %q\n%s%s", code, want, sout.String(), serr.String())
	}
}

// TestRestoreSaysWhatIsMissing: the terminal names each game that cannot
// be proven complete, each message gone with its game, and each gap.
func TestRestoreSaysWhatIsMissing(t *testing.T) {
	at := time.Date(2026, 12, 2, 9, 30, 0, 0, time.UTC)
	rep := service.RestoreReport{FromBackup: "/backups/b.db", Messages: 40, Known: 30, Replayed: 10, SentFolder: "Sent",
		Games:   []service.GameReplay{{Game: "friday", Before: 50, After: 61, Replayed: 10, Missing: 1, Paused: true}},
		Missing: []service.Missing{{Game: "friday", Mailbox: "INBOX", UID: 7, MessageID: "m7@players.test", Arrived: at, From: "bob@players.test", Subject: "Re: vote"}},
		Gaps:    []service.Gap{{Folder: "INBOX", First: 38, Last: 39, Count: 2}}}
	var out bytes.Buffer
	printRestore(&out, "mafiamail.toml", &config.Config{Database: "games.db"}, rep)
	for _, want := range []string{
		"NOT PROVEN COMPLETE: game friday: 1 message the backup had read is no longer in the mailbox (deleted); mail after the backup may be gone too. The game is paused until its referee sends RESUME.",
		`  missing: friday               INBOX UID 7, arrived 2026-12-02T09:30:00Z, from bob@players.test: "Re: vote" m7@players.test`,
		"WARNING: INBOX no longer holds 2 messages its server numbered (UIDs 38 to 39) that no backup accounts for; which games they were for cannot be told.",
		"Restored games.db from /backups/b.db: the mailbox holds 40 messages; 30 were in the backup, 10 replayed.",
		"  friday               10 messages applied again; 50 events in the backup, 61 now",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("restore did not say %q:\n%s", want, out.String())
		}
	}
}

// TestRestoreCountsOneAsOne: where a restore has one of a thing, the
// terminal says so in the singular.
func TestRestoreCountsOneAsOne(t *testing.T) {
	rep := service.RestoreReport{FromBackup: "/backups/b.db", Messages: 1, Known: 1, Replayed: 1, SentFolder: "Sent", FoundSent: 1,
		Games:     []service.GameReplay{{Game: "friday", Before: 50, After: 51, Replayed: 1, Missing: 1}},
		Gaps:      []service.Gap{{Folder: "INBOX", First: 38, Last: 38, Count: 1}},
		SentAgain: []service.Resent{{Game: "friday", Subject: "Day 2", To: []string{"bob@players.test"}, MessageID: "d2@host.test"}}}
	var out bytes.Buffer
	printRestore(&out, "mafiamail.toml", &config.Config{Database: "games.db"}, rep)
	for _, want := range []string{
		"the mailbox holds 1 message; 1 was in the backup, 1 replayed.",
		"  friday               1 message applied again;",
		"game friday: 1 message the backup had read is no longer in the mailbox",
		"INBOX no longer holds 1 message its server numbered (UIDs 38 to 38) that no backup accounts for; which games it was for cannot be told. On a server that numbers messages one by one (Dovecot) it was deleted;",
		"1 message not recorded as sent was found in Sent and is recorded as sent now.",
		"1 message goes out when serve starts, sent again if the lost host had sent it (same Message-ID",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("restore did not say %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), " 1 messages") {
		t.Errorf("restore wrote \"1 messages\":\n%s", out.String())
	}
}
