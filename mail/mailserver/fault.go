package mailserver

import "fmt"

// Fault is what the server does with one SMTP transaction, once its data
// has been received.
type Fault int

const (
	// FaultNone delivers the message and answers 250.
	FaultNone Fault = iota
	// FaultTempFail answers 451 4.3.0 and delivers nothing: the client
	// should try again later.
	FaultTempFail
	// FaultShutdown answers 421 4.3.2, delivers nothing and closes the
	// connection, as a server going down does.
	FaultShutdown
	// FaultReject answers 554 5.6.0 and delivers nothing: a permanent
	// failure.
	FaultReject
	// FaultDropBeforeDelivery closes the connection without an answer and
	// delivers nothing.
	FaultDropBeforeDelivery
	// FaultDropAfterDelivery delivers the message, then closes the
	// connection without an answer: the client cannot know that the
	// message arrived, and a correct one sends it again.
	FaultDropAfterDelivery
)

func (f Fault) String() string {
	switch f {
	case FaultNone:
		return "none"
	case FaultTempFail:
		return "tempfail"
	case FaultShutdown:
		return "shutdown"
	case FaultReject:
		return "reject"
	case FaultDropBeforeDelivery:
		return "drop-before-delivery"
	case FaultDropAfterDelivery:
		return "drop-after-delivery"
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}

// FaultFunc decides the fate of one SMTP transaction. It sees the message
// as received (Seq, Delivered and Fault are not yet set). It is called from
// the connections' goroutines, possibly concurrently.
type FaultFunc func(m Delivery) Fault
