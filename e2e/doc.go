// Package e2e holds the whole-system suites: they run the mafiamail binary
// as a user would, kill it at random instants (TestKillServe), attack it
// with forgers, loops and floods (TestAttack), and play games through a real
// Postfix and Dovecot while all of that happens at once (TestSiege). They
// take minutes and sit behind the build tag integration:
//
//	go test -tags integration ./e2e
//
// Every randomized suite logs its seed; MAFIAMAIL_SEED=N reruns it with
// that seed.
package e2e
