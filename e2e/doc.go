// Package e2e holds every test that starts a real host over sockets, behind
// the build tag integration:
//
//	go test -tags integration ./e2e
//
// Two kinds live here, and nowhere else:
//
//   - the whole-system suites, which run the mafiamail binary as a user
//     would, kill it at random instants (TestKillServe), attack it with
//     forgers, loops and floods (TestAttack), and play games through a real
//     Postfix and Dovecot while all of that happens at once (TestSiege);
//   - the host's own end-to-end tests, which start the host in the test's
//     process exactly as serve does (service.Start, through
//     internal/testkit/hostrun) on the embedded mail servers of
//     mail/mailserver or on a real Postfix and Dovecot, and play games over
//     IMAP and SMTP: arrival order across deadlines, a flood of junk, the
//     mail of three languages, near misses, night secrets, the order of
//     mail, and whole games through Postfix (postfix_game_test.go).
//
// They use the product's exported API alone. The packages' own tests stay
// fast: they drive the host through its Go API, and a package's tests
// against the embedded IMAP or SMTP server of a single component (the
// watcher, the sender) stay beside it.
//
// Every randomized suite logs its seed; MAFIAMAIL_SEED=N reruns it with
// that seed.
package e2e
