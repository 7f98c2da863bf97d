package host

import (
	"bytes"
	"context"
	"io"
	"mime/quotedprintable"
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/store"
)

// When the sending budget is tight, what the game cannot go on without
// leaves first, then tallies and reminders, then the thread's posts, then
// receipts.
func TestMailPriorities(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind     string
		contents []string
		want     int
	}{
		{compose.KindRole, []string{"role"}, store.PriorityGame},
		{compose.KindPrivate, []string{"inspection"}, store.PriorityGame},
		{compose.KindDawn, []string{"dawn", "death"}, store.PriorityGame},
		{compose.KindEnd, []string{"end"}, store.PriorityGame},
		{compose.KindThread, []string{"close", "death"}, store.PriorityGame},
		{compose.KindThread, []string{"deadline"}, store.PriorityGame},
		{compose.KindThread, []string{"post", "extension"}, store.PriorityGame},
		{compose.KindError, []string{"refused"}, store.PriorityGame},
		{compose.KindConfirm, []string{"reply", "refused"}, store.PriorityGame},
		{compose.KindReferee, []string{"failure"}, store.PriorityGame},
		{compose.KindMafia, []string{"mafia"}, store.PriorityGame},
		{compose.KindTally, []string{"tally"}, store.PriorityNotice},
		{compose.KindPrivate, []string{"reminder"}, store.PriorityNotice},
		{compose.KindThread, []string{"post"}, store.PriorityThread},
		{compose.KindThread, []string{"digest"}, store.PriorityThread},
		{compose.KindThread, []string{"vote"}, store.PriorityThread},
		{compose.KindConfirm, []string{"reply"}, store.PriorityReceipt},
	} {
		if got := priorityOf(compose.Outgoing{Kind: tc.kind, Contents: tc.contents}); got != tc.want {
			t.Errorf("%s %v: priority %d, want %d", tc.kind, tc.contents, got, tc.want)
		}
	}
}

// When the provider refuses mail for its limit, the referee of every game
// under way is told once, however often the sender reports it; the
// referee's STATUS shows the budget used, the hold and what waits by kind;
// and a player's STATUS shows none of it.
func TestSendingHoldTellsTheRefereeOnce(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.setUp()
	ctx := context.Background()
	// Two players' mail went out; the rest waits.
	claimed, err := hs.st.ClaimDue(ctx, hs.now.Add(time.Hour), 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range claimed {
		if err := hs.st.MarkSent(ctx, m.ID, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	before := len(hs.outbox())
	hold := SendingHold{Reply: "550 5.4.5 Daily user sending limit exceeded", Sent: 2, Learned: 2}
	for range 3 {
		if err := hs.h.SendingHeld(ctx, hold); err != nil {
			t.Fatal(err)
		}
	}
	notices := hs.mailTo("ref@example.org", before)
	if len(notices) != 1 || notices[0].Kind != "referee" || notices[0].Priority != store.PriorityGame ||
		!strings.Contains(string(notices[0].Raw), "5.4.5") {
		t.Fatalf("referee notices: %d, want one about the 5.4.5 first in line", len(notices))
	}
	if err := hs.st.LearnLimit(ctx, 2, time.Now()); err != nil {
		t.Fatal(err)
	}

	ref := "host+g1-p-" + hs.token("g1", "ref@example.org") + "@example.org"
	before = len(hs.outbox())
	hs.send("ref@example.org", ref, "STATUS")
	answers := hs.mailTo("ref@example.org", before)
	if len(answers) != 1 {
		t.Fatalf("%d answers to the referee's STATUS", len(answers))
	}
	qp, _ := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(answers[0].Raw)))
	text := string(qp)
	for _, want := range []string{"sent to 2 recipients in the last 24 hours of the 2 the mailbox may send to",
		"refuses to send more, for its sending limit", "thread mails", "all will have gone out by"} {
		if !strings.Contains(strings.Join(strings.Fields(text), " "), want) {
			t.Errorf("the referee's STATUS lacks %q:\n%s", want, text)
		}
	}
	before = len(hs.outbox())
	hs.send(addr("Alice"), "host+g1-p-"+hs.token("g1", addr("Alice"))+"@example.org", "STATUS")
	for _, m := range hs.mailTo(addr("Alice"), before) {
		if strings.Contains(string(m.Raw), "recipients in the last 24 hours") {
			t.Errorf("a player's STATUS shows the sending budget")
		}
	}

	// Mail flows again: the next hold is told again.
	if err := hs.h.SendingResumed(ctx); err != nil {
		t.Fatal(err)
	}
	before = len(hs.outbox())
	if err := hs.h.SendingHeld(ctx, hold); err != nil {
		t.Fatal(err)
	}
	if n := len(hs.mailTo("ref@example.org", before)); n != 1 {
		t.Errorf("%d notices of the second hold, want 1", n)
	}
}
