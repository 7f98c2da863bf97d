package host

import (
	"context"
	"fmt"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/store"
)

// endsGame reports whether a step's events end the game.
func endsGame(evs []engine.Event) bool {
	for _, e := range evs {
		if e.Type == engine.EvGameEnded {
			return true
		}
	}
	return false
}

// history reads a game's log up to seq, for the end mail's story.
func history(ctx context.Context, tx *store.Tx, game string, upTo int64) ([]compose.Logged, error) {
	stored, err := tx.Events(ctx, game, 0)
	if err != nil {
		return nil, fmt.Errorf("read the log of %s for its story: %w", game, err)
	}
	var out []compose.Logged
	for _, se := range stored {
		if se.Seq > upTo {
			break
		}
		e, err := engine.UnmarshalEvent(se.Payload)
		if err != nil {
			return nil, fmt.Errorf("read the log of %s for its story: event %d: %w", game, se.Seq, err)
		}
		out = append(out, compose.Logged{Seq: se.Seq, Event: e})
	}
	return out, nil
}
