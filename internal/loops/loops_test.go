package loops

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestAllStopsOnFailure(t *testing.T) {
	boom := errors.New("boom")
	err := All(context.Background(), map[string]func(context.Context) error{
		"fails":   func(context.Context) error { return boom },
		"waits":   func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() },
		"returns": func(context.Context) error { return nil },
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "fails: boom") {
		t.Fatalf("err %v", err)
	}
}

func TestAllEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err := All(ctx, map[string]func(context.Context) error{
		"a": func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() },
		"b": func(ctx context.Context) error { <-ctx.Done(); return nil },
	})
	if err != nil {
		t.Fatalf("an ended context is no failure: %v", err)
	}
}
