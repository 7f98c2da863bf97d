package main

import (
	"flag"
	"fmt"
	"time"
)

// optDuration is a duration flag that may be left unset, which differs from
// any duration given, 0 included. Unset, it shows no default in the usage:
// a sentinel such as -1ns would read as a real default.
type optDuration struct {
	set bool
	d   time.Duration
}

func (o *optDuration) String() string {
	if o == nil || !o.set {
		return ""
	}
	return o.d.String()
}

func (o *optDuration) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if d < 0 {
		return fmt.Errorf("a negative duration: %s", s)
	}
	o.set, o.d = true, d
	return nil
}

// parseFlags parses args with fs, taking flags before, between and after
// the positional arguments (`games export friday --out dir` as well as
// `games export --out dir friday`); after "--" every argument is
// positional. The positional arguments are fs.Args() in their order.
func parseFlags(fs *flag.FlagSet, args []string) error {
	var flags, positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			positional = append(positional, args[i+1:]...)
			i = len(args)
		case len(a) > 1 && a[0] == '-':
			flags = append(flags, a)
			name := a[1:]
			if name[0] == '-' {
				name = name[1:]
			}
			// A flag that is not boolean takes the next argument as its
			// value unless it has one after "=".
			if f := fs.Lookup(name); f != nil && !isBoolFlag(f) && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		default:
			positional = append(positional, a)
		}
	}
	if err := fs.Parse(flags); err != nil {
		return err
	}
	// The flags are set; this parse leaves the positional arguments in
	// fs.Args(), even those that start with "-".
	return fs.Parse(append([]string{"--"}, positional...))
}

// isBoolFlag tells a flag that takes no value, as the flag package does.
func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
