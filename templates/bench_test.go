package templates

import "testing"

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
