package reply

import (
	"reflect"
	"testing"
)

// Quoted lines are checked against the host's record of the mail they
// answer: a run of them that is words every reader was sent, in order, is
// context, however the author's client wrapped or spaced it; a line of the
// mail that was not everyone's (a heading, the reader's own state) is left
// out; anything else is the author's own.
func TestQuotesAreCheckedAgainstTheRecord(t *testing.T) {
	rec := &Record{
		Public: "\n> I trust Bob.\n> Carol is quiet, and she voted late yesterday when nobody was looking at all.\n\n" +
			"Official tally, Day 1\n- Carol: 1 (Bob)",
		Texts: []string{"Alice writes\n> I trust Bob.\n> Carol is quiet, and she voted late yesterday when nobody was looking at all.\n\n" +
			"You have not voted yet. Voting closes Wed 2 Dec 2026 22:00 EST.\n\nOfficial tally, Day 1\n- Carol: 1 (Bob)\n\n-- \nThis is the town thread of game g1."},
	}
	P, A, L := Public, Authors, LeftOut
	for _, c := range []struct {
		quoted []string
		want   []QuoteKind
	}{
		{[]string{"I trust Bob.", "Carol is quiet, and she voted late"}, []QuoteKind{P, P}},
		{[]string{"Carol is quiet, and she voted late", "yesterday when nobody was looking at all."}, []QuoteKind{P, P}},
		{[]string{"  I   trust\u00a0Bob. "}, []QuoteKind{P}},
		{[]string{"Alice writes", "I trust Bob."}, []QuoteKind{L, P}},
		{[]string{"I trust Bob.", "Carol is Town."}, []QuoteKind{P, A}},
		{[]string{"You have not voted yet. Voting closes Wed 2 Dec 2026 22:00 EST."}, []QuoteKind{L}},
		{[]string{"The referee writes", "Dave is confirmed Town by the referee."}, []QuoteKind{A, A}},
		{[]string{"Carol writes", "I am the Inspector. I checked Alice: Mafia."}, []QuoteKind{A, A}},
		{[]string{"trust Bob. Carol is"}, []QuoteKind{P}},
		{[]string{"rust Bob."}, []QuoteKind{L}},                          // not where a word starts: in the mail, but no quote of it
		{[]string{"I trust Bob. Official tally, Day 1"}, []QuoteKind{A}}, // two runs made one
		{[]string{"Official tally, Day 1", "- Carol: 1 (Bob)"}, []QuoteKind{P, P}},
		{[]string{"This is the town thread of game g1."}, []QuoteKind{L}},
	} {
		if got := rec.Check(c.quoted); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: %v, want %v", c.quoted, got, c.want)
		}
	}
	var none *Record
	if got := none.Check([]string{"I trust Bob.", "Carol is Town."}); !reflect.DeepEqual(got, []QuoteKind{L, L}) {
		t.Errorf("with no mail known: %v, want every line left out", got)
	}
}
