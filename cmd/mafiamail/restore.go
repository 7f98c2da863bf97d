package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/internal/cli"
	"github.com/mafiamail/mafiamail/service"
)

// cmdRestore brings back a host that lost its database: from a backup, or
// from none, replaying the mailbox (docs/hosting.md, "Backing up and
// restoring").
func cmdRestore(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.Flags("restore", stderr)
	cfgPath := fs.String("config", "mafiamail.toml", "configuration file")
	if err := parseFlags(fs, args); err != nil {
		return cli.Usage(err)
	}
	if fs.NArg() > 1 {
		return cli.Usagef("restore [--config FILE] [BACKUP]")
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	log := cli.NewLogger(stderr, cfg.Log.Format, cfg.Log.Level)
	rep, err := service.Restore(ctx, cfg, service.RestoreConfig{Backup: fs.Arg(0), Log: log})
	if err != nil {
		return err
	}
	printRestore(stdout, *cfgPath, cfg, rep)
	return nil
}

// printRestore says what a restore did, game by game.
func printRestore(w io.Writer, cfgPath string, cfg *config.Config, rep service.RestoreReport) {
	from := "no backup"
	if rep.FromBackup != "" {
		from = rep.FromBackup
	}
	fmt.Fprintf(w, "Restored %s from %s: the mailbox holds %d %s; %d %s in the backup, %d replayed.\n",
		cfg.Database, from, rep.Messages, plural(rep.Messages, "message", "messages"), rep.Known, plural(rep.Known, "was", "were"), rep.Replayed)
	for _, g := range rep.Games {
		fmt.Fprintf(w, "  %-20s %d %s applied again; %d events in the backup, %d now\n", g.Game, g.Replayed, plural(g.Replayed, "message", "messages"), g.Before, g.After)
	}
	for _, g := range rep.Games {
		if g.Missing == 0 {
			continue
		}
		fmt.Fprintf(w, "NOT PROVEN COMPLETE: game %s: %d %s the backup had read %s no longer in the mailbox (deleted); mail after the backup may be gone too.",
			g.Game, g.Missing, plural(g.Missing, "message", "messages"), plural(g.Missing, "is", "are"))
		if g.Paused {
			fmt.Fprint(w, " The game is paused until its referee sends RESUME.")
		}
		fmt.Fprintln(w)
	}
	for _, m := range rep.Missing {
		game := m.Game
		if game == "" {
			game = "(no game)"
		}
		fmt.Fprintf(w, "  missing: %-20s %s UID %d, arrived %s, from %s: %q %s\n", game, m.Mailbox, m.UID,
			m.Arrived.UTC().Format(time.RFC3339), m.From, m.Subject, m.MessageID)
	}
	for _, g := range rep.Gaps {
		fmt.Fprintf(w, "WARNING: %s no longer holds %d %s its server numbered (UIDs %d to %d) that no backup accounts for; which games %s for cannot be told. "+
			"On a server that numbers messages one by one (Dovecot) %s deleted; Gmail skips numbers.\n",
			g.Folder, g.Count, plural(g.Count, "message", "messages"), g.First, g.Last, plural(g.Count, "it was", "they were"), plural(g.Count, "it was", "they were"))
	}
	for _, f := range rep.Failed {
		fmt.Fprintf(w, "  not applied: %s\n", f)
	}
	switch {
	case rep.SentFolder == "":
		fmt.Fprintln(w, "No folder of sent mail was found (set [imap] sent_folder): the host cannot tell what the lost database had sent.")
	default:
		fmt.Fprintf(w, "%d %s not recorded as sent %s found in %s and %s recorded as sent now.\n", rep.FoundSent,
			plural(rep.FoundSent, "message", "messages"), plural(rep.FoundSent, "was", "were"), rep.SentFolder, plural(rep.FoundSent, "is", "are"))
	}
	if len(rep.SentAgain) > 0 {
		n := len(rep.SentAgain)
		fmt.Fprintf(w, "%d %s when serve starts, sent again if the lost host had sent %s (same Message-ID, which mail clients use to hide a second copy):\n",
			n, plural(n, "message goes out", "messages go out"), plural(n, "it", "them"))
		for _, m := range rep.SentAgain {
			fmt.Fprintf(w, "  %-20s %q to %s %s\n", m.Game, m.Subject, strings.Join(m.To, ", "), m.MessageID)
		}
	}
	if len(rep.Notices) > 0 {
		fmt.Fprintf(w, "The referees are told the same, one mail a game, which goes out when serve starts (%d: %s).\n",
			len(rep.Notices), strings.Join(rep.Notices, ", "))
	}
	fmt.Fprintf(w, "Next: mafiamail serve --config %s\n", cfgPath)
}

// plural is one where n is 1 and many otherwise: the words of a count.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
