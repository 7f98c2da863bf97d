package faultproxy

import "fmt"

// Fault is what the SMTP proxy does to one mail transaction.
type Fault int

const (
	// None forwards the transaction untouched.
	None Fault = iota
	// TempFailMail answers MAIL FROM with 451 4.3.0 without forwarding it;
	// the session goes on, and the client may try again on it.
	TempFailMail
	// TempFailRcpt answers the transaction's first RCPT TO with 451 4.3.0
	// without forwarding it; the session goes on.
	TempFailRcpt
	// TempFailData takes the whole body, then answers 451 4.3.0 after the
	// final dot; upstream gets RSET instead of the message.
	TempFailData
	// Shutdown answers MAIL FROM with 421 4.3.2 and closes both
	// connections, as a server going down does.
	Shutdown
	// DropBeforeDelivery closes both connections once the client has sent
	// the final dot; upstream never gets the body, so nothing is delivered.
	DropBeforeDelivery
	// DropAfterDelivery forwards the body, reads upstream's 250 and closes
	// the client's connection without passing it on: the message is
	// delivered, but the client cannot know, and a correct client sends it
	// again, which makes a duplicate.
	DropAfterDelivery

	numFaults = iota
)

var faultNames = [numFaults]string{
	None:               "none",
	TempFailMail:       "tempfail-mail",
	TempFailRcpt:       "tempfail-rcpt",
	TempFailData:       "tempfail-data",
	Shutdown:           "shutdown",
	DropBeforeDelivery: "drop-before-delivery",
	DropAfterDelivery:  "drop-after-delivery",
}

func (f Fault) String() string {
	if f >= 0 && f < numFaults {
		return faultNames[f]
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}
