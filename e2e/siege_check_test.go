//go:build integration

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/mail"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/internal/testkit/faultproxy"
	"github.com/mafiamail/mafiamail/store"
)

// check reads the database and every participant's mailbox after the run
// and checks the guarantees; it logs and prints the summary.
func (s *siege) check() {
	t := s.t
	ctx := context.Background()
	st, err := store.OpenReadOnly(ctx, s.h.db, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	reported := 0
	errorf := func(format string, args ...any) {
		t.Helper()
		if reported++; reported <= 40 {
			t.Errorf(format, args...)
		}
	}
	defer func() {
		if reported > 40 {
			t.Errorf("and %d more failures", reported-40)
		}
	}()
	genuine, special := s.sent()
	var sum killSummary

	// Every message sent to the host is in its inbox exactly once.
	inMailbox := map[string]time.Time{} // Message-ID -> when Dovecot took it for the host
	rows, dupRows := readInbox(t, st, errorf, func(id string, in store.Inbound) {
		if at, ok := lmtpTime(in.Raw); ok {
			inMailbox[id] = at
		}
	})
	ours := map[string]bool{}
	lost := 0
	byRow := map[int64]*killMsg{}
	for _, m := range genuine {
		ours[m.id] = true
		in, ok := rows[m.id]
		if !ok {
			lost++
			errorf("message %s from %s to %s was never recorded", m.id, m.from, m.to)
			continue
		}
		// The players' and referees' own mail, at their own addresses:
		// each must be applied.
		if in.Outcome != store.OutcomeApplied {
			errorf("message %s from %s to %s is %s: %s", m.id, m.from, m.to, in.Outcome, in.Reason)
		}
		byRow[in.ID] = m
	}
	for _, m := range special {
		ours[m.id] = true
		in, ok := rows[m.id]
		if !ok {
			continue // counted as lost by checkExpected
		}
		// Whether it may make events is checked below; here it is only
		// known to be the test's.
		byRow[in.ID] = &killMsg{id: m.id, from: m.from, to: m.to}
	}
	for id, in := range rows {
		if !ours[id] {
			errorf("inbox row %d is message %q, which the test did not send", in.ID, id)
		}
	}

	// Each game's log, transaction by transaction, and its winner.
	games := checkEventLog(t, st, s.h, byRow, errorf, &sum)
	if len(games) != len(s.games) {
		errorf("%d games in the store, %d played", len(games), len(s.games))
	}
	events := map[string][]store.Event{} // cause -> events
	for _, g := range games {
		evs, err := st.Events(ctx, g.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			events[e.Cause] = append(events[e.Cause], e)
		}
	}

	// The outbox: everything sent; who may get what.
	outbox, answers := readOutbox(t, st, errorf)
	sum.outbox = len(outbox)
	s.checkAudience(outbox, sum.finals, errorf)
	for _, m := range genuine {
		in, ok := rows[m.id]
		if !ok || !m.command {
			continue
		}
		replied := false
		for _, o := range answers["inbox:"+strconv.FormatInt(in.ID, 10)] {
			if slices.Contains(o.To, strings.ToLower(m.from)) || slices.Contains(o.To, m.from) {
				replied = true
			}
		}
		if !replied {
			errorf("message %s from %s to %s held a command and got no reply", m.id, m.from, m.to)
		}
	}

	flood := s.checkSpecial(special, rows, events, answers, errorf)
	lost += flood.lost
	delivered, duplicates := s.checkMailboxes(outbox, errorf)
	late, lateOutside, during, worst, ahead := s.checkLate(genuine, rows, inMailbox, events, sum.closings, errorf)
	if during == 0 {
		errorf("no message of another game was sent during the flood: its effect on them was not measured")
	}

	// The host's mailbox: every message read and flagged \Seen.
	total, unseen, err := hostInboxAt(s.stack.IMAPAddr(), siegePassword)
	if err != nil {
		t.Fatal(err)
	}
	if unseen > 0 || total < len(rows) {
		errorf("the host's INBOX holds %d messages, %d unseen; %d were recorded", total, unseen, len(rows))
	}

	logData := checkServeLog(t, s.h.logPath, errorf)
	// What the watcher saw of the restarts and the hung network.
	inIdle := bytes.Count(logData, []byte("closed the connection during IDLE"))
	unanswered := bytes.Count(logData, []byte("no answer within"))
	if inIdle == 0 {
		errorf("no Dovecot restart caught the watcher in IDLE")
	}

	// Every kind of fault happened.
	injected := s.smtp.Injected()
	var kinds []string
	faults := int64(0)
	for _, f := range []faultproxy.Fault{faultproxy.TempFailMail, faultproxy.TempFailRcpt, faultproxy.TempFailData,
		faultproxy.Shutdown, faultproxy.DropBeforeDelivery, faultproxy.DropAfterDelivery} {
		kinds = append(kinds, fmt.Sprintf("%d %v", injected[f], f))
		faults += injected[f]
		if injected[f] == 0 {
			errorf("no SMTP fault %v was injected", f)
		}
	}
	if len(s.h.kills) < s.o.kills || s.restarts < s.o.restarts || s.stalls < s.o.stalls {
		errorf("too few faults: %d kills, %d Dovecot restarts, %d IMAP stalls", len(s.h.kills), s.restarts, s.stalls)
	}
	if sum.passedWhileDown == 0 {
		errorf("no deadline passed while the host was down")
	}
	if sum.votesApplied == 0 || sum.deadlineTx == 0 {
		errorf("the games did not get going: %d votes applied, %d deadline transactions", sum.votesApplied, sum.deadlineTx)
	}

	winners := map[engine.Side]int{}
	for _, f := range sum.finals {
		winners[f.Winner]++
	}
	var ends []string
	for _, w := range slices.Sorted(maps.Keys(winners)) {
		ends = append(ends, fmt.Sprintf("%s %d", w, winners[w]))
	}
	line := fmt.Sprintf("siege %s: %d games of up to 25 players (winners: %s); %d kills (%d planned before a deadline, %d deadlines passed while down), "+
		"%d Dovecot restarts (%d ended the watcher's IDLE), %d IMAP stalls (%d commands the watcher gave up on), %d SMTP faults (%s); "+
		"%d messages sent to the host checked, %d lost, %d applied twice; %d outgoing messages, %d mailbox deliveries checked, %d duplicate copies; "+
		"%d votes applied; flood of %d: %d applied, %d refused, %d answers, sent in %v, worked off in %v; "+
		"%d of the %d messages of other games sent during the flood missed a deadline they reached the host's mailbox 1 s or more before, "+
		"%d outside it (worst %v late, at most %v ahead); largest loop %d messages",
		s.o.name, len(games), strings.Join(ends, ", "), len(s.h.kills), s.h.deadlineKills, sum.passedWhileDown,
		s.restarts, inIdle, s.stalls, unanswered, faults, strings.Join(kinds, ", "),
		len(genuine)+len(special), lost, dupRows+sum.appliedTwice, len(outbox), delivered, duplicates,
		sum.votesApplied, s.o.floodSize, flood.applied, flood.refused, flood.answers,
		s.atk.floodSent.Round(time.Second), s.atk.floodWindow.to.Sub(s.atk.floodWindow.from).Round(time.Second),
		late, during, lateOutside, worst.Round(time.Millisecond), ahead.Round(time.Millisecond), flood.largestLoop)
	t.Log(line)
	// go test shows a passing package's output only with -v: the summary
	// also goes to the file MAFIAMAIL_SIEGE_SUMMARY names, for CI to print.
	if path := os.Getenv("MAFIAMAIL_SIEGE_SUMMARY"); path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err == nil {
			_, err = fmt.Fprintln(f, line)
			err = errors.Join(err, f.Close())
		}
		if err != nil {
			t.Errorf("write the summary: %v", err)
		}
	}
}

// checkAudience checks who each outgoing message went to: a role message
// to its player alone, the mafia list to Mafiosi (and the referee), every
// message of a game to that game's people only, private mail to one.
func (s *siege) checkAudience(outbox map[string]store.OutMessage, finals map[string]*engine.State, errorf func(string, ...any)) {
	for id, m := range outbox {
		if m.Game == "" {
			continue
		}
		final := finals[m.Game]
		if final == nil {
			errorf("outgoing %s is for game %q, which is not in the store", id, m.Game)
			continue
		}
		people := map[string]engine.Role{strings.ToLower(final.Referee): ""}
		for _, p := range final.Players {
			people[strings.ToLower(p.Address)] = p.Role
		}
		// A replaced player's old address was theirs until then.
		for _, p := range final.Players {
			if m.Game == "atk2" && p.Address == siegePlayer("CarolSub", "atk2") {
				people[siegePlayer("Carol", "atk2")] = p.Role
			}
		}
		for _, r := range m.To {
			role, ok := people[strings.ToLower(r)]
			switch {
			case !ok && (m.Kind == "error" || m.Kind == "confirm"):
				// An answer may go to whoever wrote in: checked with the
				// forgeries.
			case !ok:
				errorf("outgoing %s (%s of %s) went to %s, who is not in the game", id, m.Kind, m.Game, r)
			case m.Kind == "mafia" && role != engine.Mafia && r != strings.ToLower(final.Referee):
				errorf("outgoing %s (the mafia list of %s) went to %s, a %s", id, m.Game, r, role)
			}
		}
		switch m.Kind {
		case "role", "confirm", "error", "private", "tally":
			if len(m.To) != 1 {
				errorf("outgoing %s (%s of %s) went to %d recipients: %v", id, m.Kind, m.Game, len(m.To), m.To)
			}
		}
	}
}

// checkSpecial checks the messages with an expectation of their own, as
// TestAttack does, and the loops.
func (s *siege) checkSpecial(special []*attackMsg, rows map[string]store.Inbound, events map[string][]store.Event,
	answers map[string][]store.OutMessage, errorf func(string, ...any)) expectedFigures {
	window := s.atk.floodWindow.to.Sub(s.atk.floodWindow.from)
	f := checkExpected(s.t, special, rows, events, answers, window, s.o.floodSize, siegePerHour, errorf)
	// A loop is a chain of answers: the host answers none of them and the
	// pair stops after three rounds each, so no chain is longer than seven.
	largest, loops := s.atk.resp.loops()
	f.largestLoop = largest
	if f.largestLoop > 7 {
		errorf("a chain of %d answers ran between the responders and the host", f.largestLoop)
	}
	if len(loops) == 0 || f.largestLoop < 2 {
		errorf("the auto-responders did not get going: %d looping addresses got mail, the longest chain has %d messages", len(loops), f.largestLoop)
	}
	return f
}

// checkMailboxes reads every participant's mailbox whole: after
// de-duplication by Message-ID, each holds exactly the host's messages
// addressed to them, each copy ending with the bytes the host queued.
func (s *siege) checkMailboxes(outbox map[string]store.OutMessage, errorf func(string, ...any)) (delivered, duplicates int) {
	t := s.t
	type key struct{ rcpt, id string }
	copies := map[key]int{}
	for _, user := range []string{"players", "referee"} {
		err := readAll(s.stack.IMAPAddr(), user, siegePassword, func(uid imap.UID, raw []byte) error {
			d, err := parseDelivery(uid, raw)
			if err != nil {
				errorf("%s's message %d does not parse: %v", user, uid, err)
				return nil
			}
			if !d.fromHost() {
				return nil // the responders' mail to each other
			}
			delivered++
			m, ok := outbox[d.id]
			switch {
			case !ok:
				errorf("%s got %s from the host, which is not in its outbox", d.rcpt, d.id)
			case !slices.ContainsFunc(m.To, func(r string) bool { return strings.EqualFold(r, d.rcpt) }):
				errorf("%s got %s (%s of %s), addressed to %v", d.rcpt, d.id, m.Kind, m.Game, m.To)
			case !bytes.HasSuffix(raw, m.Raw):
				errorf("%s's copy of %s differs from what the host queued", d.rcpt, d.id)
			}
			copies[key{d.rcpt, d.id}]++
			return nil
		})
		if err != nil {
			t.Fatalf("read the %s mailbox: %v", user, err)
		}
	}
	for id, m := range outbox {
		for _, r := range m.To {
			if !strings.HasSuffix(strings.ToLower(r), "@"+siegeDomain) {
				continue // refused by Postfix: only the domain's mailboxes exist
			}
			n := copies[key{strings.ToLower(r), id}]
			if n == 0 {
				errorf("%s never got %s (%s of %s)", r, id, m.Kind, m.Game)
			}
			duplicates += max(0, n-1)
		}
	}
	return delivered, duplicates
}

// checkLate checks the host's promise that every players' message that
// reached its mailbox before a deadline is applied before it, flood, kills
// and outages and all (docs/arrival.md). When it reached the mailbox is
// Dovecot's LMTP Received line, in whole seconds, hence a second of slack.
// A message's commands count at its arrival, and the host applies a
// deadline at its own time, after which the game's time only moves on: so
// a message applied before a deadline has events stamped before it, and
// one applied after it has none before it. Messages without events (a
// refused command) cannot be judged this way and are left out. It counts
// the late ones sent during the flood apart from the others, with the
// most time one had before the deadline it missed (ahead) and how far
// after the deadline it was stamped (worst); every one fails the run.
func (s *siege) checkLate(genuine []*killMsg, rows map[string]store.Inbound, delivered map[string]time.Time,
	events map[string][]store.Event, closings map[string][]time.Time, errorf func(string, ...any)) (late, lateOutside, during int, worst, ahead time.Duration) {
	const slack = time.Second
	c := s.h.clock
	real := func(g time.Time) time.Time {
		return c.Anchor.Add(time.Duration(float64(g.Sub(c.Start)) / c.Speed))
	}
	fw := s.atk.floodWindow
	for _, m := range genuine {
		in, ok := rows[m.id]
		if !ok || m.game == "" || strings.HasPrefix(m.game, "atk") || in.Outcome != store.OutcomeApplied {
			continue
		}
		at, ok := delivered[m.id]
		if !ok {
			errorf("message %s has no Received line from Dovecot's LMTP", m.id)
			continue
		}
		evs := events["inbox:"+strconv.FormatInt(in.ID, 10)]
		if len(evs) == 0 {
			continue
		}
		stamped := evs[0].At
		for _, e := range evs {
			if e.At.After(stamped) {
				stamped = e.At
			}
		}
		inFlood := m.at.After(fw.from) && m.at.Before(fw.to)
		if inFlood {
			during++
		}
		for _, d := range closings[m.game] {
			rd := real(d)
			if !rd.After(at.Add(slack)) || stamped.Before(d) {
				continue
			}
			worst, ahead = max(worst, real(stamped).Sub(rd)), max(ahead, rd.Sub(at))
			if inFlood {
				late++
			} else {
				lateOutside++
			}
			errorf("%s of game %s (during the flood: %v), in the host's mailbox %v before a deadline, was applied after it (stamped %v later)",
				m.id, m.game, inFlood, rd.Sub(at).Round(time.Millisecond), real(stamped).Sub(rd).Round(time.Millisecond))
			break
		}
	}
	return late, lateOutside, during, worst, ahead
}

// lmtpTime is when Dovecot's LMTP took a message for the host: the date of
// the topmost Received field, which Dovecot adds.
func lmtpTime(raw []byte) (time.Time, bool) {
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return time.Time{}, false
	}
	recv := m.Header.Get("Received")
	i := strings.LastIndex(recv, ";")
	if !strings.Contains(recv, "with LMTP") || i < 0 {
		return time.Time{}, false
	}
	at, err := mail.ParseDate(strings.TrimSpace(recv[i+1:]))
	return at, err == nil
}
