package reply

import (
	"fmt"
	"strings"
	"testing"
)

// thread is a long reply chain of about size bytes: each older message
// quoted one level deeper, with attributions, inline answers, header blocks
// and separators, as a thread that has gone back and forth all day looks.
func thread(size int) string {
	var b strings.Builder
	b.WriteString("VOTE Bob\n\nHe has dodged every question today.\n\n")
	for n := 0; b.Len() < size; n++ {
		depth := strings.Repeat("> ", n%6+1)
		fmt.Fprintf(&b, "%sOn Mon, Mar 3, 2025 at 10:%02d AM Player %d <p%d@example.org> wrote:\n", depth[2:], n%60, n, n)
		fmt.Fprintf(&b, "%sDay %d: VOTE Name to vote; the round closes on Wednesday at 18:00 EST and the\n", depth, n)
		fmt.Fprintf(&b, "%stally follows below.\n%s\n", depth, depth)
		fmt.Fprintf(&b, "%sFrom: Mafia Host <host@example.org>\n%sSent: Monday, March 3, 2025 10:15 AM\n", depth, depth)
		fmt.Fprintf(&b, "%s-----Original Message-----\n%sVOTE Carol\n%sAlice >> Bob\n\n", depth, depth, depth)
		fmt.Fprintf(&b, "%sSent from my iPhone\n\n", depth)
	}
	return b.String()
}

// hostile is about size bytes of lines that each begin like an attribution,
// a header or a signature and never end like one, so that every line is
// tried as one and joined to the next: the worst case for the reader's
// look-ahead.
func hostile(size int) string {
	var b strings.Builder
	for b.Len() < size {
		b.WriteString("On Mon, Mar 3, 2025 at 10:15 AM Mafia Host <host\n")
		b.WriteString("<mailto:host> and so on. On 3 Mar 2025 10:15 x wrote that\n")
		b.WriteString("From: nobody in particular -- On Monday -- Am 3. März\n")
		b.WriteString("Sent from my desk, as usual. Le 3 mars 2025 à 10:15, x a\n")
	}
	return b.String()
}

// quoteMarkers is about size bytes of nothing but quote markers.
func quoteMarkers(size int) string { return strings.Repeat(">\n", size/2) }

func BenchmarkSplit(b *testing.B) {
	for _, c := range []struct {
		name string
		text string
	}{
		{"thread-1MB", thread(1 << 20)},
		{"hostile-1MB", hostile(1 << 20)},
		{"one-line-1MB", strings.Repeat("On Mon, 3 Mar 2025 10:15 x wrote ", 1<<20/33)},
		{"quote-markers-1MB", quoteMarkers(1 << 20)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.text)))
			b.ReportAllocs()
			for b.Loop() {
				Split(c.text)
			}
			b.ReportMetric(float64(strings.Count(c.text, ">")), "quote-markers")
		})
	}
}
