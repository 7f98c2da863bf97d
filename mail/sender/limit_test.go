package sender_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/mail/sender"
	"github.com/mafiamail/mafiamail/service/sendstore"
	"github.com/mafiamail/mafiamail/store"
)

// The replies providers give once an account has sent too much are read
// as a limit; refusals about the message or a recipient are not.
func TestSendingLimitReplies(t *testing.T) {
	limit := []*smtp.SMTPError{
		mailserver.GmailLimitReply,
		{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 4, 5}, Message: "Daily SMTP relay limit exceeded for user"},
		{Code: 421, EnhancedCode: smtp.EnhancedCode{4, 7, 0}, Message: "Try again later, closing connection. Our system has detected an unusual rate of unsolicited mail"},
		{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 2, 0}, Message: "STOREDRV.Submission.Exception:SubmissionQuotaExceededException; Failed to process message due to a permanent exception"},
		{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 90}, Message: "Your message can't be sent because you've reached your daily limit for message recipients"},
		{Code: 432, EnhancedCode: smtp.EnhancedCode{4, 3, 2}, Message: "STOREDRV.ClientSubmit; sender thread limit exceeded"},
		{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 7, 500}, Message: "Server busy. Please try again later"},
		{Code: 421, EnhancedCode: smtp.EnhancedCode{4, 7, 0}, Message: "[TSS04] Messages from 192.0.2.1 temporarily deferred due to unexpected volume or user complaints"},
		{Code: 550, EnhancedCode: smtp.NoEnhancedCode, Message: "Too many messages. Try again in 92 seconds."},
		{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 7, 1}, Message: "You have exceeded your sending limit"},
		{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 7, 1}, Message: "Your account has been rate limited"},
	}
	notLimit := []*smtp.SMTPError{
		{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "The email account that you tried to reach does not exist"},
		{Code: 552, EnhancedCode: smtp.EnhancedCode{5, 2, 2}, Message: "The email account that you tried to reach is over quota"},
		{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 6, 0}, Message: "Message refused"},
		{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "Temporary failure, try again later"},
		{Code: 452, EnhancedCode: smtp.EnhancedCode{4, 5, 3}, Message: "Too many recipients"},
	}
	for _, e := range limit {
		if !sender.IsSendingLimit(fmt.Errorf("MAIL FROM: %w", e)) {
			t.Errorf("%d %v %q is not read as a sending limit", e.Code, e.EnhancedCode, e.Message)
		}
	}
	for _, e := range notLimit {
		if sender.IsSendingLimit(e) {
			t.Errorf("%d %v %q is read as a sending limit", e.Code, e.EnhancedCode, e.Message)
		}
	}
}

// holds collects OnHold and OnResume calls.
type holds struct {
	mu             sync.Mutex
	began, resumed []sender.Hold
}

func (h *holds) hold(x sender.Hold)   { h.mu.Lock(); h.began = append(h.began, x); h.mu.Unlock() }
func (h *holds) resume(x sender.Hold) { h.mu.Lock(); h.resumed = append(h.resumed, x); h.mu.Unlock() }
func (h *holds) counts() (int, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.began), len(h.resumed)
}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "host.db"), store.Config{Logger: discard})
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// enqueueN queues messages from to to, message i to pi@example.org.
func enqueueN(t *testing.T, st *store.Store, from, to int) {
	t.Helper()
	enqueuePriorities(t, st, from, make([]int, to-from+1)...)
}

// enqueuePriorities queues a message for each of priorities, numbered
// from from on, message i to pi@example.org.
func enqueuePriorities(t *testing.T, st *store.Store, from int, priorities ...int) {
	t.Helper()
	err := st.Update(context.Background(), func(tx *store.Tx) error {
		for k, p := range priorities {
			i := from + k
			m := outMsg(i, fmt.Sprintf("p%d@example.org", i))
			m.Priority = p
			if _, err := tx.Enqueue(context.Background(), m, time.Now()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("enqueue: %v", err)
	}
}

// A provider that refuses past its limit, at MAIL, at RCPT or after DATA,
// makes mail wait, never fail: with no budget set, the sender holds the
// outbox, is told once, learns the limit from what it had sent, and sends
// the rest as the window frees, without being refused again.
func TestSendingLimitIsAWait(t *testing.T) {
	t.Parallel() // it waits for the provider's windows; other tests run meanwhile
	stages := []mailserver.LimitStage{mailserver.LimitAtMail, mailserver.LimitAtRcpt, mailserver.LimitAtData}
	// Each stage waits for its own server's windows: all at once.
	concurrently(t, len(stages), len(stages), func(i int) string { return fmt.Sprint("stage", stages[i]) }, func(t *testing.T, i int) {
		stage := stages[i]
		const perWindow = 5
		window := 1500 * time.Millisecond
		lim := &mailserver.SendLimit{Recipients: perWindow, Window: window, Stage: stage}
		var got deliveries
		srv := startServer(t, mailserver.Config{AutoCreateUsers: true, Users: map[string]string{"host": "pw"},
			SendLimit: lim, OnMessage: got.add})
		st := openStore(t)
		enqueueN(t, st, 1, 13)

		var hs holds
		var fails failures
		cfg := testConfig(t, srv.SMTPAddr())
		cfg.Username, cfg.Password = "host", "pw"
		cfg.Ledger = sendstore.Ledger(st)
		cfg.Budget.Day = window
		cfg.ProbeEvery = 100 * time.Millisecond
		cfg.OnHold, cfg.OnResume, cfg.OnFailed = hs.hold, hs.resume, fails.record
		s := runSender(t, cfg, sendstore.Outbox(st))
		waitFor(t, "every message sent", func() bool {
			sent, _ := st.OutMessages(context.Background(), store.OutSent)
			return len(sent) == 13
		})
		if failed, _ := st.OutMessages(context.Background(), store.OutFailed); len(failed) != 0 || len(fails.list()) != 0 {
			t.Errorf("%d messages failed, OnFailed %d times; want none", len(failed), len(fails.list()))
		}
		if b, r := hs.counts(); b != 1 || r != 1 {
			t.Errorf("OnHold %d times, OnResume %d; want once each", b, r)
		}
		if hs.began[0].Learned != perWindow {
			t.Errorf("learned a limit of %d, want %d (what was sent when refused)", hs.began[0].Learned, perWindow)
		}
		l, err := st.SendingLimit(context.Background())
		if err != nil || l.Learned != perWindow {
			t.Errorf("the store keeps a learned limit of %d (%v), want %d", l.Learned, err, perWindow)
		}
		// One round of refusals, one per connection at most, teaches
		// the limit: no probe is refused after it.
		if n := lim.Refused(); n < 1 || n > sender.DefaultConnections {
			t.Errorf("the provider refused %d times; want 1 to %d (one round)", n, sender.DefaultConnections)
		}
		byRcpt := got.delivered()
		for i := 1; i <= 13; i++ {
			if n := len(byRcpt[outMsg(i).MessageID]); n != 1 {
				t.Errorf("message %d delivered %d times, want once", i, n)
			}
		}
		if st := s.Stats(); st.Holds != 1 || st.Failed != 0 {
			t.Errorf("stats %+v", st)
		}
	})
}

// With the budget set to the provider's limit, the provider refuses
// nothing, and the count of what was sent, kept in the store, holds
// across a restart of the sender.
func TestBudgetIsKeptAcrossRestarts(t *testing.T) {
	t.Parallel() // it waits for the provider's window; other tests run meanwhile
	const perWindow = 4
	window := 1500 * time.Millisecond
	lim := &mailserver.SendLimit{Recipients: perWindow, Window: window, Stage: mailserver.LimitAtMail}
	var got deliveries
	srv := startServer(t, mailserver.Config{AutoCreateUsers: true, Users: map[string]string{"host": "pw"},
		SendLimit: lim, OnMessage: got.add})
	st := openStore(t)
	enqueueN(t, st, 1, 3)
	cfg := testConfig(t, srv.SMTPAddr())
	cfg.Username, cfg.Password = "host", "pw"
	cfg.Ledger = sendstore.Ledger(st)
	cfg.Budget = sender.Budget{RecipientsPerDay: perWindow, Day: window}
	cfg.ProbeEvery = 50 * time.Millisecond

	s1, err := sender.New(cfg, sendstore.Outbox(st), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s1.Run(ctx) }()
	waitFor(t, "three sent", func() bool {
		sent, _ := st.OutMessages(context.Background(), store.OutSent)
		return len(sent) == 3
	})
	cancel()
	<-done

	// A new sender on the same store knows that 3 of the 4 are spent.
	enqueueN(t, st, 4, 9)
	start := time.Now()
	runSender(t, cfg, sendstore.Outbox(st))
	waitFor(t, "all nine sent", func() bool {
		sent, _ := st.OutMessages(context.Background(), store.OutSent)
		return len(sent) == 9
	})
	if n := lim.Refused(); n != 0 {
		t.Errorf("the provider refused %d times; want none", n)
	}
	// 9 recipients at 4 per window: the last went in the third window.
	if el := time.Since(start); el < window {
		t.Errorf("nine recipients went out within %v of the restart; the budget of %d per %v allows that only if the count was lost", el, perWindow, window)
	}
	// Never more than perWindow in any window.
	all := got.all()
	for i := range all {
		n := 0
		for j := range all {
			if !all[j].At.Before(all[i].At) && all[j].At.Sub(all[i].At) < window {
				n += len(all[j].To)
			}
		}
		if n > perWindow {
			t.Errorf("%d recipients within %v from transaction %d; the budget is %d", n, window, all[i].Seq, perWindow)
		}
	}
}

// The same 5xx refusing different messages to different recipients in a
// row is the account being blocked, not each message being bad: the
// messages are held, not failed, and go out once the server takes mail.
func TestSameRefusalOfManyIsABlock(t *testing.T) {
	t.Parallel() // it waits on the sender's clock; other tests run meanwhile
	var mu sync.Mutex
	blocked := true
	var got deliveries
	srv := startServer(t, mailserver.Config{AutoCreateUsers: true, OnMessage: got.add, Fault: func(mailserver.Delivery) mailserver.Fault {
		mu.Lock()
		defer mu.Unlock()
		if blocked {
			return mailserver.FaultReject
		}
		return mailserver.FaultNone
	}})
	st := openStore(t)
	enqueueN(t, st, 1, 6)
	var hs holds
	var fails failures
	cfg := testConfig(t, srv.SMTPAddr())
	cfg.Connections = 1
	cfg.ProbeEvery = 50 * time.Millisecond
	cfg.MaxProbe = 100 * time.Millisecond
	cfg.OnHold, cfg.OnResume, cfg.OnFailed = hs.hold, hs.resume, fails.record
	runSender(t, cfg, sendstore.Outbox(st))
	waitFor(t, "a hold", func() bool { b, _ := hs.counts(); return b == 1 })
	time.Sleep(300 * time.Millisecond) // a few refused probes
	mu.Lock()
	blocked = false
	mu.Unlock()
	waitFor(t, "every message sent", func() bool {
		sent, _ := st.OutMessages(context.Background(), store.OutSent)
		return len(sent) == 6
	})
	if len(fails.list()) != 0 {
		t.Errorf("OnFailed %d times; want none", len(fails.list()))
	}
	if b, r := hs.counts(); b != 1 || r != 1 || !hs.began[0].Blocked {
		t.Errorf("OnHold %d times, OnResume %d, blocked %v; want one blocked hold", b, r, b > 0 && hs.began[0].Blocked)
	}
}

// The forecast is when the window will have let what waits go out.
func TestForecast(t *testing.T) {
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	sent := []sender.Sent{{At: now.Add(-20 * time.Hour), Recipients: 200}, {At: now.Add(-2 * time.Hour), Recipients: 300}}
	if f := sender.Forecast(sent, 10, 600, day, now); !f.IsZero() {
		t.Errorf("10 fit in the 100 left, forecast %v", f)
	}
	// 100 left now; 200 more once the first sends age out, 4 hours on.
	if f := sender.Forecast(sent, 250, 600, day, now); !f.Equal(now.Add(4 * time.Hour)) {
		t.Errorf("forecast %v, want %v", f, now.Add(4*time.Hour))
	}
	// 100 + 200 + 300 by 22 hours on, then 600 a day.
	if f := sender.Forecast(sent, 1000, 600, day, now); !f.Equal(now.Add(22*time.Hour + day)) {
		t.Errorf("forecast %v, want %v", f, now.Add(22*time.Hour+day))
	}
}

// A hold the store records from before a restart is taken up: the sender
// probes with one message, the most urgent, and the first accepted ends
// the hold, without telling the referees again.
func TestHoldSurvivesRestart(t *testing.T) {
	var got deliveries
	srv := startServer(t, mailserver.Config{AutoCreateUsers: true, OnMessage: got.add})
	st := openStore(t)
	if _, err := st.BeginHold(context.Background(), time.Now().Add(-time.Hour), "550 5.4.5 Daily user sending limit exceeded"); err != nil {
		t.Fatal(err)
	}
	// Four posts, then the notice that tells the referee of the hold.
	enqueuePriorities(t, st, 1, store.PriorityThread, store.PriorityThread, store.PriorityThread,
		store.PriorityThread, store.PriorityGame)
	var hs holds
	cfg := testConfig(t, srv.SMTPAddr())
	cfg.Ledger = sendstore.Ledger(st)
	cfg.OnHold = hs.hold
	cfg.OnResume = func(h sender.Hold) {
		hs.resume(h)
		if _, err := st.EndHold(context.Background()); err != nil {
			t.Error(err)
		}
	}
	runSender(t, cfg, sendstore.Outbox(st))
	waitFor(t, "every message sent", func() bool {
		sent, _ := st.OutMessages(context.Background(), store.OutSent)
		return len(sent) == 5
	})
	waitFor(t, "the hold ended", func() bool { _, r := hs.counts(); return r == 1 })
	if b, _ := hs.counts(); b != 0 {
		t.Errorf("OnHold %d times after the restart; the referees were told before it", b)
	}
	if l, err := st.SendingLimit(context.Background()); err != nil || !l.HeldSince.IsZero() {
		t.Errorf("the store still records a hold: %+v %v", l, err)
	}
	// A hold leaves no room but the probe's, so the probe is the most
	// urgent message, even with no budget set.
	if first := got.all(); len(first) == 0 || headerID(first[0].Data) != outMsg(5).MessageID {
		t.Errorf("the probe was not the most urgent message, the referee's notice queued last")
	}
}

// messages_per_minute: never more messages in any rolling minute.
func TestMessagesPerMinute(t *testing.T) {
	t.Parallel() // it waits on the sender's clock; other tests run meanwhile
	var got deliveries
	srv := startServer(t, mailserver.Config{AutoCreateUsers: true, OnMessage: got.add})
	st := openStore(t)
	enqueueN(t, st, 1, 6)
	minute := 400 * time.Millisecond
	cfg := testConfig(t, srv.SMTPAddr())
	cfg.Ledger = sendstore.Ledger(st)
	cfg.Budget = sender.Budget{MessagesPerMinute: 2, Minute: minute}
	start := time.Now()
	runSender(t, cfg, sendstore.Outbox(st))
	waitFor(t, "every message sent", func() bool {
		sent, _ := st.OutMessages(context.Background(), store.OutSent)
		return len(sent) == 6
	})
	if el := time.Since(start); el < 2*minute {
		t.Errorf("6 messages at 2 a minute went out in %v, under two minutes of %v", el, minute)
	}
	sent, _ := st.OutMessages(context.Background(), store.OutSent)
	for _, a := range sent {
		n := 0
		for _, b := range sent {
			if !b.SentAt.Before(a.SentAt) && b.SentAt.Sub(a.SentAt) < minute {
				n++
			}
		}
		if n > 2 {
			t.Errorf("%d messages within a minute from %v; the budget is 2", n, a.SentAt)
		}
	}
}

// A window with nothing sent takes what fits and no more, however large
// the batch: a sender that waited a whole day (a host that was down, or
// asked seldom) does not send past the limit and into the provider's
// refusal. Only a message larger than the limit goes alone into an empty
// window, since it would otherwise wait for ever.
func TestEmptyWindowTakesOnlyWhatFits(t *testing.T) {
	const perDay = 3
	lim := &mailserver.SendLimit{Recipients: perDay, Window: 24 * time.Hour, Stage: mailserver.LimitAtRcpt}
	srv := startServer(t, mailserver.Config{AutoCreateUsers: true, Users: map[string]string{"host": "pw"}, SendLimit: lim})
	st := openStore(t)
	enqueueN(t, st, 1, 5)
	cfg := testConfig(t, srv.SMTPAddr())
	cfg.Username, cfg.Password = "host", "pw"
	cfg.BatchSize = 10
	cfg.Ledger = sendstore.Ledger(st)
	cfg.Budget = sender.Budget{RecipientsPerDay: perDay}
	s, err := sender.New(cfg, sendstore.Outbox(st), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SendDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	sent, _ := st.OutMessages(context.Background(), store.OutSent)
	if len(sent) != perDay || lim.Refused() != 0 {
		t.Fatalf("an empty window of %d took %d messages, with %d refusals", perDay, len(sent), lim.Refused())
	}

	// One message to more readers than the limit, into an empty window.
	st2 := openStore(t)
	err = st2.Update(context.Background(), func(tx *store.Tx) error {
		m := outMsg(9, "a@example.org")
		m.To = []string{"a@example.org", "b@example.org", "c@example.org", "d@example.org"}
		_, err := tx.Enqueue(context.Background(), m, time.Now())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	lim2 := &mailserver.SendLimit{Recipients: 10, Window: 24 * time.Hour}
	srv.SetSendLimit(lim2)
	cfg.Ledger = sendstore.Ledger(st2)
	s2, err := sender.New(cfg, sendstore.Outbox(st2), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.SendDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if sent, _ := st2.OutMessages(context.Background(), store.OutSent); len(sent) != 1 {
		t.Fatalf("a message to more readers than the limit did not go into an empty window: %d sent", len(sent))
	}
}

// A limit is the account's, not the message's: a message refused for it
// again and again (the probe of a long hold) builds up no backoff of its
// own, so that a passing failure after the hold makes it wait as long as
// any other message's first failure, not hours.
func TestHoldBuildsNoBackoff(t *testing.T) {
	lim := &mailserver.SendLimit{Recipients: 0, Window: time.Hour, Stage: mailserver.LimitAtMail}
	var got deliveries
	srv := startServer(t, mailserver.Config{AutoCreateUsers: true, Users: map[string]string{"host": "pw"},
		SendLimit: lim, OnMessage: got.add})
	st := openStore(t)
	enqueueN(t, st, 1, 1)
	cfg := testConfig(t, srv.SMTPAddr())
	cfg.Username, cfg.Password = "host", "pw"
	cfg.Ledger = sendstore.Ledger(st)
	cfg.ProbeEvery, cfg.MaxProbe = 5*time.Millisecond, 5*time.Millisecond
	// A message's n-th failure waits about MinBackoff doubled n times.
	cfg.MinBackoff, cfg.MaxBackoff = 100*time.Millisecond, time.Minute
	runSender(t, cfg, sendstore.Outbox(st))
	const refusals = 8
	waitFor(t, "the probe refused again and again", func() bool { return lim.Refused() >= refusals })

	// The provider takes mail again, but the next transaction fails for now.
	var mu sync.Mutex
	failed := false
	srv.SetFault(func(mailserver.Delivery) mailserver.Fault {
		mu.Lock()
		defer mu.Unlock()
		if failed {
			return mailserver.FaultNone
		}
		failed = true
		return mailserver.FaultTempFail
	})
	srv.SetSendLimit(nil)
	lifted := time.Now()
	waitFor(t, "the message sent", func() bool {
		sent, _ := st.OutMessages(context.Background(), store.OutSent)
		return len(sent) == 1
	})
	// After one failure, the retry comes within MinBackoff; after as
	// many as the probes refused, it would come seconds later.
	if el := time.Since(lifted); el > 2*time.Second {
		t.Errorf("the message went out %v after the provider took mail again and failed it once; a hold must not count as its failure", el.Round(time.Millisecond))
	}
	m, err := st.OutMessageByID(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if m.Attempts != 2 {
		t.Errorf("the message counts %d attempts after %d refusals for the limit, a failure and its sending; want 2", m.Attempts, lim.Refused())
	}
}
