package inbound

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.result from what Inspect returns (check every change by hand)")

// testConfig and testDirectory are the host and the games the corpus was
// written for: game oak with its players and referee.
var testConfig = Config{HostAddress: "host@example.org", AuthServID: "mx.example.org"}

type mapDirectory map[string]Participant

func (d mapDirectory) Participant(game, token string) (Participant, bool) {
	p, ok := d[game+"/"+token]
	return p, ok
}

var testDirectory = mapDirectory{
	"oak/ahq3vx7kz2mdn4pw": {Name: "Alice", Address: "alice.hart@gmail.com"},
	"oak/bzt4kq7wm2xvd5na": {Name: "Bernd", Address: "bernd.mueller@posteo.de"},
	"oak/cxk2pw7vq4nz3mda": {Name: "Claire", Address: "claire.dubois@orange.fr"},
	"oak/dm5zq2kx7wva4npt": {Name: "Diego", Address: "diego.ramirez@gmail.com"},
	"oak/em4xk7qz2wvn5dpa": {Name: "Emma", Address: "emma.wilson@outlook.com"},
	"oak/fq7zk2xw4mvd3npa": {Name: "Frank", Address: "frank.schulz@gmx.de"},
	"oak/gk2vx7qz4wmn5dpa": {Name: "Gina", Address: "gina.rossi@icloud.com"},
	"oak/hz4kq7xw2mvd5npa": {Name: "Hugo", Address: "hugo.martin@free.fr"},
	"oak/iq7xk2zw4mvn3dpa": {Name: "Ines", Address: "ines.garcia@hotmail.es"},
	"oak/jx2kq7zw4mvd5npa": {Name: "Jonas", Address: "jonas.berg@gmail.com"},
	"oak/lq4zk7xw2mvd5npa": {Name: "Léa", Address: "lea.petit@gmail.com"},
	"oak/mq2zk7xw4vnd5pa":  {Name: "Marie", Address: "marie.lefevre@outlook.fr"},
	"oak/kz3kq7xw2mvd5npa": {Name: "Kenji", Address: "kenji.sato@example.jp"},
	"oak/rk7zq2xw4mvn3dpa": {Name: "Rita", Address: "referee@example.net", Referee: true},
}

// TestCorpus runs every message of testdata through Inspect, the function
// `mafiamail parse` prints, and compares the report with the .result file
// beside it.
func TestCorpus(t *testing.T) {
	files, err := filepath.Glob("testdata/*.msg")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 40 {
		t.Errorf("the corpus has %d messages; it must keep at least 40", len(files))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".msg")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			rep := Inspect(raw, testConfig, testDirectory)
			got, err := rep.JSON()
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, rep)
			resultFile := strings.TrimSuffix(f, ".msg") + ".result"
			if *update {
				if err := os.WriteFile(resultFile, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(resultFile)
			if err != nil {
				t.Fatalf("no expected result (run go test -update and check it by hand): %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("report differs from %s\n got:\n%s\nwant:\n%s", resultFile, got, want)
			}
		})
	}
}

// checkInvariants holds for every message, whatever its expected result.
func checkInvariants(t *testing.T, r Report) {
	t.Helper()
	v := r.Verdict
	switch v.Kind {
	case Accepted:
		if v.Notify != "" || v.Reason != "" {
			t.Errorf("accepted with notify %q reason %q", v.Notify, v.Reason)
		}
	case Refused:
		if v.Reason == "" || v.Explanation == "" {
			t.Errorf("refused without a reason and a sentence: %+v", v)
		}
		// A refusal goes only to a registered address, never to a From
		// that may be forged.
		if v.Notify != "" && (r.Sender.Participant == nil || v.Notify != r.Sender.Participant.Address) {
			t.Errorf("refusal to %q, which is no registered address (participant %+v)", v.Notify, r.Sender.Participant)
		}
	case Ignored:
		if v.Notify != "" || len(r.Commands) != 0 {
			t.Errorf("ignored message would be answered or applied: %+v", r)
		}
	default:
		t.Errorf("verdict kind %q", v.Kind)
	}
	if v.Bounce && v.Kind != Ignored {
		t.Errorf("a bounce must be ignored: %+v", v)
	}
}

// BenchmarkInspectCorpus reads the whole corpus once per iteration: the cost
// of taking in a day's worth of varied mail.
func BenchmarkInspectCorpus(b *testing.B) {
	files, err := filepath.Glob("testdata/*.msg")
	if err != nil {
		b.Fatal(err)
	}
	var msgs [][]byte
	size := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		msgs = append(msgs, raw)
		size += len(raw)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for _, raw := range msgs {
			Inspect(raw, testConfig, testDirectory)
		}
	}
}
