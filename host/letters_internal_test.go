package host

import "github.com/mafiamail/mafiamail/internal/testkit/mailbox"

// The package's own tests read the host's mail as the external ones do.
var parseLetter = mailbox.Parse
