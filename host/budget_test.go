package host

import (
	"testing"

	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/store"
)

// When the sending budget is tight, what the game cannot go on without
// leaves first, then tallies and reminders, then the thread's posts, then
// receipts.
func TestMailPriorities(t *testing.T) {
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
		if got := priorityOf(compose.Message{Kind: tc.kind, Contents: tc.contents}); got != tc.want {
			t.Errorf("%s %v: priority %d, want %d", tc.kind, tc.contents, got, tc.want)
		}
	}
}
