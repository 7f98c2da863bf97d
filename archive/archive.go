// Package archive lays a game out as a static site: an index with the
// players, every round's thread in order with its tallies, the story of
// the votes with its picture, and the draw with its proof. The pages are
// plain HTML with inline styles, open from disk, and load nothing: no
// script, no style sheet, no font from elsewhere.
//
// A site is a pure function of the game's log. While the game runs it
// holds only what the town thread showed: public events alone, no role,
// no private or mafia-list mail, no night action; the roles and the nights
// come with the end, as in the end mail.
package archive

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/mafiamail/mafiamail/engine"
)

// Site is a game's archive: file names (relative, flat) and contents.
type Site map[string][]byte

// Build lays out the archive of a game from its whole log, in order.
func Build(log []engine.Event) (Site, error) {
	g, err := read(log)
	if err != nil {
		return nil, err
	}
	site := Site{}
	if err := g.pages(site); err != nil {
		return nil, err
	}
	return site, nil
}

// Write writes a site into dir, creating it. The files are readable by the
// user alone, like the host's other exports: an archive before the end is
// safe to share, but whether to share it is the referee's choice.
func Write(dir string, site Site) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	names := make([]string, 0, len(site))
	for n := range site {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), site[n], 0o600); err != nil {
			return fmt.Errorf("archive: %w", err)
		}
	}
	return nil
}
