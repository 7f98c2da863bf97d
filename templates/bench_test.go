package templates

import (
	"fmt"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/lang"
)

// BenchmarkRenderVote renders the host's most frequent mail, one vote in
// the thread, to its subject, text and HTML: the templates' share of a
// command, before MIME encoding (mail/compose's benchmarks add that).
func BenchmarkRenderVote(b *testing.B) {
	m := message(b, &Section{Kind: "vote", Name: "Alice", Target: "Bob"})
	b.ReportAllocs()
	var r Rendered
	for b.Loop() {
		var err error
		if r, err = Render("vote", m); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(r.Text)+len(r.HTML)), "bytes/op")
}

// BenchmarkRenderPost renders a player's post of a few paragraphs, the
// longest of the frequent mails, with its HTML escaping.
func BenchmarkRenderPost(b *testing.B) {
	text := "I think Bob has been far too quiet.\n\nYesterday he voted late, and <b>only</b> after Carol did & then said nothing.\n\n" +
		"Unless someone has a better read, I'll vote him by tonight."
	m := message(b, &Section{Kind: "post", Name: "Alice", Text: text})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Render("post", m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderStatus renders a STATUS answer in a player's private
// channel, the bench's STATUS load: no news shared with anyone, every
// part laid out for its reader.
func BenchmarkRenderStatus(b *testing.B) {
	closes := Moment{T: time.Date(2026, 12, 7, 13, 0, 0, 0, time.UTC)}
	m := message(b, &Section{Kind: "status", Status: &Status{Phase: "day", Day: 1, Closes: closes,
		Players: []StatusPlayer{{Name: "Alice", Role: "Townsperson", Alive: true, Vote: "Bob"}}}})
	m.Channel, m.Footer.Channel = Private, Private
	m.Footer.Commands = Suggest(Situation{Channel: Private, Phase: "day", Alive: true, Role: "Townsperson"})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Render("status", m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderThreadCopies renders a post for each of 25 readers
// through one Cache, as the host relays it: the news and the tally are
// laid out once, each reader's own line and footer once per copy. It
// reports the time per copy.
func BenchmarkRenderThreadCopies(b *testing.B) {
	closes := Moment{T: time.Date(2026, 12, 7, 13, 0, 0, 0, time.UTC)}
	post := &Section{Kind: "post", Name: "Alice", Text: "Bob has been far too quiet.\n\nHe voted late, and only after Carol did.\n\nI'll vote him by tonight."}
	tally := &Tally{Day: 1, Round: "opening", Closes: closes, Living: 25,
		Counts: []Count{{Name: "Bob", Votes: 2, Voters: []Vote{{Name: "Alice", Target: "Bob"}, {Name: "Carol", Target: "Bob"}}}}}
	var copies []*View
	for i := range 25 {
		m := message(b, post)
		m.Reader.Slot = i + 1
		m.Self = &Self{Phase: "day", Day: 1, Alive: true, Closes: closes}
		m.Tally = tally
		m.Footer.Thread = fmt.Sprintf("host+dec26-t-reader%02d@example.org", i)
		m.Footer.Private = fmt.Sprintf("host+dec26-p-reader%02d@example.org", i)
		m.Footer.Commands = Suggest(Situation{Channel: Thread, Phase: "day", Alive: true, Role: "Townsperson"})
		copies = append(copies, m)
	}
	b.ReportAllocs()
	for b.Loop() {
		c := NewCache()
		for _, m := range copies {
			if _, err := c.Render("post", m); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(copies)), "ns/copy")
}

// BenchmarkInit measures what the package does when it loads: every
// language's templates worded, styled and parsed.
func BenchmarkInit(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lang.All() {
			if _, err := parse(l); err != nil {
				b.Fatal(err)
			}
		}
	}
}
