package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/internal/cli"
)

// TestParseFlags takes flags before, between and after the positional
// arguments, and none after "--".
func TestParseFlags(t *testing.T) {
	for _, c := range []struct {
		args       []string
		db, out    string
		embedded   bool
		positional []string
		err        string
	}{
		{args: []string{"--db", "g.db", "friday", "--out", "dir"}, db: "g.db", out: "dir", positional: []string{"friday"}},
		{args: []string{"friday", "--db=g.db", "-out", "dir"}, db: "g.db", out: "dir", positional: []string{"friday"}},
		{args: []string{"a", "--embedded", "b", "--db", "g.db", "c"}, db: "g.db", embedded: true, positional: []string{"a", "b", "c"}},
		{args: []string{"--embedded=false", "a"}, positional: []string{"a"}},
		{args: []string{"--db", "g.db", "--", "--out", "-", "x"}, db: "g.db", positional: []string{"--out", "-", "x"}},
		{args: []string{"-", "--out", "--"}, out: "--", positional: []string{"-"}},
		{args: []string{"friday", "--out"}, err: "flag needs an argument: -out"},
		{args: []string{"friday", "--nope"}, err: "flag provided but not defined: -nope"},
	} {
		fs := cli.Flags("test", io.Discard)
		db := fs.String("db", "", "")
		out := fs.String("out", "", "")
		embedded := fs.Bool("embedded", false, "")
		err := parseFlags(fs, c.args)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%q: error %v, want %s", c.args, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		if *db != c.db || *out != c.out || *embedded != c.embedded || !reflect.DeepEqual(fs.Args(), c.positional) && len(fs.Args())+len(c.positional) > 0 {
			t.Errorf("%q: db %q, out %q, embedded %v, positional %q; want %q, %q, %v, %q",
				c.args, *db, *out, *embedded, fs.Args(), c.db, c.out, c.embedded, c.positional)
		}
	}
}

// TestMissingDatabase: the commands that read the host's database say
// plainly that there is none where they look, exit 1 and create nothing.
func TestMissingDatabase(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	msg := filepath.Join(t.TempDir(), "saved.eml")
	if err := os.WriteFile(msg, []byte("From: a@example.org\r\nTo: host@example.org\r\n\r\nHELP\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		db   string
	}{
		{[]string{"games", "list"}, "mafiamail.db"},
		{[]string{"games", "list", "--db", "games.db"}, "games.db"},
		{[]string{"games", "show", "friday", "--db", "games.db"}, "games.db"},
		{[]string{"games", "export", "--db", "games.db", "friday", "--out", "out"}, "games.db"},
		{[]string{"games", "backup", "--db", "games.db", "copy.db"}, "games.db"},
		{[]string{"games", "list", "--db", "new/games.db"}, "new/games.db"},
		{[]string{"parse", "--address", "host@example.org", "--db", "games.db", msg}, "games.db"},
	} {
		var out, errOut bytes.Buffer
		code := run(c.args, strings.NewReader(""), &out, &errOut)
		if want := "no database at " + c.db + ": "; code != 1 || !strings.Contains(errOut.String(), want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 1 and %q", c.args, code, errOut.String(), want)
		}
		if left, _ := os.ReadDir(dir); len(left) > 0 {
			t.Fatalf("%q left %v behind", c.args, left)
		}
	}
	var errOut bytes.Buffer
	if code := run([]string{"games", "lsit"}, nil, io.Discard, &errOut); code != 2 || !strings.Contains(errOut.String(), `unknown games command "lsit"`) {
		t.Errorf("games lsit: exit %d, stderr %q; want exit 2 and the unknown command", code, errOut.String())
	}
}

// TestDemoUsageShowsNoSentinel: "-digest" unset is not a duration, and the
// usage must not print one ("(default -1ns)").
func TestDemoUsageShowsNoSentinel(t *testing.T) {
	var out bytes.Buffer
	_ = cmdDemo(context.Background(), []string{"--help"}, &out, &out)
	if strings.Contains(out.String(), "-1ns") || !strings.Contains(out.String(), "-digest duration") {
		t.Errorf("demo usage:\n%s", out.String())
	}
	var d optDuration
	if d.Set("-1h") == nil || d.Set("0") != nil || !d.set || d.String() != "0s" {
		t.Errorf("optDuration: %+v", d)
	}
}
