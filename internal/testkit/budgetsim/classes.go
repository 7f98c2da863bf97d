package budgetsim

import (
	"bytes"

	"github.com/mafiamail/mafiamail/store"
)

// Classes of the host's mail in the report, in its column order.
const (
	ClassRole     = "role"
	ClassPost     = "posts"
	ClassDigest   = "digests"
	ClassTally    = "tallies"
	ClassReminder = "reminders"
	ClassNight    = "night results"
	ClassMafia    = "mafia list"
	ClassNews     = "dawn/close/end"
	ClassReceipt  = "receipts"
	ClassAnswer   = "private answers"
	ClassReferee  = "referee"
)

// Classes lists the classes in report order.
var Classes = []string{ClassRole, ClassPost, ClassDigest, ClassTally, ClassReminder, ClassNight, ClassMafia,
	ClassNews, ClassReceipt, ClassAnswer, ClassReferee}

// classify tells what a queued message is for the report, from its kind
// and the priority the host gave it (host.priorityOf): the thread's news
// (the close, a death, the day) leave at the game's priority, its posts
// and votes at the thread's.
func classify(m store.OutMessage) string {
	switch m.Kind {
	case "role":
		return ClassRole
	case "thread":
		if m.Priority == store.PriorityGame {
			return ClassNews
		}
		if bytes.Contains(m.Raw, []byte("Digest: ")) {
			return ClassDigest
		}
		return ClassPost
	case "dawn", "end":
		return ClassNews
	case "tally":
		return ClassTally
	case "private":
		if m.Priority == store.PriorityNotice {
			return ClassReminder
		}
		return ClassNight
	case "mafia":
		return ClassMafia
	case "confirm":
		if m.Priority == store.PriorityReceipt {
			return ClassReceipt
		}
		return ClassAnswer
	case "error":
		return ClassAnswer
	}
	return ClassReferee
}

// secret reports whether a class of mail carries what only its reader may
// know.
func secret(class string) bool { return class == ClassRole || class == ClassNight }
