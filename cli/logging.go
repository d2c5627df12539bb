package cli

import (
	"fmt"
	"io"
	"log/slog"
)

// newLogger returns the process logger: text (the default, for people) or
// JSON (for log shippers and scripts) on w, and its level, which a reload
// may change.
func newLogger(w io.Writer, format, level string) (*slog.Logger, *slog.LevelVar, error) {
	lvl, err := parseLevel(level)
	if err != nil {
		return nil, nil, err
	}
	v := new(slog.LevelVar)
	v.Set(lvl)
	opts := &slog.HandlerOptions{Level: v}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), v, nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), v, nil
	default:
		return nil, nil, fmt.Errorf("--log-format (log.format) %q: want text or json", format)
	}
}

func parseLevel(level string) (slog.Level, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return lvl, fmt.Errorf("--log-level (log.level) %q: want debug, info, warn or error", level)
	}
	return lvl, nil
}
