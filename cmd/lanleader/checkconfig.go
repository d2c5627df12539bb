package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/lanleader/lanleader/config"
	"github.com/lanleader/lanleader/jobs"
)

func checkConfigCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("check-config", stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: lanleader check-config FILE\n\nValidates FILE and prints each job's next three run times.")
	}
	if err := parseFlags(fs, args, 1); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{err: errors.New("want exactly one config FILE")}
	}
	file, err := config.Load(fs.Arg(0))
	if err != nil {
		return configError{err}
	}
	s := defaultSettings()
	mergeFile(&s, file.Election, nil)
	if err := s.validate(); err != nil {
		return configError{describe(err, file, nil)}
	}

	fmt.Fprintf(stdout, "%s: ok (mode %s, %d jobs)\n", file.Path, s.Mode, len(file.Jobs))
	now := time.Now()
	for _, j := range file.Jobs {
		next, err := jobs.NextN(j.Schedule, now, 3)
		if err != nil {
			return configError{fmt.Errorf("%s: job %q: %w", file.Path, j.Name, err)}
		}
		times := make([]string, len(next))
		for i, t := range next {
			times[i] = t.Format("2006-01-02 15:04:05 MST")
		}
		fmt.Fprintf(stdout, "  %-20s %-22s next: %s\n", j.Name, j.Schedule, strings.Join(times, ", "))
	}
	return nil
}
