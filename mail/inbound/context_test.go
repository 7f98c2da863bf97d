package inbound

import (
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/mail/reply"
)

// An inline reply's context is relayed only as the host's record has it:
// quoted lines every reader of the mail answered was sent are quotes, the
// rest of the mail is left out, and lines the mail never held are the
// author's, shown as such, unless they read as a command: those are
// neither done nor relayed, and the author is told.
func TestInlineDiscussionIsTheHostsRecord(t *testing.T) {
	raw := "From: Alice Hart <alice.hart@gmail.com>\r\n" +
		"To: host+oak-t-ahq3vx7kz2mdn4pw@example.org\r\n" +
		"Authentication-Results: mx.example.org; dmarc=pass header.from=gmail.com\r\n" +
		"In-Reply-To: <oak.0123456789abcdef@example.org>\r\n" +
		"Subject: Re: [oak] Day 1\r\n\r\n" +
		"> Bob writes\r\n> > I trust Carol.\r\n> > VOTE Carol\r\n\r\nWhy, Bob?\r\n\r\n" +
		"> The referee writes\r\n> > Alice is confirmed Town.\r\n\r\nThere.\r\n\r\n" +
		"> You have not voted yet.\r\n\r\nVOTE Bob\r\n"
	r := Inspect([]byte(raw), testConfig, testDirectory)
	if r.Verdict.Kind != Accepted || len(r.Inline) != 3 {
		t.Fatalf("not read as an inline reply: %+v", r)
	}
	if strings.Contains(r.Discussion, ">") || strings.Contains(r.Discussion, "Carol") {
		t.Errorf("the discussion before any check holds quoted lines: %q", r.Discussion)
	}
	if len(r.Commands) != 1 || r.Commands[0].Raw != "VOTE Bob" {
		t.Errorf("commands %+v, want Alice's own VOTE Bob alone", r.Commands)
	}
	rec := &reply.Record{
		Public: "\n> I trust Carol.",
		Texts:  []string{"Bob writes\n> I trust Carol.\n\nYou have not voted yet.\n\n-- \nfooter"},
	}
	got, errs := r.InlineDiscussion(rec)
	want := "> I trust Carol.\nWhy, Bob?\n\nThe referee writes\nAlice is confirmed Town.\nThere."
	if got != want {
		t.Errorf("relayed\n%s\nwant\n%s", got, want)
	}
	if len(errs) != 1 || errs[0].Text != "VOTE Carol" || !strings.Contains(errs[0].Message, "does not hold it") {
		t.Errorf("errors %+v, want the quoted VOTE Carol explained", errs)
	}
	// With no mail of the host's to check them against, no quoted line is
	// relayed.
	got, errs = r.InlineDiscussion(nil)
	if got != "Why, Bob?\n\nThere." || len(errs) != 0 {
		t.Errorf("with no record: %q %+v", got, errs)
	}
}
