// Package mailstack runs a real Dovecot (IMAP and LMTP) and Postfix (SMTP) on
// 127.0.0.1 for integration tests, so that mafiamail's watcher and sender are
// tested against the servers its users actually run rather than against the
// embedded ones alone.
//
// Each [Stack] lives in its own temporary folder with its own configuration
// files, queue, maildirs, logs and free high ports; several stacks can run in
// one test binary and in parallel test binaries. No systemd is involved: the
// daemons are children of the test process, each leading its own process
// group, and [Stack.Close] (registered with t.Cleanup by [Start]) waits until every
// process of both groups is gone. Should the test binary die without
// cleaning up (killed, or ended by go test's timeout), a small watchdog
// shell per daemon, which notices the test process's end through a pipe,
// sends SIGTERM to the daemon's group. Only the temporary folder is left
// behind then.
//
// Mail for the stack's domain is accepted on the SMTP port from loopback
// without authentication and handed to Dovecot over LMTP with
// recipient_delimiter "+": mail to host+tag@domain lands in host's INBOX with
// a Delivered-To header that keeps the full address. Mail for other domains
// is refused at RCPT (554, relay access denied) and mail for unknown users of
// the domain with 550, so that a sender's handling of permanent failures can
// be tested too.
//
// The daemons need root and the Debian packages dovecot-imapd, dovecot-lmtpd
// and postfix (Dovecot 2.3), which the repository's .ci/run installs. Where
// they are missing, [Start] skips the test, or fails it when the environment
// variable CI is set: a CI run must never pass by skipping these tests.
package mailstack
