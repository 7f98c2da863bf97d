package mailstack

// Config configures a stack. The zero value is ready to use.
type Config struct {
	// Domain is the mail domain the stack receives mail for; every user's
	// address is name@Domain. Default: DefaultDomain.
	Domain string
}

// DefaultDomain is the domain of a stack whose Options name none. The .test
// top-level domain is reserved for testing (RFC 2606), so no real mail can
// ever be meant for it.
const DefaultDomain = "example.test"
