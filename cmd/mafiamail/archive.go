package main

import (
	"context"
	"fmt"
	"io"

	"github.com/mafiamail/mafiamail/archive"
	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/store"
)

// archiveGame writes a game's archive, a static site, into dir: what the
// town thread showed while the game runs, the whole story once it is over.
func archiveGame(ctx context.Context, st *store.Store, id, dir string, w io.Writer) error {
	_, stored, err := loadGame(ctx, st, id)
	if err != nil {
		return err
	}
	log := make([]engine.Event, 0, len(stored))
	for _, se := range stored {
		e, err := engine.UnmarshalEvent(se.Payload)
		if err != nil {
			return fmt.Errorf("archive %s: event %d: %w", id, se.Seq, err)
		}
		log = append(log, e)
	}
	n, err := writeArchive(log, dir)
	if err != nil {
		return fmt.Errorf("archive %s: %w", id, err)
	}
	fmt.Fprintf(w, "wrote the archive of %s (%d files) to %s: open %s/index.html\n", id, n, dir, dir)
	return nil
}

// writeArchive builds a game's archive from its log and writes it.
func writeArchive(log []engine.Event, dir string) (int, error) {
	site, err := archive.Build(log)
	if err != nil {
		return 0, err
	}
	if err := archive.Write(dir, site); err != nil {
		return 0, err
	}
	return len(site), nil
}
