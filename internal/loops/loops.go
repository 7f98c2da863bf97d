// Package loops runs a process's long-lived loops side by side.
package loops

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// All runs every loop until ctx ends or one of them fails, which stops the
// others. A loop that ends because its context did is not a failure. It
// returns every failure, each named after its loop.
func All(ctx context.Context, loops map[string]func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, len(loops))
	for name, loop := range loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Once the context has ended, what a loop returns is how it
			// stopped, not a failure.
			if err := loop(ctx); err != nil && ctx.Err() == nil {
				errs <- fmt.Errorf("%s: %w", name, err)
				cancel()
			}
		}()
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return errors.Join(all...)
}
