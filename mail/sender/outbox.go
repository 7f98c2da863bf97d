package sender

import "time"

// Message is one outgoing message as the outbox hands it to the sender.
// Every attempt sends the same bytes.
type Message struct {
	// ID is the outbox's own key of the message.
	ID int64
	// MessageID is the message's Message-ID, "<...>", which Raw carries.
	MessageID string
	// Game and Kind say what the message is, for the log.
	Game, Kind string
	// From and To are the SMTP envelope.
	From string
	To   []string
	Raw  []byte
	// Attempts counts the attempts before this one.
	Attempts int
}

// Sent is a message the server accepted: when, and for how many
// recipients.
type Sent struct {
	At         time.Time
	Recipients int
}

// Room is how much more mail a budget takes now.
type Room struct {
	// Recipients and Messages are how many more the budget takes now;
	// -1 is no limit.
	Recipients, Messages int
	// Oversized takes the first message even when its recipients alone
	// are more than Recipients: a window that is empty must not wait for
	// ever for a message larger than the whole limit.
	Oversized bool
}

// Unlimited is the room when no budget applies.
var Unlimited = Room{Recipients: -1, Messages: -1}

// SendingLimit is what the ledger keeps of the provider's sending limit.
type SendingLimit struct {
	// Learned is the recipients the host had sent in the window when the
	// provider first refused for its limit; 0 for none.
	Learned   int
	LearnedAt time.Time
	// HeldSince is when the provider began refusing for its limit; zero
	// while mail flows. HeldReply is its reply.
	HeldSince time.Time
	HeldReply string
	// Holds counts the holds there have been, the one under way included.
	Holds int
}
