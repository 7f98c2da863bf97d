package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mafiamail/mafiamail/cmd/mafiamail-bench/relay"
	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/internal/cli"
	"github.com/mafiamail/mafiamail/service"
)

// cmdChild is the subcommand the bench starts its systems
// with, so that the host and the relay each run in a process of their own,
// without the mail servers and the load driver whose memory and CPU would
// otherwise count as theirs:
//
//	mafiamail-bench child --stats FILE [--cpuprofile FILE [--profile-now]] serve --config FILE
//	mafiamail-bench child --stats FILE relay --config FILE
//
// serve is exactly `mafiamail serve --config FILE`; relay runs ./relay with the
// address, database and accounts of the same configuration file. On
// SIGUSR1 the process collects its garbage and writes its Go heap figures
// to FILE as JSON (childStats); nothing else differs from the plain
// command, and the reporting costs nothing between requests but a read of
// runtime/metrics every 20 ms for the peak of the heap in use.
func cmdChild(ctx context.Context, args []string, stderr io.Writer) error {
	fs := cli.Flags("child", stderr)
	statsPath := fs.String("stats", "", "write the heap figures to this file on SIGUSR1")
	cpuProfile := fs.String("cpuprofile", "", "on SIGUSR2 start a CPU profile into this file, on the next stop it")
	profileNow := fs.Bool("profile-now", false, "with --cpuprofile: start the profile at once, before the system starts")
	if err := fs.Parse(args); err != nil {
		return cli.Usage(err)
	}
	rest := fs.Args()
	if len(rest) == 0 || *statsPath == "" {
		return cli.Usagef("want --stats FILE and then serve or relay with its flags")
	}
	rep := startHeapReporter(*statsPath, *cpuProfile)
	defer rep.stop()
	if *profileNow {
		// Started here rather than by a signal: the bench cannot know
		// when the handler is in place, and the work to profile (a
		// backlog) begins as the system starts.
		if err := rep.toggleProfile(); err != nil {
			return err
		}
	}
	switch rest[0] {
	case "serve":
		return cmdServe(ctx, rest[1:], stderr)
	case "relay":
		return cmdRelay(ctx, rest[1:], stderr)
	default:
		return cli.Usagef("%q is neither serve nor relay", rest[0])
	}
}

// cmdServe runs the host on a configuration file exactly as `mafiamail
// serve --config FILE` does: both call service.Serve.
func cmdServe(ctx context.Context, args []string, stderr io.Writer) error {
	fs := cli.Flags("serve", stderr)
	cfgPath := fs.String("config", "mafiamail.toml", "configuration file")
	if err := fs.Parse(args); err != nil {
		return cli.Usage(err)
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	cli.TuneServerGC(os.Getenv)
	return service.Serve(ctx, cfg, cli.NewLogger(stderr, cfg.Log.Format, cfg.Log.Level))
}

// cmdRelay runs the bare relay on the accounts of a host's configuration.
func cmdRelay(ctx context.Context, args []string, stderr io.Writer) error {
	fs := cli.Flags("relay", stderr)
	cfgPath := fs.String("config", "mafiamail.toml", "configuration file (address, database, imap, smtp, log)")
	if err := fs.Parse(args); err != nil {
		return cli.Usage(err)
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	// The relay's collector works as the host's, so that the two compare
	// by the work they do, not by the setting.
	cli.TuneServerGC(os.Getenv)
	log := cli.NewLogger(stderr, cfg.Log.Format, cfg.Log.Level)
	r, err := relay.Open(ctx, relay.Config{Address: cfg.Address, Database: cfg.Database,
		IMAPURL: cfg.IMAP.URL, IMAPUser: cfg.IMAP.Username, IMAPPassword: cfg.IMAP.Password,
		SMTPURL: cfg.SMTP.URL, SMTPUser: cfg.SMTP.Username, SMTPPassword: cfg.SMTP.Password, Logger: log})
	if err != nil {
		return err
	}
	runErr := r.Run(ctx)
	if err := r.Close(); runErr == nil {
		runErr = err
	}
	return runErr
}

// childStats is what a bench child reports of its Go heap.
type childStats struct {
	// Seq counts the reports, so that the bench knows a fresh one.
	Seq int64 `json:"seq"`
	// LiveHeap is the heap in use right after a collection: what the
	// process keeps alive.
	LiveHeap uint64 `json:"live_heap"`
	// PeakHeapInUse is the largest heap in use (objects and the free
	// space of their spans) seen since the start, sampled every 20 ms.
	PeakHeapInUse uint64 `json:"peak_heap_in_use"`
	// Sys is the memory the Go runtime has taken from the system.
	Sys uint64 `json:"sys"`
}

type heapReporter struct {
	path string
	seq  int64
	// prof is the CPU profile's file, profile the open one while it runs.
	prof    string
	profile *os.File
	peak    atomic.Uint64
	sig     chan os.Signal
	prof2   chan os.Signal
	done    chan struct{}
	wg      sync.WaitGroup
}

func startHeapReporter(path, prof string) *heapReporter {
	r := &heapReporter{path: path, prof: prof, sig: make(chan os.Signal, 1), prof2: make(chan os.Signal, 1), done: make(chan struct{})}
	signal.Notify(r.sig, syscall.SIGUSR1)
	signal.Notify(r.prof2, syscall.SIGUSR2)
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(samples)
			if v := samples[0].Value.Uint64() + samples[1].Value.Uint64(); v > r.peak.Load() {
				r.peak.Store(v)
			}
			select {
			case <-r.done:
				return
			case <-r.sig:
				if err := r.write(); err != nil {
					fmt.Fprintf(os.Stderr, "mafiamail-bench child: %v\n", err)
				}
			case <-r.prof2:
				if err := r.toggleProfile(); err != nil {
					fmt.Fprintf(os.Stderr, "mafiamail-bench child: %v\n", err)
				}
			case <-t.C:
			}
		}
	}()
	return r
}

// write collects the garbage and replaces the stats file atomically.
func (r *heapReporter) write() error {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	r.seq++
	data, err := json.Marshal(childStats{Seq: r.seq, LiveHeap: ms.HeapAlloc, PeakHeapInUse: max(r.peak.Load(), ms.HeapInuse), Sys: ms.Sys})
	if err != nil {
		return fmt.Errorf("heap figures: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(r.path), filepath.Base(r.path)+".*")
	if err != nil {
		return fmt.Errorf("heap figures: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("heap figures: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("heap figures: %w", err)
	}
	if err := os.Rename(tmp.Name(), r.path); err != nil {
		return fmt.Errorf("heap figures: %w", err)
	}
	return nil
}

// toggleProfile starts the CPU profile, or stops it and closes its file.
func (r *heapReporter) toggleProfile() error {
	if r.prof == "" {
		return errors.New("SIGUSR2 without --cpuprofile")
	}
	if r.profile != nil {
		pprof.StopCPUProfile()
		err := r.profile.Close()
		r.profile = nil
		if err != nil {
			return fmt.Errorf("CPU profile: %w", err)
		}
		return nil
	}
	f, err := os.Create(r.prof)
	if err != nil {
		return fmt.Errorf("CPU profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("CPU profile: %w", err)
	}
	r.profile = f
	return nil
}

func (r *heapReporter) stop() {
	signal.Stop(r.sig)
	signal.Stop(r.prof2)
	close(r.done)
	r.wg.Wait()
	if r.profile != nil {
		_ = r.toggleProfile()
	}
}
