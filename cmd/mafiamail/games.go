package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/internal/cli"
	"github.com/mafiamail/mafiamail/mail/sender"
	"github.com/mafiamail/mafiamail/service"
	"github.com/mafiamail/mafiamail/service/sendstore"
	"github.com/mafiamail/mafiamail/store"
)

const gamesUsage = `Usage:
  mafiamail games list    [--db FILE]
  mafiamail games show    [--db FILE] GAME
  mafiamail games export  [--db FILE] GAME --out DIR
  mafiamail games archive [--db FILE] GAME --out DIR
  mafiamail games backup  [--db FILE] DEST
The database is mafiamail.db unless --db names another. Each command only
reads it (backup copies it whole), so it may run while serve does.
`

// cmdGames looks after games on a database, read-only, so it works while
// serve runs; backup too, through VACUUM INTO.
func cmdGames(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return cli.Usagef("games list|show|export|archive|backup")
	}
	switch args[0] {
	case "list", "show", "export", "archive", "backup":
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, gamesUsage)
		return nil
	default:
		// Before the database is opened: a mistyped command is told as such.
		return cli.Usagef("unknown games command %q: list, show, export, archive or backup", args[0])
	}
	fs := cli.Flags("games "+args[0], stderr)
	db := fs.String("db", "mafiamail.db", "the host's database")
	out := fs.String("out", "", "export, archive: the folder to write to")
	if err := parseFlags(fs, args[1:]); err != nil {
		return cli.Usage(err)
	}
	st, err := openDatabase(ctx, *db)
	if err != nil {
		return err
	}
	defer st.Close()
	switch args[0] {
	case "list":
		return listGames(ctx, st, stdout)
	case "show":
		if fs.NArg() != 1 {
			return cli.Usagef("games show GAME")
		}
		if err := showGame(ctx, st, fs.Arg(0), stdout); err != nil {
			return err
		}
		return showSending(ctx, st, *db, stdout)
	case "export":
		if fs.NArg() != 1 || *out == "" {
			return cli.Usagef("games export GAME --out DIR")
		}
		return exportGame(ctx, st, fs.Arg(0), *out, stdout)
	case "archive":
		if fs.NArg() != 1 || *out == "" {
			return cli.Usagef("games archive GAME --out DIR")
		}
		return archiveGame(ctx, st, fs.Arg(0), *out, stdout)
	case "backup":
		if fs.NArg() != 1 {
			return cli.Usagef("games backup DEST")
		}
		if err := st.Backup(ctx, fs.Arg(0)); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "backed up %s to %s\n", *db, fs.Arg(0))
		return nil
	}
	return cli.Usagef("unknown games command %q", args[0])
}

// openDatabase opens the host's database at path for reading, as the games
// and parse commands do while serve may run. A missing database is said to
// be missing, and none is created.
func openDatabase(ctx context.Context, path string) (*store.Store, error) {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("no database at %s: give the host's database with --db, or start `mafiamail serve` first to create it", path)
	case err != nil:
		return nil, err
	case info.IsDir():
		return nil, fmt.Errorf("%s is a folder, not a database: give the host's database with --db", path)
	}
	return store.OpenReadOnly(ctx, path, store.Config{})
}

// loadGame rebuilds one game's state from its log.
func loadGame(ctx context.Context, st *store.Store, id string) (*engine.State, []store.Event, error) {
	evs, err := st.Events(ctx, id, 0)
	if err != nil {
		return nil, nil, err
	}
	if len(evs) == 0 {
		return nil, nil, fmt.Errorf("no game %q", id)
	}
	s := &engine.State{}
	for _, se := range evs {
		e, err := engine.UnmarshalEvent(se.Payload)
		if err != nil {
			return nil, nil, err
		}
		if err := s.Fold(e); err != nil {
			return nil, nil, fmt.Errorf("event %d: %w", se.Seq, err)
		}
	}
	return s, evs, nil
}

func listGames(ctx context.Context, st *store.Store, w io.Writer) error {
	games, err := st.Games(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GAME\tPHASE\tDAY\tALIVE\tNEXT DEADLINE")
	for _, g := range games {
		s, _, err := loadGame(ctx, st, g.ID)
		if err != nil {
			return err
		}
		dl := "-"
		if t, ok := engine.NextDeadline(s); ok {
			dl = t.In(s.GameZone()).Format("Mon 2 Jan 2006 15:04 MST")
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d/%d\t%s\n", g.ID, phaseText(s), s.Day, len(s.Living()), len(s.Players), dl)
	}
	return tw.Flush()
}

func phaseText(s *engine.State) string {
	p := string(s.Phase)
	if s.Phase == engine.DayPhase {
		p += " (" + string(s.Round) + ")"
	}
	if s.Paused {
		p += ", paused"
	}
	if s.Phase == engine.EndedPhase && s.Winner != "" {
		p += ": " + string(s.Winner) + " won"
	}
	return p
}

func showGame(ctx context.Context, st *store.Store, id string, w io.Writer) error {
	s, evs, err := loadGame(ctx, st, id)
	if err != nil {
		return err
	}
	zone := s.GameZone()
	fmtT := func(t time.Time) string { return t.In(zone).Format("Mon 2 Jan 2006 15:04 MST") }
	fmt.Fprintf(w, "Game %s: %s, day %d, %s\n", s.Game, phaseText(s), s.Day, s.Setup.Summary())
	fmt.Fprintf(w, "Referee: %s\nEvents: %d\n", s.Referee, len(evs))
	if t, ok := engine.NextDeadline(s); ok {
		fmt.Fprintf(w, "Next deadline: %s\n", fmtT(t))
	}
	fmt.Fprintln(w, "\nPlayers:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, p := range s.Players {
		state := "alive"
		if !p.Alive {
			state = "dead (" + string(p.Cause) + ")"
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\tmissed %d\n", p.Slot, p.Name, p.Role, state, p.Missed)
	}
	tw.Flush()
	if s.Phase == engine.DayPhase {
		t := s.Tally(time.Now())
		fmt.Fprintln(w, "\nTally:")
		for _, c := range t.Counts {
			fmt.Fprintf(w, "  %s (%d): %s\n", c.Name, c.Votes, strings.Join(c.Voters, ", "))
		}
		if len(t.NotVoted) > 0 {
			fmt.Fprintf(w, "  not voted: %s\n", strings.Join(t.NotVoted, ", "))
		}
	}
	if err := showPlan(ctx, st, s, fmtT, w); err != nil {
		return err
	}
	held, err := st.HeldPosts(ctx, id, store.Held)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nHeld posts: %d\n", len(held))
	for _, h := range held {
		fmt.Fprintf(w, "  #%d (%s): %.60q\n", h.Number, h.Reason, h.Text)
	}
	bad, err := st.InboundByOutcome(ctx, store.OutcomeError, 1000)
	if err != nil {
		return err
	}
	for _, in := range bad {
		if in.Game == id {
			fmt.Fprintf(w, "\nMessage that could not be processed: %s (inbox %d): %s\n", in.MessageID, in.ID, in.Reason)
		}
	}
	msgs, err := st.OutMessages(ctx, "")
	if err != nil {
		return err
	}
	counts := map[store.OutStatus]int{}
	for _, m := range msgs {
		if m.Game == id {
			counts[m.Status]++
		}
	}
	fmt.Fprintf(w, "\nOutbox: %d sent, %d pending, %d sending, %d failed\n",
		counts[store.OutSent], counts[store.OutPending], counts[store.OutSending], counts[store.OutFailed])
	for _, m := range msgs {
		if m.Game == id && m.Status == store.OutFailed {
			fmt.Fprintf(w, "  failed: %s to %s: %s\n", m.Kind, strings.Join(m.To, ", "), m.LastError)
		}
	}
	return nil
}

// exportGame writes every mail of a game as an mbox and its event log as
// JSON lines.
func exportGame(ctx context.Context, st *store.Store, id, dir string, w io.Writer) error {
	_, evs, err := loadGame(ctx, st, id)
	if err != nil {
		return err
	}
	// An export holds every token and role: for the host's user alone.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := writeEvents(filepath.Join(dir, id+"-events.jsonl"), evs); err != nil {
		return err
	}
	msgs, err := st.OutMessages(ctx, "")
	if err != nil {
		return err
	}
	var mbox bytes.Buffer
	n := 0
	for _, m := range msgs {
		if m.Game != id {
			continue
		}
		writeMbox(&mbox, m.From, m.CreatedAt, m.Raw)
		n++
	}
	if err := os.WriteFile(filepath.Join(dir, id+".mbox"), mbox.Bytes(), 0o600); err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %d events and %d messages to %s\n", len(evs), n, dir)
	return nil
}

// writeEvents writes a game's event log to path as JSON lines, one event
// a line with its number and its cause.
func writeEvents(path string, evs []store.Event) error {
	var log bytes.Buffer
	for _, e := range evs {
		line, err := json.Marshal(struct {
			Seq     int64           `json:"seq"`
			Cause   string          `json:"cause"`
			Payload json.RawMessage `json:"event"`
		}{e.Seq, e.Cause, e.Payload})
		if err != nil {
			return err
		}
		log.Write(line)
		log.WriteByte('\n')
	}
	return os.WriteFile(path, log.Bytes(), 0o600)
}

// writeMbox appends one message in mboxrd form: a From_ line, and every
// line that starts with ">*From " quoted with one more ">".
func writeMbox(w *bytes.Buffer, from string, at time.Time, raw []byte) {
	if from == "" {
		from = "MAILER-DAEMON"
	}
	fmt.Fprintf(w, "From %s %s\n", from, at.UTC().Format(time.ANSIC))
	raw = bytes.ReplaceAll(raw, []byte("\r\n"), []byte("\n"))
	for _, line := range bytes.SplitAfter(raw, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if bytes.HasPrefix(bytes.TrimLeft(line, ">"), []byte("From ")) {
			w.WriteByte('>')
		}
		w.Write(line)
	}
	if !bytes.HasSuffix(raw, []byte("\n")) {
		w.WriteByte('\n')
	}
	w.WriteByte('\n')
}

// showSending shows the host's sending budget: what was sent in the last
// day of the host's clock, the limit learned or the hold under way, what
// waits in the outbox by kind, and when it will have gone out.
func showSending(ctx context.Context, st *store.Store, db string, w io.Writer) error {
	// The outbox keeps real times; with a fast game clock the host's day
	// is shorter.
	fmtT := func(t time.Time) string { return t.UTC().Format("Mon 2 Jan 2006 15:04:05 MST") }
	day := 24 * time.Hour
	if c, err := service.SavedClock(db); err == nil && c.Speed > 1 {
		day = time.Duration(float64(day) / c.Speed)
	}
	now := time.Now()
	sent, err := st.SentSince(ctx, now.Add(-day))
	if err != nil {
		return err
	}
	used := 0
	for _, x := range sent {
		used += x.Recipients
	}
	lim, err := st.SendingLimit(ctx)
	if err != nil {
		return err
	}
	waiting, err := st.Waiting(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nSending (every game of this host): %d recipients in the last 24 hours", used)
	if lim.Learned > 0 {
		fmt.Fprintf(w, " of the %d a day learned from the provider's refusal on %s (the configuration's [smtp] recipients_per_day, if set, comes first)", lim.Learned, fmtT(lim.LearnedAt))
	}
	fmt.Fprintln(w)
	if !lim.HeldSince.IsZero() {
		fmt.Fprintf(w, "  held since %s: the provider refuses mail for its sending limit (%s); the outbox waits, nothing is lost\n", fmtT(lim.HeldSince), lim.HeldReply)
	}
	kinds := make([]string, 0, len(waiting))
	total := 0
	for k, n := range waiting {
		kinds = append(kinds, k)
		total += n
	}
	sort.Strings(kinds)
	if total == 0 {
		fmt.Fprintf(w, "  nothing waits in the outbox\n")
		return nil
	}
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s %d", k, waiting[k])
	}
	fmt.Fprintf(w, "  waiting: %d (%s)\n", total, strings.Join(parts, ", "))
	if lim.Learned > 0 {
		if t := sender.Forecast(sendstore.Sent(sent), total, lim.Learned, day, now); !t.IsZero() {
			fmt.Fprintf(w, "  at %d a day, what waits will have gone out by %s\n", lim.Learned, fmtT(t))
		}
	}
	return nil
}

// showPlan shows the host's latest forecast for the game's round against
// the sending budget, the plan it chose, and a close that waits for held
// mail.
func showPlan(ctx context.Context, st *store.Store, s *engine.State, fmtT func(time.Time) string, w io.Writer) error {
	if s.MailWaiting() {
		fmt.Fprintf(w, "\nThe close waits for the town's mail the sending limit holds back: it comes once that mail has gone out, %s at the latest.\n", fmtT(s.MailWaitUntil))
	}
	p, ok, err := st.Plan(ctx, s.Game)
	if err != nil || !ok || (s.Phase != engine.DayPhase && s.Phase != engine.NightPhase) {
		return err
	}
	fmt.Fprintf(w, "\nForecast for the rest of %s (closes %s), as of %s:\n", p.Round, fmtT(p.ClosesAt), p.PlannedAt.UTC().Format("Mon 2 Jan 2006 15:04:05 MST"))
	fmt.Fprintf(w, "  about %d recipients as the players chose; ", p.AsChosen)
	if p.Room > 0 {
		fmt.Fprintf(w, "%d left for this game of the %d a day the mailbox may send\n", p.Room, p.Limit)
	} else {
		fmt.Fprintf(w, "no room left for now of the %d a day the mailbox may send\n", p.Limit)
	}
	if p.Interval > 0 {
		fmt.Fprintf(w, "  plan: the thread in digests every %s for everyone (about %d recipients)\n", p.Interval, p.Planned)
	} else {
		fmt.Fprintf(w, "  plan: none needed; the thread goes as the setup and each player chose\n")
	}
	return nil
}
