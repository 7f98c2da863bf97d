package compose_test

import (
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/lang"
	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/templates"
)

const observerAddr = "olga@watchers.example.net"

var observerToken = tokenFor("olga observer")

// signup runs the sign-ups of a game: every name JOINs at the sign-up
// address, except the last, whom the referee ADDs.
func (h *harness) signup(names []string) (joinReply, refereeJoined []compose.Outgoing, addMsgs []compose.Outgoing) {
	h.t.Helper()
	for i, n := range names {
		if i == len(names)-1 {
			r := h.ok(engine.Referee, engine.Private, "ADD "+n+" "+addrFor(n),
				engine.Command{Verb: engine.CmdAdd, Name: n, Address: addrFor(n), Token: tokenFor(n)})
			addMsgs = r.msgs
			continue
		}
		r := h.ok(engine.Actor{Kind: engine.ByOutsider, Address: addrFor(n)}, engine.Signup, "JOIN "+n,
			engine.Command{Verb: engine.CmdJoin, Name: n, Token: tokenFor(n)})
		if i == 0 {
			joinReply = append(joinReply, r.reply)
			refereeJoined = r.msgs
		}
	}
	return
}

// single composes events one by one with the one-event API, as a host that
// does not gather a step's events would.
func (h *harness) single(evs []engine.Event) []compose.Outgoing {
	h.t.Helper()
	var out []compose.Outgoing
	for _, l := range h.logged(evs) {
		msgs, err := h.c.Event(l, h.s, h.dir)
		if err != nil {
			h.t.Fatalf("Event %s: %v", l.Event.Type, err)
		}
		out = append(out, msgs...)
	}
	h.record(out)
	return out
}

// playClassic plays a classic game from creation to the Town's win,
// naming the messages that become golden files.
func playClassic(t *testing.T) (*harness, *goldens) { return playClassicIn(t, lang.Default) }

// playClassicIn is the classic game in a language: the game's, and the
// host's for mail about no game. Its golden files are
// testdata/classic-TAG (testdata/classic for English). It is played once
// for all the tests that read it (see shared).
func playClassicIn(t *testing.T, tag string) (*harness, *goldens) {
	return shared(t, "classic", tag, playClassicGame)
}

// playClassicGame plays the classic game in a language.
func playClassicGame(t *testing.T, tag string) (*harness, *goldens) {
	h := newHarness(t, inLanguage(engine.Classic(), tag), "dec26", 3)
	h.c.SetLanguage(tag)
	if tag != lang.Default {
		h.sampled() // the English game cross-checks every batch
	}
	g := newGoldens(t, goldenDir("classic", tag))
	g.add("created", to(t, []compose.Outgoing{h.all[0].Outgoing}, "ref"))
	// Mail to the host's own address, before any game.
	hostHelp, err := h.c.Reply(compose.Answer{Sender: engine.Actor{Kind: engine.ByOutsider, Address: "newbie@example.net"},
		Cause: "<hello@example.net>", Subject: "How does this work?", Received: h.now.Add(-time.Minute), Now: h.now,
		Lines: []compose.Line{{Text: "HELP"}}})
	if err != nil {
		t.Fatal(err)
	}
	g.add("reply-host-help", hostHelp)
	hostRules, err := h.c.Reply(compose.Answer{Sender: engine.Actor{Kind: engine.ByOutsider, Address: "newbie@example.net"},
		Cause: "<rules@example.net>", Subject: "Rules?", Received: h.now.Add(-time.Minute), Now: h.now,
		Lines: []compose.Line{{Text: "HELP RULES"}}})
	if err != nil {
		t.Fatal(err)
	}
	g.add("reply-host-rules", hostRules)

	names := names11
	// Sign-ups, a setup change with some players in, an observer.
	for i, n := range names[:4] {
		r := h.ok(engine.Actor{Kind: engine.ByOutsider, Address: addrFor(n)}, engine.Signup, "JOIN "+n,
			engine.Command{Verb: engine.CmdJoin, Name: n, Token: tokenFor(n)})
		if i == 0 {
			g.add("reply-join", r.reply)
			g.add("joined-referee", to(t, r.msgs, "ref"))
		}
	}
	// A player changes the name they signed up with, and back.
	r := h.ok(engine.PlayerActor(4), engine.Private, "JOIN "+names[3]+" the Baker",
		engine.Command{Verb: engine.CmdJoin, Name: names[3] + " the Baker"})
	g.add("reply-rename", r.reply) // the player's news of it comes in the answer
	g.add("renamed-referee", to(t, r.msgs, "ref"))
	h.ok(engine.PlayerActor(4), engine.Private, "JOIN "+names[3], engine.Command{Verb: engine.CmdJoin, Name: names[3]})
	r = h.ok(engine.Referee, engine.Private, "SETUP classic", engine.Command{Verb: engine.CmdSetup, Text: "classic"})
	g.add("setup", to(t, r.msgs, "s1"))
	r = h.run(engine.Actor{Kind: engine.ByOutsider, Address: "eve@outside.example.com"}, engine.Signup, "HELP", verb(engine.CmdHelp))
	g.add("reply-help-outsider", r.reply)
	g.add("reply-confirm", h.held("eve@outside.example.com", "JOIN"))
	h.dir.Observers[observerAddr] = observerToken
	r = h.ok(engine.Referee, engine.Private, "ADMIT "+observerAddr, engine.Command{Verb: engine.CmdAdmit, Address: observerAddr})
	g.add("observer", toAddr(t, r.msgs, observerAddr))
	_, _, add := h.signup(names[4:])
	g.add("joined", to(t, add, "s11"))
	r = h.refused(engine.Actor{Kind: engine.ByOutsider, Address: "late@outside.example.com"}, engine.Signup, "JOIN Latecomer",
		engine.Command{Verb: engine.CmdJoin, Name: "Latecomer", Token: tokenFor("late")})
	g.add("reply-join-refused", r.reply)

	// The start: the draw, every role message, Day 1.
	r = h.ok(engine.Referee, engine.Private, "START", verb(engine.CmdStart))
	mafia, insp := h.withRole(engine.Mafia), h.withRole(engine.Inspector)[0]
	var towns []string
	for _, p := range h.s.Players {
		if p.Role == engine.Townsperson {
			towns = append(towns, p.Name)
		}
	}
	g.add("reply-start", r.reply)
	g.add("role-mafia", toKind(t, r.msgs, h.key(mafia[0]), compose.KindRole))
	g.add("mafialist", toKind(t, r.msgs, h.key(mafia[0]), compose.KindMafia))
	g.add("role-inspector", toKind(t, r.msgs, h.key(insp), compose.KindRole))
	g.add("role-townsperson", toKind(t, r.msgs, h.key(towns[0]), compose.KindRole))
	g.add("day1", toKind(t, r.msgs, h.key(towns[0]), compose.KindThread))
	g.add("day1-observer", toAddr(t, r.msgs, observerAddr))

	// Day 1: votes of every kind, a tie between two Townspeople.
	a, b := towns[0], towns[1]
	r = h.ok(h.player(mafia[0]), engine.Thread, "VOTE "+a, vote(a))
	g.add("vote", to(t, r.msgs, h.key(towns[2])))
	g.add("reply-vote", r.reply)
	h.ok(h.player(mafia[1]), engine.Thread, "VOTE "+a, vote(a))
	h.ok(h.player(towns[2]), engine.Thread, "VOTE "+b, vote(b))
	h.ok(h.player(towns[3]), engine.Thread, "VOTE "+b, vote(b))
	r = h.ok(h.player(insp), engine.Thread, "VOTE NULL", vote("null"))
	g.add("vote-null", to(t, r.msgs, h.key(insp)))
	h.ok(h.player(towns[4]), engine.Thread, "VOTE "+a, vote(a))
	r = h.ok(h.player(towns[4]), engine.Thread, "UNVOTE", verb(engine.CmdUnvote))
	g.add("vote-unvote", to(t, r.msgs, h.key(towns[4])))
	h.ok(h.player(towns[4]), engine.Thread, "VOTE "+b, vote(b))
	h.ok(h.player(mafia[2]), engine.Thread, "VOTE "+a, vote(a))
	r = h.ok(h.player(towns[2]), engine.Thread, "LOCK", verb(engine.CmdLock))
	g.add("vote-lock", to(t, r.msgs, "ref"))
	h.ok(h.player(towns[2]), engine.Thread, "UNLOCK", verb(engine.CmdUnlock))
	h.ok(h.player(towns[2]), engine.Thread, "LOCK", verb(engine.CmdLock))
	r = h.refused(h.player(towns[5]), engine.Thread, "VOTE Zed", vote("Zed"))
	g.add("reply-refused-name", r.reply)

	// Discussion, the mafia list, a note to the referee.
	r = h.ok(h.player(towns[5]), engine.Thread, "", post("I have a bad feeling about "+a+".\n\nWhy the rush to vote?\nAnyone?"))
	g.add("post", to(t, r.msgs, h.key(towns[6])))
	r = h.ok(h.player(mafia[0]), engine.MafiaCh, "", post("Stay calm, keep voting "+a+"."))
	g.add("mafia", to(t, r.msgs, h.key(mafia[1])))
	g.add("mafia-own", to(t, r.msgs, h.key(mafia[0])))
	r = h.ok(h.player(towns[6]), engine.Private, "", post("I will be away on Thursday, sorry."))
	g.add("note", to(t, r.msgs, "ref"))
	r = h.ok(engine.Referee, engine.Thread, "", post("Please keep it civil, everyone."))
	g.add("post-referee", to(t, r.msgs, h.key(a)))
	// A post that copies the host's and the referee's lines still reads as
	// the player's post.
	r = h.ok(h.player(towns[4]), engine.Thread, "", post(hostVoice))
	g.add("post-hostvoice", to(t, r.msgs, h.key(towns[6])))
	// A Reply that went to the host's bare address.
	md, err := h.c.Misdirected(compose.Misdirected{State: h.s, Dir: h.dir, Slot: h.slot(towns[3]), Channel: engine.Thread,
		Lines: []string{"VOTE " + a, "", "I am with Bob on this."}, Cause: "<mutt.1@players.example.net>",
		Subject: "Re: [dec26] Day 1", Received: h.now.Add(-time.Minute), Now: h.now})
	if err != nil {
		t.Fatal(err)
	}
	h.record([]compose.Outgoing{md})
	g.add("misdirected", md)

	// Requests: tally, status, help.
	r = h.ok(h.player(towns[6]), engine.Thread, "TALLY", verb(engine.CmdTally))
	g.add("reply-tally", r.reply)
	g.add("tally", to(t, h.single(r.events), h.key(towns[6])))
	r = h.ok(h.player(mafia[0]), engine.Private, "STATUS", verb(engine.CmdStatus))
	g.add("status", to(t, h.single(r.events), h.key(mafia[0])))
	r = h.ok(engine.Referee, engine.Private, "STATUS", verb(engine.CmdStatus))
	g.add("status-referee", to(t, h.single(r.events), "ref"))
	// The referee's STATUS on a host near its sending limit.
	h.c.SetSendingStatus(func(game string) (compose.SendingStatus, bool) {
		return compose.SendingStatus{Used: 431, Limit: 500, Waiting: map[string]int{compose.KindThread: 22},
			Round: &compose.RoundForecast{Round: "Day 1", Closes: h.s.ClosesAt(), Every: 2 * time.Hour,
				AsChosen: 540, Planned: 120, Room: 69 + 100}}, game == h.s.Game
	})
	r = h.ok(engine.Referee, engine.Private, "STATUS", verb(engine.CmdStatus))
	g.add("status-referee-sending", to(t, h.single(r.events), "ref"))
	h.c.SetSendingStatus(nil)
	r = h.ok(h.player(insp), engine.Private, "HELP", verb(engine.CmdHelp))
	g.add("help", to(t, h.single(r.events), h.key(insp)))
	r = h.ok(engine.Actor{Kind: engine.ByObserver, Address: observerAddr}, engine.Private, "HELP", verb(engine.CmdHelp))
	g.add("help-observer", r.reply)
	r = h.ok(engine.Referee, engine.Private, "HELP", verb(engine.CmdHelp))
	g.add("help-referee", r.reply)
	// Judy reads her mail in Berlin: from now on her copies show her time
	// beside the game's.
	r = h.ok(h.player("Judy"), engine.Private, "ZONE Europe/Berlin", engine.Command{Verb: engine.CmdZone, Text: "Europe/Berlin"})
	g.add("reply-zone", r.reply)
	r = h.refused(h.player("Judy"), engine.Private, "ZONE Berlin", engine.Command{Verb: engine.CmdZone, Text: "Berlin"})
	g.add("reply-zone-refused", r.reply)
	r = h.ok(h.player("Judy"), engine.Private, "MAIL", engine.Command{Verb: engine.CmdMail})
	g.add("reply-mail-shown", r.reply)
	r = h.ok(h.player("Judy"), engine.Private, "LANGUAGE", engine.Command{Verb: engine.CmdLanguage})
	g.add("reply-language-shown", r.reply)
	r = h.ok(h.player("Judy"), engine.Private, "CALENDAR OFF", engine.Command{Verb: engine.CmdCalendar, Text: engine.CalendarOff})
	g.add("reply-calendar-off", r.reply)
	r = h.ok(h.player("Judy"), engine.Private, "CALENDAR ON", engine.Command{Verb: engine.CmdCalendar, Text: engine.CalendarOn})
	g.add("reply-calendar-on", r.reply)

	// Extensions: asked and denied, asked and granted; the referee's own.
	h.now = h.now.Add(2 * time.Hour)
	r = h.ok(h.player(a), engine.Thread, "EXTEND", verb(engine.CmdExtend))
	g.add("extension-referee", to(t, r.msgs, "ref"))
	g.add("reply-extend", r.reply)
	r = h.ok(engine.Referee, engine.Private, "DENY", verb(engine.CmdDeny))
	g.add("extension-denied", to(t, r.msgs, h.key(a)))
	h.ok(h.player(b), engine.Private, "EXTEND", verb(engine.CmdExtend))
	r = h.ok(engine.Referee, engine.Private, "GRANT 6h", engine.Command{Verb: engine.CmdGrant, Duration: 6 * time.Hour})
	g.add("deadline-grant", to(t, r.msgs, h.key(b)))
	r = h.ok(engine.Referee, engine.Private, "EXTEND 2h", engine.Command{Verb: engine.CmdExtend, Duration: 2 * time.Hour})
	g.add("deadline-extend", to(t, r.msgs, h.key(a)))
	r = h.ok(engine.Referee, engine.Private, "DEADLINE 2026-12-03 20:00",
		engine.Command{Verb: engine.CmdDeadline, Text: "2026-12-03 20:00"})
	g.add("deadline-set", to(t, r.msgs, h.key(a)))
	r = h.ok(engine.Referee, engine.Private, "WEEKEND CLOSE", verb(engine.CmdWeekendClose))
	g.add("deadline-weekend", to(t, r.msgs, h.key(a)))
	r = h.ok(engine.Referee, engine.Private, "ANNOUNCE", engine.Command{Verb: engine.CmdAnnounce,
		Text: "Welcome to game dec26!\n\nRemember: one vote per line, and be kind."})
	g.add("announce", to(t, r.msgs, h.key(b)))
	r = h.ok(engine.Referee, engine.Private, "PAUSE", verb(engine.CmdPause))
	g.add("pause", to(t, r.msgs, h.key(b)))
	h.now = h.now.Add(3 * time.Hour)
	r = h.ok(engine.Referee, engine.Private, "RESUME", verb(engine.CmdResume))
	g.add("resume", to(t, r.msgs, h.key(b)))

	// The reminder, then the close: missed votes and a runoff.
	msgs, _ := h.tick(h.s.Deadline.Add(-6 * time.Hour))
	g.add("reminder", to(t, msgs, h.key(b)))
	msgs = h.untilClose()
	g.add("close-runoff", to(t, msgs, h.key(towns[2])))

	// The runoff: the first request is granted at once; everyone votes.
	r = h.ok(h.player(towns[5]), engine.Thread, "EXTEND", verb(engine.CmdExtend))
	g.add("deadline-auto", to(t, r.msgs, h.key(a)))
	for _, v := range []struct{ who, whom string }{{towns[5], a}, {a, b}, {b, a}, {towns[6], b}, {insp, b}} {
		h.ok(h.player(v.who), engine.Thread, "VOTE "+v.whom, vote(v.whom))
	}
	msgs = h.untilClose()
	g.add("close-eliminated", to(t, msgs, h.key(towns[3])))
	g.add("close-eliminated-dead", to(t, msgs, h.key(b)))
	g.add("close-eliminated-zone", to(t, msgs, h.key("Judy")))

	// Night 1: the Mafia change their mind; the Inspector inspects.
	r = h.ok(h.player(mafia[1]), engine.MafiaCh, "NO KILL", verb(engine.CmdNoKill))
	g.add("action-nokill-echo", to(t, r.msgs, h.key(mafia[0])))
	r = h.ok(h.player(mafia[0]), engine.Private, "KILL "+towns[5], at(engine.CmdKill, towns[5]))
	g.add("action-kill-echo", to(t, r.msgs, h.key(mafia[1])))
	g.add("action-kill-referee", to(t, r.msgs, "ref"))
	g.add("reply-kill", r.reply)
	r = h.refused(h.player(towns[2]), engine.Private, "INSPECT "+mafia[0], at(engine.CmdInspect, mafia[0]))
	g.add("reply-refused-role", r.reply)
	r = h.ok(h.player(insp), engine.Private, "INSPECT "+mafia[1], at(engine.CmdInspect, mafia[1]))
	g.add("reply-inspect", r.reply)
	r = h.ok(engine.Referee, engine.Private, "STATUS", verb(engine.CmdStatus))
	g.add("reply-status-referee-night", r.reply)
	msgs = h.untilClose()
	g.add("dawn", to(t, msgs, h.key(towns[3])))
	g.add("dawn-victim", to(t, msgs, h.key(towns[5])))
	g.add("inspection", toKind(t, msgs, h.key(insp), compose.KindPrivate))
	g.add("inspection-referee", toKind(t, msgs, "ref", compose.KindReferee))

	// Day 2: held posts from the dead and from a leak, a substitute, a
	// modkill, and a digest of the thread.
	r = h.ok(h.player(b), engine.Thread, "", post("I was Town, you fools!"))
	g.add("held", to(t, r.msgs, h.key(b)))
	g.add("held-referee", to(t, r.msgs, "ref"))
	r = h.ok(engine.Referee, engine.Private, "RELAY 1", engine.Command{Verb: engine.CmdRelay, Held: 1})
	g.add("post-relayed", to(t, r.msgs, h.key(a)))
	h.ok(h.player(towns[5]), engine.Thread, "", post("Avenge me!"))
	r = h.ok(engine.Referee, engine.Private, "REJECT 2 SUSPEND", engine.Command{Verb: engine.CmdReject, Held: 2, Suspend: true})
	g.add("held-rejected", to(t, r.msgs, h.key(towns[5])))
	g.add("reply-reject-referee", r.reply)
	r = h.ok(h.player(towns[6]), engine.Thread, "", post("Look:\n"+engine.SecretMarker("dec26")))
	g.add("held-leak-referee", to(t, r.msgs, "ref"))
	subAddr := "sam@subs.example.net"
	r = h.ok(engine.Referee, engine.Private, "REPLACE "+towns[6]+" WITH "+subAddr,
		engine.Command{Verb: engine.CmdReplace, Target: towns[6], Address: subAddr, Token: tokenFor("sam substitute")})
	g.add("replaced", toAddr(t, r.msgs, addrFor(towns[6])))
	g.add("substitute", toKind(t, r.msgs, h.key(a), compose.KindThread))
	g.add("role-substitute", toKind(t, r.msgs, h.key(towns[6]), compose.KindRole))
	g.add("reply-replace-referee", r.reply)
	// A vote on the removed player is cleared, and its voter told (D14).
	h.ok(h.player(towns[3]), engine.Thread, "VOTE "+towns[4], vote(towns[4]))
	r = h.ok(engine.Referee, engine.Private, "MODKILL "+towns[4], at(engine.CmdModkill, towns[4]))
	g.add("death-modkill", to(t, r.msgs, h.key(a)))
	g.add("vote-cleared", toKind(t, r.msgs, h.key(towns[3]), compose.KindPrivate))

	start, since := h.seq, h.now
	h.now = h.now.Add(20 * time.Minute)
	h.ok(h.player(a), engine.Thread, "", post("Day 2. "+mafia[0]+" pushed hard on me yesterday."))
	h.ok(h.player(a), engine.Thread, "VOTE "+mafia[0], vote(mafia[0]))
	h.now = h.now.Add(35 * time.Minute)
	h.ok(h.player(mafia[0]), engine.Thread, "", post("That is a stretch."))
	h.now = h.now.Add(50 * time.Minute)
	h.ok(h.player(towns[2]), engine.Thread, "VOTE "+mafia[0], vote(mafia[0]))
	h.ok(h.player(towns[2]), engine.Thread, "LOCK", verb(engine.CmdLock))
	h.now = since.Add(2 * time.Hour)
	dg, err := h.c.Digest(compose.Digest{State: h.s, Dir: h.dir, Events: h.threadEvents(start), Since: since, Now: h.now})
	if err != nil {
		t.Fatalf("Digest: %v", err)
	}
	h.record(dg)
	g.add("digest", to(t, dg, h.key(towns[3])))

	// Everyone else votes the Mafioso out.
	for _, n := range h.town() {
		if n != a && n != towns[2] {
			h.ok(h.player(n), engine.Thread, "VOTE "+mafia[0], vote(mafia[0]))
		}
	}
	for _, n := range mafia[1:] {
		h.ok(h.player(n), engine.Thread, "VOTE "+a, vote(a))
	}
	h.ok(h.player(mafia[0]), engine.Thread, "VOTE "+a, vote(a))
	// The close waits for mail the sending limit held back, until it has
	// gone out.
	h.now = h.s.ClosesAt()
	msgs = h.host(engine.Command{Verb: engine.CmdMailWait, Time: h.now.Add(2 * time.Hour)})
	g.add("deadline-wait", to(t, msgs, h.key(a)))
	h.now = h.now.Add(40 * time.Minute)
	msgs = h.host(engine.Command{Verb: engine.CmdMailFlowed})
	g.add("close-flowed", to(t, msgs, h.key(a)))

	// Night 2: no kill; the town gets an extra round.
	h.ok(h.player(mafia[1]), engine.Private, "NO KILL", verb(engine.CmdNoKill))
	h.ok(h.player(insp), engine.Private, "INSPECT "+mafia[2], at(engine.CmdInspect, mafia[2]))
	msgs = h.untilClose()
	g.add("dawn-extra", to(t, msgs, h.key(a)))

	// The mailbox's sending limit is near: the thread comes in digests
	// for everyone until it has room again.
	msgs = h.host(engine.Command{Verb: engine.CmdMailPlan, Duration: 3 * time.Hour})
	g.add("mailplan-on", to(t, msgs, h.key(a)))
	r = h.ok(h.player(a), engine.Private, "MAIL EACH", engine.Command{Verb: engine.CmdMail, Text: engine.MailEach})
	g.add("reply-mail-plan", r.reply)
	h.now = h.now.Add(3 * time.Hour)
	msgs = h.host(engine.Command{Verb: engine.CmdMailPlan})
	g.add("mailplan-off", to(t, msgs, h.key(a)))

	// The referee removes the last Mafiosi: the Town wins.
	h.ok(engine.Referee, engine.Private, "MODKILL "+mafia[1], at(engine.CmdModkill, mafia[1]))
	r = h.ok(engine.Referee, engine.Private, "MODKILL "+mafia[2], at(engine.CmdModkill, mafia[2]))
	g.add("end-town", to(t, r.msgs, h.key(a)))
	g.add("end-observer", toAddr(t, r.msgs, observerAddr))

	// Mail that no event causes: a refused message, a failed delivery.
	n, err := h.c.NotAccepted(compose.Notice{State: h.s, Dir: h.dir, To: addrFor(a), Reason: "auth-failed",
		Explanation: "the message failed DMARC at the receiving server", Cause: "<forged@players.example.net>",
		Subject: "Re: [dec26] Day 1", Received: h.now.Add(-time.Minute), Now: h.now})
	if err != nil {
		t.Fatalf("NotAccepted: %v", err)
	}
	h.record([]compose.Outgoing{n})
	g.add("refused", n)
	f, err := h.c.DeliveryFailure(compose.Failure{State: h.s, Dir: h.dir, Recipient: addrFor(b), Kind: "thread",
		MessageID: "<dec26.120.s2.t.vote@example.org>", Error: "550 5.1.1 <" + addrFor(b) + ">: mailbox unavailable",
		Attempts: 1, Now: h.now})
	if err != nil {
		t.Fatalf("DeliveryFailure: %v", err)
	}
	h.record([]compose.Outgoing{f})
	g.add("failure", f)
	unread, err := h.c.Mailbox(compose.MailboxNotice{State: h.s, Dir: h.dir, Variant: compose.MailboxUnread,
		Deadline: h.now.Add(-15 * time.Minute), ReadUntil: h.now.Add(-22 * time.Minute), Grace: 15 * time.Minute, Now: h.now})
	if err != nil {
		t.Fatalf("Mailbox: %v", err)
	}
	h.record([]compose.Outgoing{unread})
	g.add("mailbox-unread", unread)
	flood, err := h.c.Mailbox(compose.MailboxNotice{State: h.s, Dir: h.dir, Variant: compose.MailboxFlood,
		Messages: 5000, First: h.now.Add(-3 * time.Minute), Last: h.now.Add(-time.Minute), Now: h.now})
	if err != nil {
		t.Fatalf("Mailbox: %v", err)
	}
	h.record([]compose.Outgoing{flood})
	g.add("mailbox-flood", flood)
	hold, err := h.c.SendingHold(compose.Hold{State: h.s, Dir: h.dir, Since: h.now.Add(-10 * time.Minute),
		Reply: "550 5.4.5 Daily user sending limit exceeded.", Sent: 500, Learned: 500, Waiting: 212, Now: h.now})
	if err != nil {
		t.Fatalf("SendingHold: %v", err)
	}
	h.record([]compose.Outgoing{hold})
	g.add("sendinghold", hold)
	plan, err := h.c.SendingPlan(compose.Plan{State: h.s, Dir: h.dir, Now: h.now,
		Forecast: compose.RoundForecast{Round: "Day 3", Closes: h.now.Add(20 * time.Hour), Every: 3 * time.Hour,
			AsChosen: 612, Planned: 130, Room: 188},
		Sending: compose.SendingStatus{Used: 402, Limit: 500}})
	if err != nil {
		t.Fatalf("SendingPlan: %v", err)
	}
	h.record([]compose.Outgoing{plan})
	g.add("sendingplan", plan)
	revoked, err := h.c.AuthorisationRevoked(compose.Revoked{State: h.s, Dir: h.dir, Since: h.now.Add(-20 * time.Minute),
		Error: `oauth2: "invalid_grant" "Token has been expired or revoked."`, Reading: true, Sending: true, Now: h.now})
	if err != nil {
		t.Fatalf("AuthorisationRevoked: %v", err)
	}
	h.record([]compose.Outgoing{revoked})
	g.add("revoked", revoked)
	restored, err := h.c.Restored(compose.RestoreNotice{State: h.s, Dir: h.dir, Backup: "games-2026-12-02.db",
		Replayed: 31, Before: 214, After: 262, Listed: h.now.Add(-3 * time.Minute), Now: h.now,
		Again: []templates.Resent{{Subject: "[dec26] Day 3 is over", Recipients: 12}, {Subject: "[dec26] Night 3", Recipients: 3},
			{Subject: "[dec26] Digest", Recipients: 9}, {Subject: "[dec26] Digest", Recipients: 9},
			{Subject: "[dec26] Day 4 begins", Recipients: 12}, {Subject: "[dec26] Digest", Recipients: 9}, {Subject: "[dec26] Digest", Recipients: 8}}})
	if err != nil {
		t.Fatalf("Restored: %v", err)
	}
	h.record([]compose.Outgoing{restored})
	g.add("restored", restored)
	gone := []compose.Gone{{Arrived: h.now.Add(-26 * time.Hour), From: "Zoë <zoe@example.net>", Subject: "Re: [dec26] Day 3"}}
	for i := range 6 {
		gone = append(gone, compose.Gone{Arrived: h.now.Add(-time.Duration(25-i) * time.Hour), From: "bob@example.org", Subject: "Re: [dec26]"})
	}
	incomplete, err := h.c.Restored(compose.RestoreNotice{State: h.s, Dir: h.dir, Backup: "games-2026-12-02.db",
		Replayed: 12, Before: 214, After: 231, Listed: h.now.Add(-2 * time.Minute), Now: h.now,
		Missing: gone, Paused: true, Unaccounted: 3})
	if err != nil {
		t.Fatalf("Restored: %v", err)
	}
	h.record([]compose.Outgoing{incomplete})
	g.add("restored-missing", incomplete)
	return h, g
}

// threadEvents lists the digestible events logged after seq start, as the
// host's digest would gather them.
func (h *harness) threadEvents(start int64) []compose.Logged {
	var out []compose.Logged
	for _, l := range h.history {
		if l.Seq > start && compose.Digestible(l.Event) {
			out = append(out, l)
		}
	}
	return out
}

// playMafia150 plays a mafia150 game with digests, a Doctor, a Vigilante
// and an Inspector who learns exact roles, until the referee ends it.
func playMafia150(t *testing.T) (*harness, *goldens) { return playMafia150In(t, lang.Default) }

// playMafia150In is the mafia150 game in a language (see playClassicIn),
// played once for all the tests that read it.
func playMafia150In(t *testing.T, tag string) (*harness, *goldens) {
	return shared(t, "mafia150", tag, playMafia150Game)
}

// playMafia150Game plays the mafia150 game in a language.
func playMafia150Game(t *testing.T, tag string) (*harness, *goldens) {
	h := newHarness(t, inLanguage(engine.Mafia150(), tag), "m150", 5)
	h.c.SetLanguage(tag)
	if tag != lang.Default {
		h.sampled() // the English game cross-checks every batch
	}
	g := newGoldens(t, goldenDir("mafia150", tag))
	g.add("created", to(t, []compose.Outgoing{h.all[0].Outgoing}, "ref"))
	_, _, add := h.signup(names25)
	g.add("joined", to(t, add, "s25"))
	r0 := h.ok(engine.PlayerActor(25), engine.Private, "JOIN Zack Z", engine.Command{Verb: engine.CmdJoin, Name: "Zack Z"})
	g.add("reply-rename", r0.reply)
	h.ok(engine.PlayerActor(25), engine.Private, "JOIN "+names25[24], engine.Command{Verb: engine.CmdJoin, Name: names25[24]})
	r := h.ok(engine.Referee, engine.Private, "SETUP mafia150 digest_interval=2h",
		engine.Command{Verb: engine.CmdSetup, Text: "mafia150 digest_interval=2h"})
	g.add("setup", to(t, r.msgs, h.key("Zoë")))
	// An observer the host gave no token: they can read, not answer.
	r = h.ok(engine.Referee, engine.Private, "ADMIT quiet@watchers.example.net",
		engine.Command{Verb: engine.CmdAdmit, Address: "quiet@watchers.example.net"})
	g.add("observer", toAddr(t, r.msgs, "quiet@watchers.example.net"))

	r = h.ok(engine.Referee, engine.Private, "START", verb(engine.CmdStart))
	g.add("reply-start", r.reply)
	mafia := h.withRole(engine.Mafia)
	insp, doc, vig := h.withRole(engine.Inspector)[0], h.withRole(engine.Doctor)[0], h.withRole(engine.Vigilante)[0]
	towns := h.withRole(engine.Townsperson)
	g.add("role-mafia", toKind(t, r.msgs, h.key(mafia[0]), compose.KindRole))
	g.add("mafialist", toKind(t, r.msgs, h.key(mafia[0]), compose.KindMafia))
	g.add("role-inspector", toKind(t, r.msgs, h.key(insp), compose.KindRole))
	g.add("role-doctor", toKind(t, r.msgs, h.key(doc), compose.KindRole))
	g.add("role-vigilante", toKind(t, r.msgs, h.key(vig), compose.KindRole))
	g.add("role-townsperson", toKind(t, r.msgs, h.key(towns[0]), compose.KindRole))
	g.add("day1", toKind(t, r.msgs, h.key("Zoë"), compose.KindThread))

	r = h.refused(h.player(towns[0]), engine.Thread, "VOTE Ma", vote("Ma"))
	g.add("reply-refused-ambiguous", r.reply)

	// The Vigilante shoots by day: announced at once as the Vigilante's;
	// the vote on the dead is cleared, and its voter told (D14).
	h.ok(h.player(towns[2]), engine.Thread, "VOTE "+mafia[0], vote(mafia[0]))
	r = h.ok(h.player(vig), engine.Private, "SHOOT "+mafia[0], at(engine.CmdShoot, mafia[0]))
	g.add("vote-cleared", toKind(t, r.msgs, h.key(towns[2]), compose.KindPrivate))
	g.add("death-dayshot", to(t, r.msgs, h.key(towns[0])))
	g.add("action-dayshot-referee", toKind(t, r.msgs, "ref", compose.KindReferee))
	g.add("reply-dayshot", r.reply)

	// Day 1: a tie, in a game that gathers the thread into digests.
	a, b := towns[0], towns[1]
	start, since := h.seq, h.now
	// The tied pair vote for each other; the others split evenly.
	ballots := [][2]string{{a, b}, {b, a}}
	var others []string
	for _, p := range h.s.Players {
		if p.Alive && p.Name != a && p.Name != b {
			others = append(others, p.Name)
		}
	}
	for i, n := range others {
		whom := a
		if i >= len(others)/2 {
			whom = b
		}
		ballots = append(ballots, [2]string{n, whom})
	}
	h.now = h.now.Add(10 * time.Minute)
	h.ok(h.player(a), engine.Thread, "", post("Good morning, town. Our Vigilante is busy already."))
	for _, bl := range ballots {
		h.now = h.now.Add(3 * time.Minute)
		r = h.ok(h.player(bl[0]), engine.Thread, "VOTE "+bl[1], vote(bl[1]))
		for _, m := range r.msgs {
			if m.Kind == compose.KindThread {
				t.Fatalf("a vote in a digest game sent thread mail at once to %s", m.Recipient)
			}
		}
	}
	h.ok(h.player(b), engine.Thread, "", post("A tie? Then we talk it out."))
	h.now = since.Add(2 * time.Hour)
	dg, err := h.c.Digest(compose.Digest{State: h.s, Dir: h.dir, Events: h.threadEvents(start), Since: since, Now: h.now})
	if err != nil {
		t.Fatalf("Digest: %v", err)
	}
	h.record(dg)
	g.add("digest", to(t, dg, h.key(mafia[2])))
	g.add("digest-observer", toAddr(t, dg, "quiet@watchers.example.net"))

	msgs := h.untilClose()
	g.add("close-runoff", to(t, msgs, h.key(a)))
	msgs = h.untilClose()
	g.add("deadline-tie", to(t, msgs, h.key(a)))
	msgs = h.untilClose()
	g.add("close-forfeited", to(t, msgs, h.key(a)))

	// Night 1: a protected whack, a Vigilante's shot, a late Inspector.
	r = h.ok(h.player(mafia[1]), engine.MafiaCh, "", post("I say we go for "+towns[2]+"."))
	g.add("mafia", to(t, r.msgs, h.key(mafia[3])))
	h.ok(h.player(mafia[2]), engine.MafiaCh, "KILL "+towns[2], at(engine.CmdKill, towns[2]))
	r = h.ok(h.player(doc), engine.Private, "PROTECT "+towns[2], at(engine.CmdProtect, towns[2]))
	g.add("reply-protect", r.reply)
	r = h.ok(h.player(vig), engine.Private, "SHOOT "+mafia[1], at(engine.CmdShoot, mafia[1]))
	g.add("reply-shoot", r.reply)
	// A night action sent to the host's bare address.
	md, err := h.c.Misdirected(compose.Misdirected{State: h.s, Dir: h.dir, Slot: h.slot(insp), Channel: engine.Private,
		Lines: []string{"INSPECT " + mafia[0]}, Cause: "<tb.7@players.example.net>",
		Subject: "Re: [m150] Private: " + insp, Received: h.now.Add(-time.Minute), Now: h.now})
	if err != nil {
		t.Fatal(err)
	}
	h.record([]compose.Outgoing{md})
	g.add("misdirected", md)
	msgs, _ = h.tick(h.s.Night.End.Add(-6 * time.Hour))
	g.add("reminder-night", to(t, msgs, h.key(insp)))
	r = h.ok(engine.Referee, engine.Private, "STATUS", verb(engine.CmdStatus))
	g.add("reply-status-referee", r.reply)
	h.now = h.now.Add(30 * time.Minute)
	h.ok(h.player(insp), engine.Private, "INSPECT "+doc, at(engine.CmdInspect, doc))
	msgs = h.untilClose()
	g.add("dawn", to(t, msgs, h.key(a)))
	g.add("inspection", toKind(t, msgs, h.key(insp), compose.KindPrivate))

	// Day 2: requests, the dead, a substitute, the referee at work; no
	// one votes.
	r = h.ok(h.player(doc), engine.Private, "STATUS", verb(engine.CmdStatus))
	g.add("reply-status", r.reply)
	r = h.ok(h.player("Zoë"), engine.Private, "TALLY", verb(engine.CmdTally))
	g.add("tally", to(t, h.single(r.events), h.key("Zoë")))
	r = h.ok(h.player(vig), engine.Private, "HELP", verb(engine.CmdHelp))
	g.add("reply-help", r.reply)
	r = h.ok(h.player(vig), engine.Thread, "HELP RULES", engine.Command{Verb: engine.CmdHelp, Text: engine.HelpRules})
	g.add("reply-help-rules", r.reply)
	r = h.ok(h.player(vig), engine.Private, "ZONE", engine.Command{Verb: engine.CmdZone})
	g.add("reply-zone-shown", r.reply)
	r = h.ok(h.player(vig), engine.Private, "MAIL", engine.Command{Verb: engine.CmdMail})
	g.add("reply-mail-shown", r.reply)
	// The Vigilante reads another language for a while: the answer, and
	// everything after it, is in that one; then back to the game's.
	other := "de"
	if h.s.GameLanguage() == "de" {
		other = "fr"
	}
	r = h.ok(h.player(vig), engine.Private, "LANGUAGE "+other, engine.Command{Verb: engine.CmdLanguage, Text: other})
	g.add("reply-language-set", r.reply)
	h.ok(h.player(vig), engine.Private, "LANGUAGE "+h.s.GameLanguage(), engine.Command{Verb: engine.CmdLanguage, Text: h.s.GameLanguage()})
	r = h.ok(h.player(vig), engine.Private, "CALENDAR", engine.Command{Verb: engine.CmdCalendar})
	g.add("reply-calendar-shown", r.reply)
	// The Vigilante leaves the digests for each post, and comes back.
	r = h.ok(h.player(vig), engine.Private, "MAIL EACH", engine.Command{Verb: engine.CmdMail, Text: engine.MailEach})
	g.add("reply-mail-each", r.reply)
	h.ok(h.player(vig), engine.Private, "MAIL DIGEST", engine.Command{Verb: engine.CmdMail, Text: engine.MailDigest})
	r = h.ok(h.player(mafia[0]), engine.Thread, "", post("Frank here. I was framed!"))
	g.add("held-referee", to(t, r.msgs, "ref"))
	h.ok(engine.Referee, engine.Private, "REJECT 1", engine.Command{Verb: engine.CmdReject, Held: 1})
	r = h.ok(h.player(towns[6]), engine.Private, "", post("Is it fine if I vote late today? Travelling."))
	g.add("note", to(t, r.msgs, "ref"))
	r = h.ok(h.player("Zoë"), engine.Thread, "EXTEND", verb(engine.CmdExtend))
	g.add("reply-extend", r.reply)
	r = h.ok(engine.Referee, engine.Private, "DENY", verb(engine.CmdDeny))
	g.add("extension-denied", to(t, r.msgs, h.key("Zoë")))
	r = h.ok(engine.Referee, engine.Private, "ANNOUNCE", engine.Command{Verb: engine.CmdAnnounce,
		Text: "Zoë asked for more time; I denied it, the day is long enough."})
	g.add("announce", to(t, r.msgs, h.key(a)))
	r = h.ok(engine.Referee, engine.Private, "PAUSE", verb(engine.CmdPause))
	g.add("pause", to(t, r.msgs, h.key(a)))
	h.now = h.now.Add(90 * time.Minute)
	h.ok(engine.Referee, engine.Private, "RESUME", verb(engine.CmdResume))
	subAddr := "xavier@subs.example.net"
	r = h.ok(engine.Referee, engine.Private, "REPLACE "+towns[7]+" WITH "+subAddr,
		engine.Command{Verb: engine.CmdReplace, Target: towns[7], Address: subAddr, Token: tokenFor("xavier substitute")})
	g.add("replaced", toAddr(t, r.msgs, addrFor(towns[7])))
	g.add("substitute", toKind(t, r.msgs, h.key(a), compose.KindThread))
	msgs = h.untilClose()
	g.add("close-novotes", to(t, msgs, h.key(a)))

	// Night 2: the Mafia get the Doctor; the Vigilante passes.
	h.ok(h.player(mafia[2]), engine.Private, "KILL "+doc, at(engine.CmdKill, doc))
	h.ok(h.player(doc), engine.Private, "PROTECT "+towns[3], at(engine.CmdProtect, towns[3]))
	r = h.ok(h.player(vig), engine.Private, "PASS", verb(engine.CmdPass))
	g.add("reply-pass", r.reply)
	h.ok(h.player(insp), engine.Private, "INSPECT "+mafia[2], at(engine.CmdInspect, mafia[2]))
	msgs = h.untilClose()
	g.add("dawn-doctor", to(t, msgs, h.key(doc)))

	// Day 3: the mailbox's sending limit is near, so the thread comes in
	// longer digests; one player misses a second vote: the round is void,
	// once the mail the limit held back has gone out.
	msgs = h.host(engine.Command{Verb: engine.CmdMailPlan, Duration: 4 * time.Hour})
	g.add("mailplan-on", to(t, msgs, h.key(a)))
	z := towns[5]
	for _, p := range h.s.Players {
		if p.Alive && p.Name != z {
			h.ok(h.player(p.Name), engine.Thread, "VOTE "+towns[4], vote(towns[4]))
		}
	}
	h.now = h.s.ClosesAt()
	msgs = h.host(engine.Command{Verb: engine.CmdMailWait, Time: h.now.Add(2 * time.Hour)})
	g.add("deadline-wait", to(t, msgs, h.key(a)))
	h.now = h.now.Add(25 * time.Minute)
	msgs = h.host(engine.Command{Verb: engine.CmdMailFlowed})
	g.add("close-void", to(t, msgs, h.key(a)))
	g.add("close-void-removed", to(t, msgs, h.key(z)))
	g.add("suspended", toKind(t, msgs, "ref", compose.KindReferee))

	msgs = h.host(engine.Command{Verb: engine.CmdMailPlan})
	g.add("mailplan-off", to(t, msgs, h.key(a)))
	r = h.ok(engine.Referee, engine.Private, "END", verb(engine.CmdEnd))
	g.add("end-referee", to(t, r.msgs, h.key(a)))

	n, err := h.c.NotAccepted(compose.Notice{State: h.s, Dir: h.dir, To: addrFor("Zoë"), Reason: "sender-mismatch",
		Explanation: "it came from zoe@elsewhere.example.com, not from the address Zoë signed up with",
		Cause:       "<x1@elsewhere.example.com>", Subject: "VOTE Alice", Received: h.now.Add(-time.Minute), Now: h.now})
	if err != nil {
		t.Fatalf("NotAccepted: %v", err)
	}
	h.record([]compose.Outgoing{n})
	g.add("refused", n)
	f, err := h.c.DeliveryFailure(compose.Failure{State: h.s, Dir: h.dir, Recipient: addrFor("Zoë"), Kind: "role",
		MessageID: "<m150.40.s24.p.role@example.org>", Error: "554 5.7.1 Message rejected as spam",
		Attempts: 3, Now: h.now})
	if err != nil {
		t.Fatalf("DeliveryFailure: %v", err)
	}
	h.record([]compose.Outgoing{f})
	g.add("failure", f)
	unread, err := h.c.Mailbox(compose.MailboxNotice{State: h.s, Dir: h.dir, Variant: compose.MailboxUnread,
		Deadline: h.now.Add(-15 * time.Minute), ReadUntil: h.now.Add(-22 * time.Minute), Grace: 15 * time.Minute, Now: h.now})
	if err != nil {
		t.Fatalf("Mailbox: %v", err)
	}
	h.record([]compose.Outgoing{unread})
	g.add("mailbox-unread", unread)
	flood, err := h.c.Mailbox(compose.MailboxNotice{State: h.s, Dir: h.dir, Variant: compose.MailboxFlood,
		Messages: 5000, First: h.now.Add(-3 * time.Minute), Last: h.now.Add(-time.Minute), Now: h.now})
	if err != nil {
		t.Fatalf("Mailbox: %v", err)
	}
	h.record([]compose.Outgoing{flood})
	g.add("mailbox-flood", flood)
	hold, err := h.c.SendingHold(compose.Hold{State: h.s, Dir: h.dir, Since: h.now.Add(-time.Hour),
		Reply: "550 5.1.90 Your message can't be sent because you've reached your daily limit for message recipients",
		Sent:  300, Learned: 300, Waiting: 640, Now: h.now})
	if err != nil {
		t.Fatalf("SendingHold: %v", err)
	}
	h.record([]compose.Outgoing{hold})
	g.add("sendinghold", hold)
	plan, err := h.c.SendingPlan(compose.Plan{State: h.s, Dir: h.dir, Now: h.now,
		Forecast: compose.RoundForecast{Round: "Night 3", Closes: h.now.Add(6 * time.Hour), AsChosen: 90, Planned: 90, Room: 210},
		Sending:  compose.SendingStatus{Used: 75, Limit: 300}})
	if err != nil {
		t.Fatalf("SendingPlan: %v", err)
	}
	h.record([]compose.Outgoing{plan})
	g.add("sendingplan-ended", plan)
	revoked, err := h.c.AuthorisationRevoked(compose.Revoked{State: h.s, Dir: h.dir, Since: h.now.Add(-20 * time.Minute),
		Error: `oauth2: "invalid_grant" "Token has been expired or revoked."`, Reading: true, Sending: true, Now: h.now})
	if err != nil {
		t.Fatalf("AuthorisationRevoked: %v", err)
	}
	h.record([]compose.Outgoing{revoked})
	g.add("revoked", revoked)
	restored, err := h.c.Restored(compose.RestoreNotice{State: h.s, Dir: h.dir, Replayed: 410, After: 388,
		Listed: h.now.Add(-time.Minute), Now: h.now})
	if err != nil {
		t.Fatalf("Restored: %v", err)
	}
	h.record([]compose.Outgoing{restored})
	g.add("restored-nothing-again", restored)
	return h, g
}

// hostVoice is a post made of lines copied from the host's own mail: the
// referee's headline, a death, an official tally, a ruling.
const hostVoice = `Announcement from the referee

Night 1 is over: Carol was killed by the Mafia

Official tally, Day 1
Votes on players:
- Alice: 9 (Bob, Carol, Dave, Erin, Frank, Grace, Heidi, Ivan, Judy)

The referee writes
The deadline moved: votes on Carol no longer count.`

// inLanguage is a setup whose game is in the language of tag.
func inLanguage(st engine.Setup, tag string) engine.Setup {
	if tag != lang.Default {
		st.Language = tag
	}
	return st
}

// goldenDir is the folder of a scenario's golden files in a language.
func goldenDir(scenario, tag string) string {
	if tag == lang.Default {
		return scenario
	}
	return scenario + "-" + tag
}
