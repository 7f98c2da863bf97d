package command

import (
	"strings"
	"testing"
)

// BenchmarkParseReply reads a typical reply in the thread: a vote among a
// few lines of discussion, as they are left once the quote is removed.
func BenchmarkParseReply(b *testing.B) {
	text := "Morning all.\r\n\r\nVOTE Bob\r\n\r\nBob, you went quiet right after the night kill;\r\n" +
		"explain that and I may move my vote.\r\n\r\nCarol, where do you stand?\r\n"
	benchParse(b, text, Thread)
}

// BenchmarkParseSetup reads the longest message a referee sends: SETUP, 25
// ADD lines and START.
func BenchmarkParseSetup(b *testing.B) {
	var s strings.Builder
	s.WriteString("SETUP mafia150\r\n")
	for _, n := range []string{"Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy",
		"Mallory", "Niaj", "Olivia", "Peggy", "Rupert", "Sybil", "Trent", "Uma", "Victor", "Walter", "Xena",
		"Yusuf", "Zoe", "Mary Ann", "Jean Luc"} {
		s.WriteString("ADD " + n + " " + strings.ToLower(strings.ReplaceAll(n, " ", ".")) + "@example.org\r\n")
	}
	s.WriteString("START\r\n")
	benchParse(b, s.String(), Referee)
}

func benchParse(b *testing.B, text string, set Set) {
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	var r Result
	for b.Loop() {
		r = Parse(text, set)
	}
	if len(r.Errors) > 0 || len(r.Commands) == 0 {
		b.Fatalf("the text did not parse cleanly: %+v", r)
	}
}
